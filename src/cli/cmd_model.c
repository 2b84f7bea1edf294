/* ergon model info | infer: what a TFLite model is (operators, shapes,
 * quantization, MACs, parameter bytes, arena) and what it answers on a
 * given input, through ergon-target's own interpreter. */
#include "cli.h"
#include "cli_opts.h"
#include "cli_reliab.h"
#include "ergon/fileio.h"
#include "ergon/model_run.h"
#include "ergon/model_shape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void quant_str(const struct ert_tfl_tensor *t, char *buf, size_t cap)
{
	if (t->n_scale == 0)
		snprintf(buf, cap, "-");
	else if (t->n_scale > 1)
		snprintf(buf, cap, "per-channel x%u", (unsigned)t->n_scale);
	else
		snprintf(buf, cap, "s=%.6g zp=%d", (double)t->scale, (int)t->zero_point);
}

static void print_io(const char *what, const struct ert_tfl_model *t, int16_t idx, unsigned k)
{
	const struct ert_tfl_tensor *x = &t->tensors[idx];
	char shape[96], q[48];
	ergon_model_shape_str(x, shape, sizeof shape);
	quant_str(x, q, sizeof q);
	printf("%-6s %u: %s %s, %s, %u bytes\n", what, k, ert_tfl_type_name(x->type), shape, q,
	       (unsigned)x->bytes);
}

static int info(struct cli_parser *p)
{
	const char *path = NULL;
	int json = 0;
	while (cli_next(p)) {
		if (cli_flag(p, "--json", &json)) {
		} else if (cli_positional(p, &path)) {
		} else {
			cli_unknown(p);
		}
	}
	if (p->rc || cli_require(p, "MODEL.tflite", path))
		return p->rc;
	struct ergon_err err = {0};
	struct ergon_model_info mi;
	if (ergon_model_info_load(path, &mi, &err) != 0)
		return ergon_cli_fail("model", &err);
	const struct ert_tfl_model *t = mi.tfl;
	if (json) {
		json_t *j = ergon_model_info_json(mi.model);
		int rc = j ? cli_print_json(j) : ERGON_EXIT_IO;
		json_decref(j);
		ergon_model_info_release(&mi);
		return rc;
	}
	size_t len = mi.model_bytes;
	printf("model  %s (%zu bytes, schema %u)\n", path, len, (unsigned)t->version);
	for (unsigned k = 0; k < t->n_inputs; k++)
		print_io("input", t, t->inputs[k], k);
	for (unsigned k = 0; k < t->n_outputs; k++)
		print_io("output", t, t->outputs[k], k);
	printf("\n%3s  %-18s %-16s %-16s %-16s %-22s %10s %8s\n", "#", "operator", "input",
	       "weights", "output", "output quantization", "MACs", "params");
	for (unsigned i = 0; i < t->n_ops; i++) {
		const struct ert_tfl_op *op = &t->ops[i];
		char in[96] = "-", w[96] = "-", out[96], q[48];
		if (op->n_in > 0 && op->in[0] >= 0)
			ergon_model_shape_str(&t->tensors[op->in[0]], in, sizeof in);
		if (op->n_in > 1 && op->in[1] >= 0 && t->tensors[op->in[1]].is_const)
			ergon_model_shape_str(&t->tensors[op->in[1]], w, sizeof w);
		ergon_model_shape_str(&t->tensors[op->out], out, sizeof out);
		quant_str(&t->tensors[op->out], q, sizeof q);
		printf("%3u  %-18s %-16s %-16s %-16s %-22s %10llu %8u\n", i,
		       ert_tfl_op_name(op->opcode), in, w, out, q, (unsigned long long)op->macs,
		       (unsigned)op->param_bytes);
	}
	printf("\ntotal  %u operators, %llu MACs, %u parameter bytes\n", (unsigned)t->n_ops,
	       (unsigned long long)t->total_macs, (unsigned)t->total_param_bytes);
	printf("arena  %u bytes (%u activations, planned by lifetime; %u per-channel "
	       "requantization, bias and filter sums)\n",
	       (unsigned)t->arena_bytes, (unsigned)t->activation_bytes, (unsigned)t->persist_bytes);
	ergon_model_info_release(&mi);
	return ERGON_EXIT_OK;
}

static int infer(struct cli_parser *p)
{
	static const char *const boards[] = {"host", "qemu-an547", "qemu-an505", NULL};
	const char *path = NULL, *in_path = NULL, *out_path = NULL, *board = "host";
	int force = 0, json = 0, no_cache = 0;
	int clean = 0;
	double top_k = 5;
	while (cli_next(p)) {
		if (cli_str(p, "--input", &in_path)) {
		} else if (cli_num(p, "--top", CLI_GE, 0, 1000, &top_k)) {
		} else if (cli_flag(p, "--json", &json)) {
		} else if (cli_str(p, "--out", &out_path)) {
		} else if (cli_choice(p, "--board", boards, &board)) {
		} else if (cli_flag(p, "--clean", &clean)) {
		} else if (cli_flag(p, "--force", &force)) {
		} else if (cli_flag(p, "--no-cache", &no_cache)) {
		} else if (cli_positional(p, &path)) {
		} else {
			cli_unknown(p);
		}
	}
	if (p->rc || cli_require(p, "MODEL.tflite", path) || cli_require(p, "--input", in_path) ||
	    cli_require(p, "--out", out_path))
		return p->rc;
	ergon_cli_stale_report("model", out_path, clean);
	int on_qemu = strcmp(board, "host") != 0;
	struct ergon_err err = {0};
	size_t out_len = 0, n_top = 0;
	struct ergon_model_score top[1000];
	const struct ergon_model_infer_opts io = {
	    .top_k = (size_t)top_k,
	    .top = top,
	    .n_top = &n_top,
	    .model_path = path,
	    .input_path = in_path,
	    .out_path = out_path,
	    .on_qemu = on_qemu,
	    .force = force,
	    .no_cache = no_cache,
	    .board = board,
	};
	if (on_qemu)
		cli_ticker_start("ergon model: building the firmware and running it under QEMU");
	int rc = ergon_model_infer_run(&io, &out_len, &err);
	cli_ticker_stop();
	if (rc)
		return ergon_cli_fail("model", &err);
	char where[96];
	snprintf(where, sizeof where, "%s%s", on_qemu ? board : "host interpreter",
		 on_qemu ? " firmware" : "");
	if (json) {
		json_t *a = json_array();
		for (size_t i = 0; a && i < n_top; i++)
			json_array_append_new(
			    a, json_pack("{s:i, s:o, s:f}", "class", (int)top[i].index, "raw",
					 top[i].quantized ? json_integer((json_int_t)top[i].raw)
							  : json_real(top[i].raw),
					 "score", top[i].score));
		return cli_json_doc("model",
				    json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:b, s:o}", "action",
					      "infer", "model", path, "input", in_path, "ran_on",
					      where, "output", out_path, "output_bytes",
					      (json_int_t)out_len, "dequantized",
					      n_top > 0 && top[0].quantized, "top", a));
	}
	if (n_top > 0) {
		printf("top %zu of output 0 (%s%s):\n", n_top, where,
		       top[0].quantized ? "; score = scale x (raw - zero point)" : "");
		printf("  %5s  %6s  %s\n", "class", "raw", "score");
		for (size_t i = 0; i < n_top; i++)
			printf("  %5u  %6g  %.6f\n", top[i].index, top[i].raw, top[i].score);
	}
	printf("wrote %zu output bytes to %s (%s)\n", out_len, out_path, where);
	return ERGON_EXIT_OK;
}

/* The actions, also completed by `ergon __complete actions model`. */
static const char *const actions[] = {"info", "infer", NULL};

static int run(int argc, char **argv)
{
	struct cli_parser p;
	cli_init_from(&p, "model", argc, argv, 2);
	int a = cli_action(&p, actions);
	if (a < 0)
		return p.rc;
	return a == 0 ? info(&p) : infer(&p);
}

const struct ergon_cli_command ergon_cli_cmd_model = {
    .actions = actions,
    .name = "model",
    .summary = "describe or run an int8 TFLite model (ergon-target's interpreter)",
    .help =
	"Usage: ergon model infer MODEL.tflite --input IN.bin --out OUT.bin\n"
	"                         [--board host|qemu-an547|qemu-an505] [--top K] [--force]\n"
	"                         [--clean]\n"
	"                         [--json] [--no-cache]\n"
	"       ergon model info MODEL.tflite [--json]\n\n"
	"infer: IN.bin holds the raw bytes of input 0 (its size must match the\n"
	"model's input exactly); OUT.bin gets the raw bytes of output 0, and the\n"
	"terminal the top K classes (--top K, default 5, 0 for none) with the raw\n"
	"value and the dequantized score, scale x (raw - zero point) of output 0's\n"
	"quantization. --board host (the default) runs the interpreter here;\n"
	"qemu-an547 builds the Cortex-M55 firmware with the model and input\n"
	"embedded (arm-none-eabi-gcc, the same interpreter sources) and runs it\n"
	"under qemu-system-arm; the firmware, its build record (compiler, flags,\n"
	"ELF sha256, link map) and QEMU's log stay in OUT.bin.an547/. qemu-an505\n"
	"does the same on the Cortex-M33 port (reference kernels; OUT.bin.an505/;\n"
	"docs/internals/ports.md). Objects built\n"
	"before with the same toolchain, flags and sources come from the firmware\n"
	"object cache ($XDG_CACHE_HOME/ergon, else ~/.cache/ergon); --no-cache\n"
	"compiles every one and neither reads nor writes the cache. --json prints\n"
	"{command, action, model, input, ran_on, output, output_bytes, dequantized,\n"
	"top: [{class, raw, score}]}.\n\n"
	"info: every operator with its index, type, input/weights/output shapes,\n"
	"output quantization, MACs and parameter bytes; totals and the arena the\n"
	"interpreter needs (activations planned by tensor lifetime, plus per-channel\n"
	"requantization, bias and filter sums). --json prints the same with full quantization.\n\n"
	"Supported: int8 models with CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED,\n"
	"AVERAGE_POOL_2D, MAX_POOL_2D, ADD, RESHAPE, SOFTMAX, QUANTIZE, DEQUANTIZE\n"
	"(docs/internals/tflite.md). Anything else is refused at load with the\n"
	"operator's name and index.\n\n"
	"Examples:\n"
	"  ergon model infer kws_ref_model.tflite --input mfcc.bin --out scores.bin --top 3\n"
	"  ergon model info vww_96_int8.tflite\n",
    .run = run,
    .exits = {[0] = "the model was described, or inferred and its output written",
	      [1] = CLI_EXIT_NONE,
	      [2] = "usage, or an input whose size does not match the model's input",
	      [3] = "a model refused, a missing input, or --out cannot be written",
	      [4] = CLI_EXIT_NONE},
};
