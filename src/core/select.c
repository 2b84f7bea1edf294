/* ergon_select_kth: see include/ergon/select.h. */
#include "ergon/select.h"

#include <stddef.h>
#include <stdlib.h>

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double ergon_select_kth(double *a, size_t n, size_t k)
{
	ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, want = (ptrdiff_t)k - 1;
	for (int round = 0; lo < hi; round++) {
		if (round == 64) {
			qsort(a + lo, (size_t)(hi - lo + 1), sizeof(double), cmp_d);
			break;
		}
		ptrdiff_t mid = lo + (hi - lo) / 2;
		double x;
#define SWAP(i, j) (x = a[i], a[i] = a[j], a[j] = x)
		if (a[mid] < a[lo])
			SWAP(lo, mid);
		if (a[hi] < a[lo])
			SWAP(lo, hi);
		if (a[hi] < a[mid])
			SWAP(mid, hi);
		const double pivot = a[mid];
		ptrdiff_t i = lo, j = hi;
		while (i <= j) {
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i <= j) {
				SWAP(i, j);
				i++;
				j--;
			}
		}
#undef SWAP
		/* a[lo..j] <= pivot, a[i..hi] >= pivot, between them == pivot. */
		if (want <= j)
			hi = j;
		else if (want >= i)
			lo = i;
		else
			break;
	}
	return a[want];
}
