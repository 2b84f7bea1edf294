/* UTF-8 repair: bytes that may not be UTF-8 made valid, as Python's
 * decode(errors='replace') does (every text field of an HPX stream goes
 * through it before it reaches an artifact). */
#include "ergon/utf8.h"

#include <stdbool.h>
#include <string.h>

size_t ergon_utf8_repair(const char *s, size_t n, char *out, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t len = 0;
		if (c < 0x80)
			len = 1;
		else if (c >= 0xc2 && c <= 0xdf)
			len = 2;
		else if (c >= 0xe0 && c <= 0xef)
			len = 3;
		else if (c >= 0xf0 && c <= 0xf4)
			len = 4;
		bool ok = len > 0 && i + len <= n;
		for (size_t k = 1; ok && k < len; k++)
			if (((unsigned char)s[i + k] & 0xc0) != 0x80)
				ok = false;
		if (ok && len == 3) {
			unsigned char c1 = (unsigned char)s[i + 1];
			if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0))
				ok = false;
		}
		if (ok && len == 4) {
			unsigned char c1 = (unsigned char)s[i + 1];
			if ((c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 >= 0x90))
				ok = false;
		}
		if (ok && c == 0)
			ok = false; /* NUL becomes U+FFFD too: C strings stay whole */
		const char *src = ok ? s + i : "\xef\xbf\xbd";
		size_t sl = ok ? len : 3;
		if (o + sl > cap)
			break; /* truncate on a character boundary */
		memcpy(out + o, src, sl);
		o += sl;
		i += ok ? len : 1;
	}
	return o;
}
