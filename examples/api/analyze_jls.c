/* Analyze a JLS recording with libergon (docs/API.md, example 2).
 *
 *   analyze_jls RECORDING.jls OUT_DIR [GPI_INDEX]
 *
 * The recording (a Joulescope JLS file: current, voltage, power and the
 * digital inputs) goes through the gated engine with the gate on input
 * GPI_INDEX (default 0): every gate window of at least 1 s is a measured
 * window. ergon writes OUT_DIR/summary.json (provenance "replayed": the
 * figures are an analysis of a recording) and hands back the power
 * section's figures, typed. */
#include <ergon/ergon.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: analyze_jls RECORDING.jls OUT_DIR [GPI_INDEX]\n");
		return 2;
	}
	struct ergon_analyze_options o = {
	    .jls_path = argv[1],
	    .out_dir = argv[2],
	    .sync_input_index = argc == 4 ? (unsigned)strtoul(argv[3], NULL, 10) : 0,
	    .force = 1, /* replace an earlier analysis in OUT_DIR */
	};
	struct ergon_power_summary p;
	struct ergon_err err = {0};
	int rc = ergon_analyze_run(&o, 0, NULL, &p, NULL, &err);
	if (rc != 0) {
		fprintf(stderr, "analyze_jls: %s\n", err.msg);
		return 1;
	}
	printf("integrity %s\n", ergon_integrity_name(p.integrity));
	printf("gated_window_count %u\n", p.gated_window_count);
	printf("gated_duration_s %.17g\n", p.gated_duration_s);
	printf("energy_j %.17g\n", p.energy_j);
	printf("charge_c %.17g\n", p.charge_c);
	printf("avg_current_a %.17g\n", p.avg_current_a);
	printf("avg_power_w %.17g\n", p.avg_power_w);
	/* A recording alone says nothing of how many inferences ran in the
	 * window: without firmware facts the per-inference figures are
	 * withheld, not guessed. */
	printf("per_inference %s\n", p.per_inference_omitted ? "withheld" : "published");
	return 0;
}
