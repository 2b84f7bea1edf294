/* Fuzz the sysfs integer parser that every hwmon, RAPL and thermal reading
 * goes through, and check it against a reference: a value it accepts must
 * print back to the same digits. */
#include "drivers/instruments/sysfs/sysfs.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int64_t v = 0;
	size_t stop = 0;
	int rc = ergon_sysfs_parse_i64((const char *)data, size, &v, &stop);
	if (stop > size)
		abort();
	if (rc != 0)
		return 0;
	/* Accepted: optional '-', digits, then only whitespace. Print the
	 * value and compare with the digits after stripping leading zeros. */
	const char *s = (const char *)data;
	size_t i = 0, end;
	int neg = 0;
	if (i < size && s[i] == '-') {
		neg = 1;
		i++;
	}
	while (i + 1 < size && s[i] == '0' && s[i + 1] >= '0' && s[i + 1] <= '9')
		i++;
	end = i;
	while (end < size && s[end] >= '0' && s[end] <= '9')
		end++;
	char want[64], got[64];
	if (end - i > 40)
		abort();
	int zero = end - i == 1 && s[i] == '0';
	snprintf(want, sizeof(want), "%s%.*s", neg && !zero ? "-" : "", (int)(end - i), s + i);
	snprintf(got, sizeof(got), "%" PRId64, v);
	if (strcmp(want, got) != 0)
		abort();
	return 0;
}
