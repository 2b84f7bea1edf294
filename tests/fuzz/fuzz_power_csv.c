/* Fuzz the power CSV readers (statistics packets, raw samples), the marker
 * parser and the gated engine and power section behind them. Byte 0 picks
 * the form and the sync input; byte 1 where the input is split between two
 * feeds (parsers are incremental). */
#include "ergon/analyze.h"
#include "ergon/power_csv.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	int kind = (data[0] & 1) ? ERGON_POWER_CSV_RAW : ERGON_POWER_CSV_STATS;
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
	struct ergon_gated *g = NULL;
	ergon_err_clear(&err);
	if (ergon_gated_new(&cfg, &g, &err) == 0) {
		struct ergon_power_csv *p = NULL;
		struct ergon_power_sink sink;
		ergon_power_sink_gated(g, &sink);
		if (ergon_power_csv_new(kind, &sink, sync, "fuzz.csv", &p, &err) == 0) {
			if (ergon_power_csv_feed(p, text, cut, &err) == 0 &&
			    ergon_power_csv_feed(p, text + cut, len - cut, &err) == 0 &&
			    ergon_power_csv_end(p, &err) == 0) {
				const struct ergon_gated_result *res = NULL;
				json_t *sec = NULL;
				if (ergon_gated_finish(g, &res, &err) == 0 &&
				    ergon_power_section(res, 0.01, NULL, NULL, &sec, &err) == 0) {
					char *out = NULL;
					size_t n = 0;
					if (ergon_power_csv_render(sec, &out, &n, &err) == 0)
						free(out);
					if (ergon_power_table_render(sec, data[0] & 16, &out,
								     &err) == 0)
						free(out);
					json_decref(sec);
				}
			}
			ergon_power_csv_free(p);
		}
		ergon_gated_free(g);
	}
	free(mk);
	return 0;
}
