/* The layer-marker line of a model power image, observed (issue 33): the
 * power firmware ergon builds from kws_ref_model.tflite
 * (ergon_model_fw_build_power, the path `ergon profile MODEL --power`
 * takes) runs under qemu-system-arm with QEMU's trace event for the FPGAIO
 * (-d trace:mps2_fpgaio_write), which logs every write of the LED register
 * ("MPS2 FPGAIO write: offset 0x0 data 0x3 size 4"). The gate is LED0 (bit 0, GPIO pin 1, the
 * ports' hal.gpio.gate), the marker LED1 (bit 1, pin 2, hal.gpio.marker). From the writes alone
 * this test decodes the gate's rises and falls and the marker's toggles, and checks them against
 * counts made by hand:
 *   - one gate window; the marker low when the gate rises, no toggle
 *     outside the gate (the warm-up inference is unmarked);
 *   - inside it, iterations x S + 1 toggles: the model main's fixed window
 *     runs 5 inferences (target/port/common/model_main.c), kws_ref_model
 *     has 13 operators (TFLite's own listing, test_model_qemu_an505.sh), S
 *     is the number of those 13 layers the mask marks (all 13 for no mask),
 *     and the window ends with one more toggle (ert_marker_disarm).
 * QEMU's log orders the writes but carries no guest time, so the count per
 * inference is the window's count over its 5 identical inferences.
 * Masks: none (every layer: 5 x 13 + 1 = 66); layers 0, 3, 4, 9, 12 plus
 * layer 200, which the 13-layer model lacks (5 x 5 + 1 = 26); layer 200
 * alone, a mask that marks none of the model's layers (0 x 5 + 1 = 1); and
 * all of word 7 (layers 224..255) with layer 1 (5 x 1 + 1 = 6). Each on
 * both emulated ports: qemu-an547 (mps3-an547) and qemu-an505 (mps2-an505).
 * The build record's compile command and its "marker" must carry the mask.
 * Needs arm-none-eabi-gcc and qemu-system-arm (bootstrap.sh): fails without
 * them. */
#include "ergon/lifecycle.h"
#include "ergon/model.h"
#include "ergon/model_fw.h"
#include "test_support.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KWS_LAYERS 13  /* kws_ref_model.tflite's operators */
#define WINDOW_ITERS 5 /* the model main's power window */

struct decoded {
	int writes, gate_rises, gate_falls;
	int toggles_in_gate, toggles_outside;
	int marker_high_at_rise;
};

/* The LED register's writes, in order, into d. */
static void decode(const char *log, struct decoded *d)
{
	memset(d, 0, sizeof *d);
	unsigned prev = 0;
	const char *p = log;
	while ((p = strstr(p, "FPGAIO write: offset 0x")) != NULL) {
		char *end = NULL;
		unsigned long off = strtoul(p + strlen("FPGAIO write: offset 0x"), &end, 16);
		p = end;
		const char *dp = strstr(p, "data 0x");
		assert_non_null(dp);
		unsigned long v = strtoul(dp + 7, &end, 16);
		p = end;
		if (off != 0) /* another FPGAIO register */
			continue;
		d->writes++;
		unsigned gate = (unsigned)v & 1u, mark = ((unsigned)v >> 1) & 1u;
		unsigned pg = prev & 1u, pm = (prev >> 1) & 1u;
		if (gate && !pg) {
			d->gate_rises++;
			d->marker_high_at_rise |= mark != 0;
		}
		if (!gate && pg)
			d->gate_falls++;
		if (mark != pm) {
			/* A toggle in the same write as a gate edge counts with
			 * the gate's state before it: the firmware never does so. */
			if (pg || gate)
				d->toggles_in_gate++;
			else
				d->toggles_outside++;
		}
		prev = (unsigned)v;
	}
}

static int popcount_below(const uint32_t *mask, unsigned n)
{
	int c = 0;
	for (unsigned i = 0; i < n; i++)
		c += (int)((mask[i / 32] >> (i % 32)) & 1u);
	return c;
}

struct board {
	const char *name, *machine, *port;
};

static void run_case(const char *dir, const char *model_path, const struct board *b,
		     const char *tag, const uint32_t *mask)
{
	char fw[600], log[700], trace[700];
	snprintf(fw, sizeof fw, "%s/%s-%s", dir, b->port, tag);
	struct ergon_model_fw_marker mk = {.from = "test_marker_qemu_trace"};
	if (mask != NULL)
		memcpy(mk.mask, mask, sizeof mk.mask);
	json_t *build = NULL;
	struct ergon_err err = {0};
	int rc =
	    ergon_model_fw_build_power(model_path, b->name, fw, 0, mask ? &mk : NULL, &build, &err);
	if (rc)
		fail_msg("%s %s: build: %s", b->name, tag, err.msg);
	/* The record: the mask as 8 words, the define in the main's flags. */
	const json_t *m = json_object_get(build, "marker");
	assert_int_equal(json_integer_value(json_object_get(m, "pin")), 2);
	char def[200];
	int o = snprintf(def, sizeof def, "-DERT_MODEL_MARKER_MASK=");
	for (int w = 0; w < 8; w++) {
		char word[16];
		snprintf(word, sizeof word, "0x%08x", mask ? (unsigned)mask[w] : 0u);
		assert_string_equal(
		    json_string_value(json_array_get(json_object_get(m, "mask"), (size_t)w)), word);
		o += snprintf(def + o, sizeof def - (size_t)o, "%s%s", w ? "," : "", word);
	}
	char *rec = json_dumps(build, 0);
	assert_non_null(rec);
	if (mask != NULL && strstr(rec, def) == NULL)
		fail_msg("%s %s: the build record lacks %s", b->name, tag, def);
	if (mask == NULL && strstr(rec, "-DERT_MODEL_MARKER_MASK") != NULL)
		fail_msg("%s %s: a mask define without a mask", b->name, tag);
	free(rec);
	const char *elf = json_string_value(json_object_get(build, "elf"));
	snprintf(log, sizeof log, "%s/qemu.log", fw);
	snprintf(trace, sizeof trace, "%s/trace.log", fw);
	const char *argv[] = {ERGON_QEMU_ARGV(b->machine), "-kernel", elf,   "-d",
			      "trace:mps2_fpgaio_write",   "-D",      trace, NULL};
	rc = ergon_lifecycle_run_tool(argv, log, 240.0, &err);
	if (rc)
		fail_msg("%s %s: QEMU: %s", b->name, tag, err.msg);
	char *text = ts_read_file(trace, NULL);
	assert_non_null(text);
	struct decoded d;
	decode(text, &d);
	free(text);
	int s = mask == NULL ? KWS_LAYERS : 0;
	if (mask != NULL) {
		int any = 0;
		for (int w = 0; w < 8; w++)
			any |= mask[w] != 0;
		s = any ? popcount_below(mask, KWS_LAYERS) : KWS_LAYERS;
	}
	int want = WINDOW_ITERS * s + 1;
	printf("# %s %s: %d LED writes, gate %d/%d, marker toggles %d in the gate (by hand "
	       "%d x %d + 1 = %d), %d outside\n",
	       b->name, tag, d.writes, d.gate_rises, d.gate_falls, d.toggles_in_gate, WINDOW_ITERS,
	       s, want, d.toggles_outside);
	assert_int_equal(d.gate_rises, 1);
	assert_int_equal(d.gate_falls, 1);
	assert_int_equal(d.marker_high_at_rise, 0);
	assert_int_equal(d.toggles_outside, 0);
	assert_int_equal(d.toggles_in_gate, want);
	json_decref(build);
}

static void test_marker_follows_mask(void **state)
{
	(void)state;
	char *dir = ts_tmpdir();
	char *model_path = ts_fixture("models/kws_ref_model.tflite");
	struct ergon_model *m = NULL;
	struct ergon_err err = {0};
	assert_int_equal(ergon_model_open(model_path, &m, &err), 0);
	/* The count the hand expectations use, as the interpreter parsed it. */
	assert_int_equal(ergon_model_tfl(m)->n_ops, KWS_LAYERS);
	ergon_model_free(m);
	static const struct board boards[] = {{"qemu-an547", "mps3-an547", "an547"},
					      {"qemu-an505", "mps2-an505", "an505"}};
	/* Layers 0, 3, 4, 9, 12 and 200 (beyond the model). */
	const uint32_t some[8] = {0x1219u, 0, 0, 0, 0, 0, 1u << (200 - 192), 0};
	const uint32_t none_of_the_model[8] = {0, 0, 0, 0, 0, 0, 1u << (200 - 192), 0};
	const uint32_t high_word[8] = {0x2u, 0, 0, 0, 0, 0, 0, 0xffffffffu};
	for (size_t i = 0; i < sizeof boards / sizeof boards[0]; i++) {
		run_case(dir, model_path, &boards[i], "nomask", NULL);
		run_case(dir, model_path, &boards[i], "some", some);
		run_case(dir, model_path, &boards[i], "beyond", none_of_the_model);
		run_case(dir, model_path, &boards[i], "word7", high_word);
	}
	free(model_path);
	ts_tmpdir_remove(dir);
	free(dir);
}

int main(void)
{
	if (system("command -v arm-none-eabi-gcc >/dev/null && command -v qemu-system-arm "
		   ">/dev/null") != 0) {
		fprintf(stderr, "FAIL: arm-none-eabi-gcc and qemu-system-arm are required "
				"(scripts/bootstrap.sh)\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_marker_follows_mask)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
