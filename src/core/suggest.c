/* Nearest-name suggestions (include/ergon/suggest.h). */
#include "ergon/suggest.h"

#include <string.h>

unsigned ergon_edit_distance(const char *a, const char *b)
{
	/* Two rows of the Wagner-Fischer table; names are short, longer inputs
	 * are compared on their first 63 bytes. */
	unsigned prev[64], cur[64];
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63)
		la = 63;
	if (lb > 63)
		lb = 63;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned del = prev[j] + 1, ins = cur[j - 1] + 1;
			unsigned sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			unsigned m = del < ins ? del : ins;
			cur[j] = m < sub ? m : sub;
		}
		memcpy(prev, cur, sizeof(unsigned) * (lb + 1));
	}
	return prev[lb] > 255 ? 255 : prev[lb];
}

const char *ergon_suggest_nearest(const char *name, const char *const *cands, size_t n)
{
	unsigned best = 256;
	const char *hit = NULL;
	for (size_t i = 0; i < n; i++) {
		if (cands[i] == NULL || cands[i][0] == '\0')
			continue;
		unsigned d = ergon_edit_distance(name, cands[i]);
		if (d < best) {
			best = d;
			hit = cands[i];
		}
	}
	/* Only a plausible typo is suggested: at most a third of the name
	 * (and at least 2 edits) away. */
	size_t len = strlen(name);
	unsigned limit = (unsigned)(len / 3 > 2 ? len / 3 : 2);
	return hit && best <= limit ? hit : NULL;
}

const char *ergon_suggest_nearest_list(const char *name, const char *const *cands)
{
	size_t n = 0;
	while (cands && cands[n])
		n++;
	return ergon_suggest_nearest(name, cands, n);
}
