/* Fuzz the PPK2 calibration parser (GetMetadata answer): it must never
 * read past its buffer, must answer need-more only without an END line,
 * and every calibration it accepts must be usable (positive shunts,
 * finite values, a non-zero gain on every range). */
#include "drivers/instruments/ppk2/ppk2.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy so that ASan sees any read past the end. */
	char *buf = malloc(size ? size : 1);
	if (buf == NULL)
		return 0;
	if (size)
		memcpy(buf, data, size);
	struct ppk2_cal c;
	struct ergon_err err = {0};
	int rc = ppk2_meta_parse(buf, size, &c, "fuzz", &err);
	if (rc != 0 && rc != 1 && rc != ERGON_EPARSE && rc != ERGON_ETOOBIG)
		abort();
	if (rc < 0 && err.msg[0] == '\0')
		abort(); /* an error always says why */
	if (rc == 0) {
		for (unsigned r = 0; r < PPK2_RANGES; r++) {
			if (!(c.r[r] > 0) || !isfinite(c.r[r]) || !isfinite(c.gs[r]) ||
			    !isfinite(c.gi[r]) || !isfinite(c.o[r]) || !isfinite(c.s[r]) ||
			    !isfinite(c.i[r]) || c.ug[r] == 0 || !isfinite(c.ug[r]))
				abort();
			/* Any ADC value converts to a number (possibly huge
			 * for absurd gains, never a crash). */
			(void)ppk2_current_a(&c, r, 0x3fff, 3300);
		}
	}
	free(buf);
	return 0;
}
