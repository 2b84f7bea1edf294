/* A TFLite tensor shape as text (include/ergon/model_shape.h). */
#include "ergon/model_shape.h"

#include <stdio.h>

void ergon_model_shape_str(const struct ert_tfl_tensor *t, char *buf, size_t cap)
{
	size_t n = 0;
	if (cap == 0)
		return;
	buf[0] = '\0';
	n += (size_t)snprintf(buf + n, cap - n, "[");
	for (unsigned d = 0; d < t->n_dims && n < cap; d++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%d", d ? "," : "", (int)t->dims[d]);
	if (n < cap)
		snprintf(buf + n, cap - n, "]");
}
