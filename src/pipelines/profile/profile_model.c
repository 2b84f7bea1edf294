/* `ergon profile MODEL.tflite`: what the outputs stage adds when the firmware
 * runs a real model (ergon_profile_opts.model): the model and its build
 * record, the correctness verdict (the firmware's output against the host
 * interpreter's on the same input) and, under QEMU, per-layer emulated
 * instruction counts derived from -icount, labelled as such. */
#include "ergon/fileio.h"
#include "ergon/issues.h"
#include "ergon/lifecycle.h"
#include "profile_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* HPX_<key>=<decimal> from the raw capture; 0 when absent. */
static int log_u64(const char *text, const char *key, unsigned long long *v)
{
	char pat[96];
	snprintf(pat, sizeof pat, "\n%s=", key);
	const char *p = strstr(text, pat);
	if (p == NULL)
		return 0;
	p += strlen(pat);
	char *end = NULL;
	unsigned long long x = strtoull(p, &end, 10);
	if (end == p || (*end != '\n' && *end != '\r'))
		return 0;
	*v = x;
	return 1;
}

static void correctness(struct prof_run *r, json_t *art, const json_t *model, json_t *pmu_stage)
{
	const char *log = json_string_value(json_object_get(pmu_stage, "log"));
	char *text = NULL;
	size_t len = 0;
	struct ergon_err e = {0};
	unsigned long long bytes = 0, fnv = 0;
	int have = log != NULL && ergon_file_read_all(log, 64u << 20, &text, &len, &e) == 0 &&
		   log_u64(text, "HPX_MODEL_OUTPUT_BYTES", &bytes) &&
		   log_u64(text, "HPX_MODEL_OUTPUT_FNV1A64", &fnv);
	free(text);
	const json_t *host = json_object_get(model, "host_output");
	json_int_t hbytes = json_integer_value(json_object_get(host, "bytes"));
	const char *hfnv = json_string_value(json_object_get(host, "fnv1a64"));
	char tfnv[24];
	snprintf(tfnv, sizeof tfnv, "%016llx", fnv);
	json_t *c = json_object();
	json_object_set_new(
	    c, "method",
	    json_string("output 0 of the firmware's first inference on the embedded "
			"input, against ergon's host interpreter on the same input: "
			"byte count and FNV-1a 64 of the bytes"));
	json_object_set_new(c, "input", json_deep_copy(json_object_get(model, "input")));
	json_object_set(c, "host", (json_t *)host);
	if (!have) {
		json_object_set_new(c, "target", json_null());
		json_object_set_new(c, "bit_exact", json_null());
		ergon_issue_add(r->issues, "profile.model_output_missing",
				json_pack("{s:s?}", "log", log),
				"the capture %s holds no HPX_MODEL_OUTPUT_BYTES / _FNV1A64: the "
				"on-target output was not checked against the host; rebuild the "
				"firmware with ergon profile MODEL.tflite",
				log ? log : "(none)");
	} else {
		int same = hfnv != NULL && (json_int_t)bytes == hbytes && strcmp(hfnv, tfnv) == 0;
		json_object_set_new(
		    c, "target",
		    json_pack("{s:I,s:s}", "bytes", (json_int_t)bytes, "fnv1a64", tfnv));
		json_object_set_new(c, "bit_exact", json_boolean(same));
		if (!same)
			ergon_issue_add(
			    r->issues, "profile.model_output_mismatch",
			    json_pack("{s:I,s:s,s:I,s:s?}", "target_bytes", (json_int_t)bytes,
				      "target_fnv1a64", tfnv, "host_bytes", hbytes, "host_fnv1a64",
				      hfnv),
			    "the firmware's output (%llu bytes, FNV-1a %s) differs from "
			    "the host interpreter's (%lld bytes, %s) on the same input: "
			    "the two builds of the interpreter disagree",
			    bytes, tfnv, (long long)hbytes, hfnv ? hfnv : "?");
	}
	json_object_set_new(art, "correctness", c);
}

/* window_us of QEMU's SysTick clock -> emulated instructions. */
static void emulated_instructions(struct prof_run *r, json_t *profile)
{
	json_t *layers = json_object_get(profile, "layers");
	if (!json_is_array(layers))
		return;
	const double per_us = 1000.0 / (double)(1u << ERGON_QEMU_ICOUNT_SHIFT);
	double total = 0;
	size_t i;
	json_t *L;
	json_array_foreach(layers, i, L)
	{
		const json_t *w = json_object_get(json_object_get(L, "counters"), "window_us");
		if (!json_is_number(w))
			continue;
		double n = json_number_value(w) * per_us;
		json_object_set_new(L, "pmu.emulated_instruction_count",
				    json_integer((json_int_t)n));
		total += n;
	}
	char note[400];
	/* The core: the board's SoC name up to its " (QEMU ...)". */
	const char *soc = r->o->cfg->board->soc;
	snprintf(note, sizeof note,
		 "QEMU -icount shift=%d: every emulated instruction advances virtual time by %u "
		 "ns, so a layer's window of T us (the firmware's SysTick clock) is T x %.1f "
		 "emulated instructions, +/- %.1f (the clock's 1 us step); includes the layer "
		 "hooks. Emulated instructions, not %.*s cycles.",
		 ERGON_QEMU_ICOUNT_SHIFT, 1u << ERGON_QEMU_ICOUNT_SHIFT, per_us, per_us,
		 (int)strcspn(soc, " ("), soc);
	json_object_set_new(profile, "emulated_instruction_count",
			    json_pack("{s:s,s:f,s:f,s:I,s:s}", "label",
				      "pmu.emulated_instruction_count", "per_window_us", per_us,
				      "resolution_instructions", per_us, "total_per_inference",
				      (json_int_t)total, "basis", note));
	ergon_issue_add(r->issues, "profile.emulated_instructions",
			json_pack("{s:i}", "icount_shift", ERGON_QEMU_ICOUNT_SHIFT), "%s", note);
}

void prof_model_annotate(struct prof_run *r, json_t *art, json_t *profile, json_t *pmu_stage)
{
	const json_t *model = r->o->model;
	if (model == NULL)
		return;
	json_t *copy = json_deep_copy(model);
	/* The power build ergon made again with the marker plan's mask
	 * replaces the first one (the image the power stage flashed). */
	json_t *b;
	size_t i;
	json_array_foreach(json_object_get(copy, "builds"), i, b)
	{
		const char *kind = json_string_value(json_object_get(b, "kind"));
		if (r->power_build != NULL && kind != NULL && strcmp(kind, "power") == 0) {
			json_array_set(json_object_get(copy, "builds"), i, r->power_build);
			break;
		}
	}
	json_object_set_new(art, "model", copy);
	if (strcmp(json_string_value(json_object_get(pmu_stage, "status")), "ok") != 0)
		return;
	correctness(r, art, model, pmu_stage);
	if (r->o->cfg->target.lifecycle == ERGON_LIFECYCLE_QEMU && profile != NULL)
		emulated_instructions(r, profile);
}
