/* The power stage's glue from the target's bytes to the power section:
 * HPX parser -> terminal record -> firmware facts -> ergon_power_section
 * (internal mode, as `ergon profile` runs it for an INA228 record), and
 * the external-mode facts. Any input must end in an answer, never a crash
 * or a leak. */
#include "ergon/analyze.h"
#include "ergon/gated.h"
#include "ergon/hpx.h"
#include "pipelines/profile_internal.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int internal = 0; internal < 2; internal++) {
		struct ergon_err err = {0};
		struct ergon_hpx_parser *p = NULL;
		if (ergon_hpx_parser_new(NULL, &p, &err) != 0)
			return 0;
		if (ergon_hpx_parser_feed(p, data, size, &err) >= 0 &&
		    ergon_hpx_parser_finish(p, &err) >= 0) {
			struct ergon_power_facts f;
			json_t *term = NULL, *sec = NULL;
			if (prof_terminal_facts(p, internal ? 0.0 : 1000.0, internal, internal, &f,
						&term, &err) == 0 &&
			    internal)
				ergon_power_section(NULL, 1.0, &f, NULL, &sec, &err);
			json_decref(sec);
			json_decref(term);
		}
		ergon_hpx_parser_free(p);
	}
	return 0;
}
