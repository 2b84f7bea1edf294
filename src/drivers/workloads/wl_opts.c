/* Option lookup and bounded number parsing for the workload drivers. */
#include "drivers/workloads/wl_opts.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Walk a ",k=v,k=v" list; call back per pair. Returns the last match of key. */
static const char *find_in_list(const char *list, const char *key, size_t *len_out)
{
	const char *hit = NULL;
	size_t klen = strlen(key);
	const char *p = list;
	while (p && *p) {
		if (*p == ',')
			p++;
		size_t plen = strcspn(p, ",");
		const char *eq = memchr(p, '=', plen);
		if (eq && (size_t)(eq - p) == klen && strncmp(p, key, klen) == 0) {
			hit = eq + 1;
			*len_out = plen - klen - 1;
		}
		p += plen;
	}
	return hit;
}

const char *ergon_wl_opt_find(const struct ergon_workload_options *opts, const char *suffix,
			      const char *key, size_t *len_out)
{
	const char *hit = find_in_list(suffix, key, len_out);
	size_t klen = strlen(key);
	if (opts && opts->kv) {
		for (const char *const *kv = opts->kv; *kv; kv++) {
			if (strncmp(*kv, key, klen) == 0 && (*kv)[klen] == '=') {
				hit = *kv + klen + 1;
				*len_out = strlen(hit);
			}
		}
	}
	return hit;
}

int ergon_wl_opt_u64(const struct ergon_workload_options *opts, const char *suffix,
		     const char *spec, const char *key, uint64_t min, uint64_t max, uint64_t def,
		     uint64_t *out, struct ergon_err *err)
{
	size_t len = 0;
	const char *v = ergon_wl_opt_find(opts, suffix, key, &len);
	*out = def;
	if (v == NULL)
		return 0;
	/* Digits only: strtoull would accept "-1", " 5" and "0x10". */
	uint64_t acc = 0;
	if (len == 0 || len > 20)
		goto bad;
	for (size_t i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '9')
			goto bad;
		uint64_t d = (uint64_t)(v[i] - '0');
		if (acc > (UINT64_MAX - d) / 10)
			goto range;
		acc = acc * 10 + d;
	}
	if (acc < min || acc > max)
		goto range;
	*out = acc;
	return 0;
bad:
	return ergon_err_set(err, ERGON_EUSAGE,
			     "--workload %s: %s=%.*s is not an unsigned decimal integer; "
			     "write e.g. %s=%llu",
			     spec, key, (int)(len > 64 ? 64 : len), v, key,
			     (unsigned long long)def);
range:
	return ergon_err_set(err, ERGON_ERANGE,
			     "--workload %s: %s=%.*s is out of range; use a value in [%llu, %llu]",
			     spec, key, (int)(len > 64 ? 64 : len), v, (unsigned long long)min,
			     (unsigned long long)max);
}

static int key_known(const char *p, size_t klen, const char *const *known)
{
	for (const char *const *k = known; *k; k++)
		if (strlen(*k) == klen && strncmp(*k, p, klen) == 0)
			return 1;
	return 0;
}

static int unknown_key(const char *spec, const char *p, size_t klen, const char *const *known,
		       struct ergon_err *err)
{
	char names[256] = "";
	size_t o = 0;
	for (const char *const *k = known; *k && o < sizeof(names) - 32; k++)
		o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s", o ? ", " : "", *k);
	return ergon_err_set(err, ERGON_EUSAGE,
			     "--workload %s: unknown option '%.*s'; valid options: %s", spec,
			     (int)(klen > 64 ? 64 : klen), p, o ? names : "(none)");
}

int ergon_wl_opt_check_keys(const struct ergon_workload_options *opts, const char *suffix,
			    const char *spec, const char *const *known, struct ergon_err *err)
{
	const char *p = suffix;
	while (p && *p) {
		if (*p == ',')
			p++;
		size_t plen = strcspn(p, ",");
		const char *eq = memchr(p, '=', plen);
		size_t klen = eq ? (size_t)(eq - p) : plen;
		if (eq == NULL || !key_known(p, klen, known))
			return unknown_key(spec, p, klen, known, err);
		p += plen;
	}
	if (opts && opts->kv) {
		for (const char *const *kv = opts->kv; *kv; kv++) {
			const char *eq = strchr(*kv, '=');
			size_t klen = eq ? (size_t)(eq - *kv) : strlen(*kv);
			if (eq == NULL || !key_known(*kv, klen, known))
				return unknown_key(spec, *kv, klen, known, err);
		}
	}
	return 0;
}

double ergon_wl_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double ergon_wl_coarse_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
