/* The JSON path helpers every pipeline that reads an artifact shares
 * (common.h): a number or an array at a dotted path ("series.samples.t_s",
 * "rails[2].name"), and the JSON of a double (null for NaN/Inf). */
#include "pipelines/common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

json_t *ergon_jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* Resolve a dotted path ("series.samples.t_s"). */
const json_t *ergon_jpath(const json_t *root, const char *path)
{
	char key[128];
	const json_t *cur = root;
	while (cur && *path) {
		size_t l = strcspn(path, ".");
		if (l >= sizeof(key))
			return NULL;
		memcpy(key, path, l);
		key[l] = '\0';
		/* "rails[2]": the object member, then the array entry. */
		char *br = strchr(key, '[');
		if (br && l > 0 && key[l - 1] == ']') {
			char *end = NULL;
			*br = '\0';
			unsigned long idx = strtoul(br + 1, &end, 10);
			if (end != key + l - 1 || end == br + 1)
				return NULL;
			cur = json_array_get(json_object_get(cur, key), (size_t)idx);
		} else {
			cur = json_object_get(cur, key);
		}
		path += l + (path[l] == '.');
	}
	return cur;
}

int ergon_jnumber(const json_t *root, const char *path, double *out, struct ergon_err *err)
{
	const json_t *v = ergon_jpath(root, path);
	if (!json_is_number(v))
		return ergon_err_set(
		    err, ERGON_EVERIFY,
		    "field %s: missing or not a number; the report is incomplete or "
		    "was edited",
		    path);
	*out = json_number_value(v);
	return 0;
}

int ergon_jarray(const json_t *root, const char *path, double **out, size_t *n,
		 struct ergon_err *err)
{
	*out = NULL;
	*n = 0;
	const json_t *a = ergon_jpath(root, path);
	if (!json_is_array(a))
		return ergon_err_set(err, ERGON_EVERIFY, "field %s: missing or not an array", path);
	size_t len = json_array_size(a);
	double *d = malloc((len ? len : 1) * sizeof(double));
	if (d == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "field %s: out of memory", path);
	for (size_t i = 0; i < len; i++) {
		const json_t *x = json_array_get(a, i);
		if (json_is_number(x)) {
			d[i] = json_number_value(x);
		} else if (json_is_null(x)) {
			d[i] = NAN; /* a reading without this field */
		} else {
			free(d);
			return ergon_err_set(err, ERGON_EVERIFY, "field %s[%zu]: not a number",
					     path, i);
		}
	}
	*out = d;
	*n = len;
	return 0;
}

json_t *ergon_darray(const double *v, size_t n, size_t stride_keep, size_t total)
{
	json_t *a = json_array();
	if (a == NULL)
		return NULL;
	(void)total;
	for (size_t i = 0; i < n; i += stride_keep ? stride_keep : 1)
		json_array_append_new(a, ergon_jnum(v[i]));
	return a;
}
