/* A small int8 network in plain C, as a stand-in for the user's engine:
 * 3x3 convolution (1 -> 4 channels), 3x3 depthwise, fully connected
 * (256 -> 10) and softmax, each bracketed by the layer hooks. Weights are
 * generated deterministically at first use (no model file on this board). */
#include "an547.h"
#include "ergon/ert_layer.h"

#include <stdint.h>

#define H 8
#define W 8
#define C 4
#define K 3
#define CLASSES 10
#define FLAT (H * W * C)

static int8_t input[H * W];
static int8_t conv_w[C][K][K];
static int8_t dw_w[C][K][K];
static int8_t fc_w[CLASSES][FLAT];
static int8_t act1[H][W][C];
static int8_t act2[H][W][C];
static int32_t logits[CLASSES];
static uint16_t probs_q15[CLASSES];
/* exp(-k/16) in Q30 for k = 0..255: softmax without libm. */
static uint32_t exp_q30[256];
static int ready;
static int last_class;
static uint32_t last_checksum;

static uint32_t lcg_state = 12345u;
static int8_t lcg_i8(void)
{
	lcg_state = lcg_state * 1103515245u + 12345u;
	return (int8_t)(int32_t)((lcg_state >> 16) % 15u) - 7;
}

static int8_t clamp_relu(int32_t v)
{
	if (v < 0)
		return 0;
	return v > 127 ? 127 : (int8_t)v;
}

static void setup(void)
{
	for (int i = 0; i < H * W; i++)
		input[i] = (int8_t)((i * 37 + 11) % 97 - 48);
	for (int c = 0; c < C; c++)
		for (int y = 0; y < K; y++)
			for (int x = 0; x < K; x++) {
				conv_w[c][y][x] = lcg_i8();
				dw_w[c][y][x] = lcg_i8();
			}
	for (int o = 0; o < CLASSES; o++)
		for (int i = 0; i < FLAT; i++)
			fc_w[o][i] = lcg_i8();
	/* exp(-1/16) = 0.939413062813... in Q30. */
	const uint64_t step = 1008687096u;
	uint64_t v = 1u << 30;
	for (int k = 0; k < 256; k++) {
		exp_q30[k] = (uint32_t)v;
		v = (v * step) >> 30;
	}
	ready = 1;
}

static void conv(void)
{
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			for (int c = 0; c < C; c++) {
				int32_t acc = 0;
				for (int ky = 0; ky < K; ky++)
					for (int kx = 0; kx < K; kx++) {
						int iy = y + ky - 1, ix = x + kx - 1;
						if (iy < 0 || iy >= H || ix < 0 || ix >= W)
							continue;
						acc += input[iy * W + ix] * conv_w[c][ky][kx];
					}
				act1[y][x][c] = clamp_relu(acc >> 4);
			}
}

static void depthwise(void)
{
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			for (int c = 0; c < C; c++) {
				int32_t acc = 0;
				for (int ky = 0; ky < K; ky++)
					for (int kx = 0; kx < K; kx++) {
						int iy = y + ky - 1, ix = x + kx - 1;
						if (iy < 0 || iy >= H || ix < 0 || ix >= W)
							continue;
						acc += act1[iy][ix][c] * dw_w[c][ky][kx];
					}
				act2[y][x][c] = clamp_relu(acc >> 3);
			}
}

static void fully_connected(void)
{
	const int8_t *flat = &act2[0][0][0];
	for (int o = 0; o < CLASSES; o++) {
		int32_t acc = 0;
		for (int i = 0; i < FLAT; i++)
			acc += flat[i] * fc_w[o][i];
		logits[o] = acc >> 6;
	}
}

static void softmax(void)
{
	int32_t max = logits[0];
	int best = 0;
	for (int o = 1; o < CLASSES; o++)
		if (logits[o] > max) {
			max = logits[o];
			best = o;
		}
	uint64_t sum = 0;
	uint32_t e[CLASSES];
	for (int o = 0; o < CLASSES; o++) {
		int32_t d = max - logits[o]; /* >= 0; logit units of 1/16 */
		e[o] = d > 255 ? 0u : exp_q30[d];
		sum += e[o];
	}
	uint32_t h = 2166136261u; /* FNV-1a over the probabilities */
	for (int o = 0; o < CLASSES; o++) {
		probs_q15[o] = (uint16_t)(((uint64_t)e[o] << 15) / sum);
		h = (h ^ probs_q15[o]) * 16777619u;
	}
	last_class = best;
	last_checksum = h;
}

int netdemo_infer(void *user)
{
	(void)user;
	if (!ready)
		setup();
	ert_layer_begin(0, "CONV_2D");
	conv();
	ert_layer_end();
	ert_layer_begin(1, "DEPTHWISE_CONV_2D");
	depthwise();
	ert_layer_end();
	ert_layer_begin(2, "FULLY_CONNECTED");
	fully_connected();
	ert_layer_end();
	ert_layer_begin(3, "SOFTMAX");
	softmax();
	ert_layer_end();
	return 0;
}

int netdemo_last_class(void)
{
	return last_class;
}

uint32_t netdemo_last_checksum(void)
{
	return last_checksum;
}
