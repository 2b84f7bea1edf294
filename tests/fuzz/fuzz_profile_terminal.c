/* The power stage's glue from the target's bytes to the power section:
 * HPX parser -> terminal record -> firmware facts -> ergon_power_section
 * (internal mode, as `ergon profile` runs it for an INA228 record), and
 * the external-mode facts. Any input must end in an answer, never a crash
 * or a leak.
 * Property: split-feed equivalence. The parser is incremental, so the bytes
 * fed in two pieces (cut where byte 0 says) must give the same outcome, the
 * same terminal record and the same power section (canonical JSON text) as
 * the bytes fed whole. */
#include "ergon/analyze.h"
#include "ergon/gated.h"
#include "ergon/hpx.h"
#include "fuzz_props.h"
#include "pipelines/profile/profile_internal.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct outcome {
	int stage;	  /* 0 parser, 1 parsed, 2 facts */
	char *term, *sec; /* canonical JSON (sorted keys), NULL when absent */
};

static void run(const uint8_t *data, size_t size, size_t cut, int internal, struct outcome *o)
{
	struct ergon_err err = {0};
	struct ergon_hpx_parser *p = NULL;
	o->stage = 0;
	o->term = o->sec = NULL;
	if (ergon_hpx_parser_new(NULL, &p, &err) != 0)
		return;
	if (ergon_hpx_parser_feed(p, data, cut, &err) >= 0 &&
	    ergon_hpx_parser_feed(p, data + cut, size - cut, &err) >= 0 &&
	    ergon_hpx_parser_finish(p, &err) >= 0) {
		o->stage = 1;
		struct ergon_power_facts f;
		json_t *term = NULL, *sec = NULL;
		if (prof_terminal_facts(p, internal ? 0.0 : 1000.0, internal, internal, &f, &term,
					&err) == 0) {
			o->stage = 2;
			if (internal)
				ergon_power_section(NULL, 1.0, &f, NULL, &sec, &err);
		}
		if (term != NULL)
			o->term = json_dumps(term, JSON_SORT_KEYS | JSON_COMPACT);
		if (sec != NULL)
			o->sec = json_dumps(sec, JSON_SORT_KEYS | JSON_COMPACT);
		json_decref(sec);
		json_decref(term);
	}
	ergon_hpx_parser_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t cut = size ? data[0] % (size + 1) : 0;
	for (int internal = 0; internal < 2; internal++) {
		struct outcome whole, split;
		run(data, size, size, internal, &whole);
		run(data, size, cut, internal, &split);
		FUZZ_REQUIRE(whole.stage == split.stage);
		FUZZ_REQUIRE(fuzz_same_text(whole.term, split.term));
		FUZZ_REQUIRE(fuzz_same_text(whole.sec, split.sec));
		free(whole.term);
		free(whole.sec);
		free(split.term);
		free(split.sec);
	}
	return 0;
}
