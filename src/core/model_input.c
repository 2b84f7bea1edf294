/* Deterministic model inputs and the output digest (include/ergon/model_input.h). */
#include "ergon/model_input.h"

#include <string.h>

int ergon_model_pattern(const char *kind, uint8_t *buf, size_t len, struct ergon_err *err)
{
	if (strcmp(kind, "zero") == 0) {
		memset(buf, 0, len);
		return 0;
	}
	if (strcmp(kind, "ramp") == 0) {
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)i;
		return 0;
	}
	if (strncmp(kind, "xs", 2) == 0 && kind[2] >= '1' && kind[2] <= '9') {
		uint32_t s = 0;
		const char *p = kind + 2;
		while (*p >= '0' && *p <= '9' && s < 100000000u)
			s = s * 10u + (uint32_t)(*p++ - '0');
		if (*p == '\0') {
			for (size_t i = 0; i < len; i++) {
				s ^= s << 13;
				s ^= s >> 17;
				s ^= s << 5;
				buf[i] = (uint8_t)(s >> 24);
			}
			return 0;
		}
	}
	return ergon_err_set(err, ERGON_EUSAGE,
			     "input pattern '%s': expected zero, ramp or xsN (N a positive "
			     "seed below 10^8)",
			     kind);
}

uint64_t ergon_model_fnv1a64(const uint8_t *p, size_t n)
{
	uint64_t h = 14695981039346656037u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211u;
	return h;
}
