/* Fuzz the power CSV readers (statistics packets, raw samples), the marker
 * parser and the gated engine and power section behind them. Byte 0 picks
 * the form and the sync input; byte 1 where the input is split between two
 * feeds (parsers are incremental).
 * Properties: split-feed equivalence (the input fed in two pieces gives the
 * same outcome and byte-identical rendered CSV and table as the input fed
 * whole), and the gated result's invariants (fuzz_props.h). */
#include "ergon/analyze.h"
#include "ergon/power_csv.h"
#include "fuzz_props.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* What one pass over the input produced. */
struct outcome {
	int stage; /* how far it got: 0 engine, 1 parsed, 2 finished, 3 rendered */
	char *csv, *table;
};

static void run(const uint8_t *data, const char *text, size_t len, size_t cut,
		const struct ergon_gated_config *cfg, struct outcome *o)
{
	int kind = (data[0] & 1) ? ERGON_POWER_CSV_RAW : ERGON_POWER_CSV_STATS;
	struct ergon_err err = {0};
	struct ergon_gated *g = NULL;
	o->stage = 0;
	o->csv = o->table = NULL;
	if (ergon_gated_new(cfg, &g, &err) != 0)
		return;
	struct ergon_power_csv *p = NULL;
	struct ergon_power_sink sink;
	ergon_power_sink_gated(g, &sink);
	if (ergon_power_csv_new(kind, &sink, cfg->sync_input_index, "fuzz.csv", &p, &err) == 0) {
		if (ergon_power_csv_feed(p, text, cut, &err) == 0 &&
		    ergon_power_csv_feed(p, text + cut, len - cut, &err) == 0 &&
		    ergon_power_csv_end(p, &err) == 0) {
			o->stage = 1;
			const struct ergon_gated_result *res = NULL;
			json_t *sec = NULL;
			if (ergon_gated_finish(g, &res, &err) == 0) {
				o->stage = 2;
				/* Only the raw reader feeds raw samples (it may not
				 * have begun: no rate without two sample rows). */
				FUZZ_REQUIRE(!res->raw || kind == ERGON_POWER_CSV_RAW);
				fuzz_check_gated_result(res);
			}
			if (o->stage == 2 &&
			    ergon_power_section(res, 0.01, NULL, NULL, &sec, &err) == 0) {
				o->stage = 3;
				size_t n = 0;
				if (ergon_power_csv_render(sec, &o->csv, &n, &err) != 0)
					o->csv = NULL;
				if (ergon_power_table_render(sec, data[0] & 16, &o->table, &err) !=
				    0)
					o->table = NULL;
				json_decref(sec);
			}
		}
		ergon_power_csv_free(p);
	}
	ergon_gated_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	unsigned sync = (data[0] >> 1) & 3u;
	const char *text = (const char *)data + 2;
	size_t len = size - 2;
	size_t cut = len ? data[1] % (len + 1) : 0;
	struct ergon_err err = {0};

	struct ergon_gate_marker *mk = NULL;
	size_t nmk = 0;
	(void)ergon_gate_markers_parse(text, len, "fuzz", &mk, &nmk, &err);

	struct ergon_gated_config cfg = {.stats_rate_hz = 100,
					 .min_window_s = 0.01,
					 .sync_input_index = sync,
					 .markers = (data[0] & 8) ? mk : NULL,
					 .marker_count = (data[0] & 8) ? nmk : 0};
	struct outcome split, whole;
	run(data, text, len, cut, &cfg, &split);
	run(data, text, len, len, &cfg, &whole);
	FUZZ_REQUIRE(split.stage == whole.stage);
	FUZZ_REQUIRE(fuzz_same_text(split.csv, whole.csv));
	FUZZ_REQUIRE(fuzz_same_text(split.table, whole.table));
	free(split.csv);
	free(split.table);
	free(whole.csv);
	free(whole.table);
	free(mk);
	return 0;
}
