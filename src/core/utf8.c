/* UTF-8 repair: bytes that may not be UTF-8 made valid, as Python's
 * decode(errors='replace') does (every text field of an HPX stream goes
 * through it before it reaches an artifact). */
#include "ergon/utf8.h"

#include <stdbool.h>
#include <string.h>

size_t ergon_utf8_len(const char *s, size_t n)
{
	unsigned char c = (unsigned char)s[0];
	size_t len = 0;
	if (c < 0x80)
		return 1;
	else if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	if (len == 0 || len > n)
		return 0;
	for (size_t k = 1; k < len; k++)
		if (((unsigned char)s[k] & 0xc0) != 0x80)
			return 0;
	unsigned char c1 = (unsigned char)s[1];
	if (len == 3 && ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0)))
		return 0; /* overlong, or a surrogate */
	if (len == 4 && ((c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 >= 0x90)))
		return 0; /* overlong, or above U+10FFFF */
	return len;
}

size_t ergon_utf8_repair(const char *s, size_t n, char *out, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		size_t len = ergon_utf8_len(s + i, n - i);
		/* NUL becomes U+FFFD too: C strings stay whole */
		bool ok = len > 0 && s[i] != '\0';
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

void ergon_utf8_escape(const char *s, char *out, size_t cap)
{
	size_t o = 0, n = strlen(s);
	if (cap == 0)
		return;
	for (size_t i = 0; i < n;) {
		size_t len = ergon_utf8_len(s + i, n - i);
		char esc[5];
		const char *src = s + i;
		size_t sl = len;
		if (len == 0) {
			static const char hex[] = "0123456789abcdef";
			unsigned char c = (unsigned char)s[i];
			esc[0] = '\\';
			esc[1] = 'x';
			esc[2] = hex[c >> 4];
			esc[3] = hex[c & 15];
			src = esc;
			sl = 4;
		}
		if (o + sl + 1 > cap)
			break; /* cut on a character boundary */
		memcpy(out + o, src, sl);
		o += sl;
		i += len ? len : 1;
	}
	out[o] = '\0';
}
