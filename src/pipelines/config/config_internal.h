/* Private to src/pipelines/config: the key table and the typed scalar
 * parser shared by the YAML loader, --set and the rules. */
#ifndef ERGON_CONFIG_INTERNAL_H
#define ERGON_CONFIG_INTERNAL_H

#include "ergon/config.h"

enum cfg_ktype {
	KT_BOOL = 1,	/* int 0/1 */
	KT_TRIBOOL = 2, /* int -1 (null/auto), 0, 1 */
	KT_UINT = 3,	/* uint64_t */
	KT_DOUBLE = 4,	/* double */
	KT_ODOUBLE = 5, /* double, NaN = null/auto */
	KT_ENUM = 6,	/* int index into enums */
	KT_STRING = 7,	/* char[size] */
};

struct cfg_key {
	const char *name;
	enum cfg_ktype type;
	size_t off;
	size_t size; /* KT_STRING: buffer size */
	uint64_t umin, umax;
	double dmin, dmax;
	const char *const *enums; /* KT_ENUM values; KT_STRING: allowed values or NULL */
	const uint64_t *allowed;  /* KT_UINT: allowed values (0-terminated) or NULL */
	int hex;		  /* KT_UINT printed as hex */
	const char *def;	  /* default, in the same syntax as the file */
};

extern const struct cfg_key ergon_cfg_keys[];
extern const size_t ergon_cfg_nkeys;

/* Parse text for key i and store it with origin and where. quoted: the
 * YAML scalar was quoted (then it is a string: never null, bool or number). */
int ergon_cfg_apply(struct ergon_config *cfg, size_t i, const char *text, int quoted, int origin,
		    const char *where, struct ergon_err *err);

/* Write "nearest valid name" for name among the candidates (n of them),
 * as " (did you mean 'x'?)"; empty when none is close. */
void ergon_cfg_suggest(const char *name, const char *const *cands, size_t n, char *buf, size_t cap);

#endif
