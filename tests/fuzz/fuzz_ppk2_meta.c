/* Fuzz the PPK2 calibration parser (GetMetadata answer): it must never
 * read past its buffer, must answer need-more only without an END line,
 * and every calibration it accepts must be usable: positive shunts of at
 * least 1e-6 ohm, every value within +-1e12, a non-zero gain on every
 * range, the app's default on every key it flags as defaulted, and a
 * finite current for every ADC value at the rail voltages the driver
 * allows (800..5000 mV). An error always says why. */
#include "drivers/instruments/ppk2/ppk2.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_value(double v)
{
	if (!isfinite(v) || fabs(v) > 1e12)
		abort();
}

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
			if (!(c.r[r] >= 1e-6) || c.ug[r] == 0 || (c.gs[r] == 0 && c.gi[r] == 0))
				abort();
			check_value(c.r[r]);
			check_value(c.gs[r]);
			check_value(c.gi[r]);
			check_value(c.o[r]);
			check_value(c.s[r]);
			check_value(c.i[r]);
			check_value(c.ug[r]);
			/* A flagged key holds the app's default. */
			if ((c.defaulted & PPK2_CAL_BIT(PPK2_CAL_R, r)) &&
			    c.r[r] != ppk2_default_r_ohm[r])
				abort();
			if (((c.defaulted & PPK2_CAL_BIT(PPK2_CAL_GS, r)) && c.gs[r] != 1) ||
			    ((c.defaulted & PPK2_CAL_BIT(PPK2_CAL_GI, r)) && c.gi[r] != 1) ||
			    ((c.defaulted & PPK2_CAL_BIT(PPK2_CAL_UG, r)) && c.ug[r] != 1) ||
			    ((c.defaulted & PPK2_CAL_BIT(PPK2_CAL_O, r)) && c.o[r] != 0) ||
			    ((c.defaulted & PPK2_CAL_BIT(PPK2_CAL_S, r)) && c.s[r] != 0) ||
			    ((c.defaulted & PPK2_CAL_BIT(PPK2_CAL_I, r)) && c.i[r] != 0))
				abort();
			if (!!(c.r_defaulted & (1u << r)) !=
			    !!(c.defaulted & PPK2_CAL_BIT(PPK2_CAL_R, r)))
				abort();
			/* Any ADC value converts to a finite current. */
			static const unsigned adc[] = {0, 1, 4096, 8191, 16383};
			for (size_t k = 0; k < sizeof(adc) / sizeof(adc[0]); k++)
				if (!isfinite(ppk2_current_a(&c, r, adc[k], 800)) ||
				    !isfinite(ppk2_current_a(&c, r, adc[k], 5000)))
					abort();
		}
		if (c.have_ia)
			check_value(c.ia);
		char names[256];
		size_t n = ppk2_cal_key_names(c.defaulted, names, sizeof(names));
		if (n != strlen(names) || (c.defaulted != 0) != (n != 0))
			abort();
	}
	free(buf);
	return 0;
}
