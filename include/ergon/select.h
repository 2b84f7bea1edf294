/* Exact order statistics without a sort: the k-th smallest of an array of
 * doubles (a nearest-rank percentile is the k-th smallest for its rank),
 * in expected linear time. */
#ifndef ERGON_SELECT_H
#define ERGON_SELECT_H

#include "ergon/error.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The k-th smallest (1 <= k <= n) of a[0..n), none of them NaN: the value
 * sorted[k-1] would hold. Reorders a (the caller owns it) so that
 * a[0..k-1) <= a[k-1] <= a[k..n); a later call for a rank j <= k may then
 * work on a[0..k) alone. Quickselect with median-of-three pivots; after
 * 64 partition rounds the rest is sorted, so no input makes it quadratic.
 * -0 and +0 compare equal: either may be returned for a zero. */
ERGON_API double ergon_select_kth(double *a, size_t n, size_t k);

#ifdef __cplusplus
}
#endif
#endif
