/* The bridge protocol's decoder (docs/BRIDGE.md) on the host: statistics
 * lines as the Joulescope bridge writes them, and raw blocks of 1000
 * base64 float32 samples (current, voltage, digital), split into lines and
 * decoded, against a baseline measured in the same run: jansson parsing
 * the same lines and nothing else (json_loadb + json_decref), the least
 * any JSON Lines reader pays.
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

/* ergon: the line splitter fed in 64 KiB reads, every line decoded. */
static double ours(const char *s, size_t len, size_t *msgs)
{
	struct bridge_lines l = {0};
	struct ergon_err err = {0};
	double t0 = now_s();
	*msgs = 0;
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
	for (int raw = 0; raw < 2; raw++) {
		size_t n = raw ? n_raw : n_stats, len = 0, msgs = 0;
		char *s = make_stream(raw, n, &len);
		if (s == NULL)
			return 1;
		double tb = baseline(s, len);
		double to = ours(s, len, &msgs);
		if (msgs != n)
			return 1;
		printf("%-5s %zu lines, %.1f MB: jansson parse only %.3f s (%.0f lines/s), bridge "
		       "decode %.3f s (%.0f lines/s), ratio %.2f\n",
		       raw ? "raw" : "stats", n, (double)len / 1e6, tb, (double)n / tb, to,
		       (double)n / to, to / tb);
		if (raw)
			printf("      raw: %.2f MS/s decoded (1000 samples per line)\n",
			       (double)n * 1000.0 / to / 1e6);
		free(s);
	}
	return 0;
}
