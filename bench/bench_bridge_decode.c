/* The bridge protocol's decoder (docs/BRIDGE.md) on the host: statistics
 * lines as the Joulescope bridge writes them with --stats-format line, the
 * same packets as stats_block lines of 1000 (its default; decoded by the
 * fast path, and again through jansson with it off), and raw blocks
 * of 1000 base64 float32 samples (current, voltage, digital), split into
 * lines and decoded, against a baseline measured in the same run: jansson
 * parsing the same lines and nothing else (json_loadb + json_decref), the
 * least any JSON Lines reader pays.
 *   bench_bridge_decode [STATS_LINES] [RAW_BLOCKS]   (default 200000, 2000) */
#include "drivers/instruments/bridge/bridge_wire.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static size_t b64_put(char *o, const unsigned char *in, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t w = (uint32_t)in[i] << 16;
		if (i + 1 < n)
			w |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < n)
			w |= in[i + 2];
		o[k++] = b64[(w >> 18) & 63];
		o[k++] = b64[(w >> 12) & 63];
		o[k++] = i + 1 < n ? b64[(w >> 6) & 63] : '=';
		o[k++] = i + 2 < n ? b64[w & 63] : '=';
	}
	return k;
}

#define BLOCK 1000 /* packets per stats_block, as the Joulescope bridge sends them */

/* One base64 float64 column of BLOCK values f(k0 + j). */
static size_t put_col(char *o, size_t k0, int which)
{
	double v[BLOCK];
	for (size_t j = 0; j < BLOCK; j++) {
		size_t k = k0 + j;
		double i = 0.005 + 1e-6 * (double)(k % 97), t = (double)k * 0.001;
		const double f[] = {t, t + 0.001, i, 1.2e-6, 0.0049, 0.0061, 3.3, 1e-4, 3.29, 3.31,
				    i * 3.3, 4e-6, 0.016, 0.02, (double)k * 5e-6, (double)k * 1.65e-5};
		v[j] = f[which];
	}
	return b64_put(o, (const unsigned char *)v, sizeof(v)); /* x86-64: little-endian */
}

/* The same n packets as make_stream's stats lines, as stats_block lines. */
static char *make_blocks(size_t n, size_t *len)
{
	static const char *const names[] = {
	    "t_start_s", "t_end_s", "i_avg_a", "i_std_a", "i_min_a", "i_max_a",	 "v_avg_v",  "v_std_v",
	    "v_min_v",	 "v_max_v", "p_avg_w", "p_std_w", "p_min_w", "p_max_w", "charge_c", "energy_j"};
	size_t cap = n * 200 + 4096, o = 0;
	char *s = malloc(cap);
	if (s == NULL)
		return NULL;
	for (size_t k0 = 0; k0 < n; k0 += BLOCK) {
		o += (size_t)snprintf(s + o, cap - o,
				      "{\"type\":\"stats_block\",\"sample_id\":%zu,"
				      "\"sample_count\":1000,\"n\":%d",
				      k0 * 1000, BLOCK);
		for (int f = 0; f < 16; f++) {
			o += (size_t)snprintf(s + o, cap - o, ",\"%s\":\"", names[f]);
			o += put_col(s + o, k0, f);
			s[o++] = '"';
		}
		uint32_t dig[BLOCK];
		for (size_t j = 0; j < BLOCK; j++)
			dig[j] = (uint32_t)(((k0 + j) / 500) % 2);
		o += (size_t)snprintf(s + o, cap - o, ",\"digital\":\"");
		o += b64_put(s + o, (const unsigned char *)dig, sizeof(dig));
		o += (size_t)snprintf(s + o, cap - o, "\"}\n");
	}
	*len = o;
	return s;
}

/* Build the stream: n lines of the given kind into a malloc'd buffer. */
static char *make_stream(int raw, size_t n, size_t *len)
{
	size_t cap = raw ? n * 20000 + 1 : n * 512 + 1, o = 0;
	char *s = malloc(cap);
	if (s == NULL)
		return NULL;
	for (size_t k = 0; k < n; k++) {
		double i = 0.005 + 1e-6 * (double)(k % 97), t = (double)k * 0.001;
		if (!raw) {
			o += (size_t)snprintf(
			    s + o, cap - o,
			    "{\"type\":\"stats\",\"sample_id\":%zu,\"sample_count\":1000,"
			    "\"t_start_s\":%.9f,\"t_end_s\":%.9f,\"i_avg_a\":%.9g,\"i_std_a\":1.2e-"
			    "6,"
			    "\"i_min_a\":0.0049,\"i_max_a\":0.0061,\"v_avg_v\":3.3,\"v_std_v\":1e-"
			    "4,"
			    "\"v_min_v\":3.29,\"v_max_v\":3.31,\"p_avg_w\":%.9g,\"p_std_w\":4e-6,"
			    "\"p_min_w\":0.016,\"p_max_w\":0.02,\"charge_c\":%.12g,\"energy_j\":%."
			    "12g,"
			    "\"digital\":%zu}\n",
			    k * 1000, t, t + 0.001, i, i * 3.3, (double)k * 5e-6,
			    (double)k * 1.65e-5, (k / 500) % 2);
			continue;
		}
		float cur[1000], volt[1000];
		unsigned char dig[1000];
		for (size_t j = 0; j < 1000; j++) {
			cur[j] = (float)(i + 1e-7 * (double)j);
			volt[j] = 3.3f;
			dig[j] = (unsigned char)((k / 50) % 2);
		}
		/* float32 little-endian: this benchmark runs on x86-64. */
		o += (size_t)snprintf(s + o, cap - o,
				      "{\"type\":\"raw\",\"sample_id\":%zu,\"t_s\":%.9f,\"n\":1000,"
				      "\"current_a\":\"",
				      k * 1000, t);
		o += b64_put(s + o, (const unsigned char *)cur, sizeof(cur));
		o += (size_t)snprintf(s + o, cap - o, "\",\"voltage_v\":\"");
		o += b64_put(s + o, (const unsigned char *)volt, sizeof(volt));
		o += (size_t)snprintf(s + o, cap - o, "\",\"digital\":\"");
		o += b64_put(s + o, dig, sizeof(dig));
		o += (size_t)snprintf(s + o, cap - o, "\"}\n");
	}
	*len = o;
	return s;
}

/* Baseline: split on newlines and let jansson parse each line. */
static double baseline(const char *s, size_t len)
{
	double t0 = now_s();
	size_t start = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] != '\n')
			continue;
		json_t *o = json_loadb(s + start, i - start, JSON_REJECT_DUPLICATES, NULL);
		if (o == NULL)
			abort();
		json_decref(o);
		start = i + 1;
	}
	return now_s() - t0;
}

/* ergon: the line splitter fed in 64 KiB reads, every line decoded;
 * *msgs counts messages, *packets statistics packets. */
static double ours(const char *s, size_t len, size_t *msgs, size_t *packets)
{
	struct bridge_lines l = {0};
	struct ergon_err err = {0};
	double t0 = now_s();
	*msgs = *packets = 0;
	for (size_t off = 0; off < len;) {
		size_t n =
		    len - off < ERGON_BRIDGE_APPEND_MAX ? len - off : ERGON_BRIDGE_APPEND_MAX;
		if (bridge_lines_append(&l, s + off, n, &err))
			abort();
		off += n;
		const char *line;
		size_t ll;
		uint64_t lo, no;
		while (bridge_lines_next(&l, &line, &ll, &lo, &no)) {
			struct bridge_msg m;
			if (bridge_wire_decode(line, ll, lo, no, &m, &err)) {
				fprintf(stderr, "%s\n", err.msg);
				abort();
			}
			*packets += m.type == BRIDGE_MSG_STATS_BLOCK ? m.block.n
				    : m.type == BRIDGE_MSG_STATS     ? 1
								     : 0;
			bridge_msg_cleanup(&m);
			(*msgs)++;
		}
	}
	double dt = now_s() - t0;
	bridge_lines_free(&l);
	return dt;
}

int main(int argc, char **argv)
{
	size_t n_stats = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000;
	size_t n_raw = argc > 2 ? strtoul(argv[2], NULL, 10) : 2000;
	n_stats = n_stats / BLOCK * BLOCK;
	double stats_pps = 0;
	for (int kind = 0; kind < 3; kind++) { /* stats lines, stats_block lines, raw */
		size_t n = kind == 2 ? n_raw : n_stats, len = 0, msgs = 0, packets = 0;
		char *s = kind == 1 ? make_blocks(n, &len) : make_stream(kind == 2, n, &len);
		if (s == NULL)
			return 1;
		size_t lines = kind == 1 ? n / BLOCK : n;
		double tb = baseline(s, len);
		double to = ours(s, len, &msgs, &packets);
		if (msgs != lines || (kind < 2 && packets != n))
			return 1;
		const char *name = kind == 0 ? "stats" : kind == 1 ? "block" : "raw";
		printf("%-5s %zu lines, %.1f MB: jansson parse only %.3f s (%.0f lines/s), bridge "
		       "decode %.3f s (%.0f lines/s), ratio %.2f\n",
		       name, lines, (double)len / 1e6, tb, (double)lines / tb, to,
		       (double)lines / to, to / tb);
		if (kind == 0)
			stats_pps = (double)n / to;
		if (kind == 1) {
			/* The same lines through jansson (the fast path off). */
			bridge_wire_no_fast = 1;
			double tj = ours(s, len, &msgs, &packets);
			bridge_wire_no_fast = 0;
			printf("      block: %.0f packets/s decoded (%d per line, %.0f bytes a packet), "
			       "%.1fx the stats lines' %.0f packets/s; through jansson (fast "
			       "path off) %.0f packets/s, fast/jansson %.1fx\n",
			       (double)n / to, BLOCK, (double)len / (double)n,
			       (double)n / to / stats_pps, stats_pps, (double)n / tj, tj / to);
		}
		if (kind == 2)
			printf("      raw: %.2f MS/s decoded (1000 samples per line)\n",
			       (double)n * 1000.0 / to / 1e6);
		free(s);
	}
	return 0;
}
