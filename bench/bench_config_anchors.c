/* Time to refuse a YAML anchor flood (docs/RELIABILITY.md, issue 19).
 *
 *   bench_config_anchors [ANCHORS] [REPEATS]
 *
 * The flood is "unknown_key: [&a0 1,&a1 1,...]" with ANCHORS (default
 * 100 000) anchors, under the 1 MB configuration limit. Baseline, in the
 * same run: the same bytes with every '&' replaced by a space (no anchors):
 * the loader's linear cost for that much YAML. Also the time for a flood
 * just under the cap (64 anchors), and what libyaml's document loader
 * alone spends on the flood (what the cap avoids; once, it is slow). CPU
 * time, best of REPEATS (default 5).
 */
#include "ergon/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef ERGON_HAVE_YAML
#include <yaml.h>
#endif

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *flood(size_t n, size_t *len)
{
	size_t cap = 32 + n * 9, o = 0;
	char *buf = malloc(cap);
	if (buf == NULL)
		exit(1);
	o += (size_t)snprintf(buf, cap, "unknown_key: [");
	for (size_t k = 0; k < n; k++) {
		char name[8];
		size_t v = k, l = 0;
		do {
			name[l++] = "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36];
			v /= 36;
		} while (v);
		buf[o++] = '&';
		while (l)
			buf[o++] = name[--l];
		o += (size_t)snprintf(buf + o, cap - o, " 1%s", k + 1 < n ? "," : "]\n");
	}
	*len = o;
	return buf;
}

static double best_load_s(const char *buf, size_t len, int repeats, char *msg, size_t cap)
{
	double best = 1e30;
	for (int r = 0; r < repeats; r++) {
		struct ergon_config cfg;
		struct ergon_err err = {0};
		ergon_config_init(&cfg);
		double t0 = now_s();
		ergon_config_load_yaml(&cfg, "flood.yml", buf, len, &err);
		double dt = now_s() - t0;
		ergon_config_cleanup(&cfg);
		if (dt < best)
			best = dt;
		snprintf(msg, cap, "%s", err.msg);
	}
	return best;
}

/* libyaml's loader on its own (no ergon pre-pass): seconds per load. */
static double loader_s(const char *buf, size_t len)
{
#ifndef ERGON_HAVE_YAML
	(void)buf;
	(void)len;
	return -1;
#else
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	double t0 = now_s();
	int ok = yaml_parser_load(&parser, &doc);
	double dt = now_s() - t0;
	if (ok)
		yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return dt;
#endif
}

int main(int argc, char **argv)
{
	char *end = NULL;
	size_t n = argc > 1 ? (size_t)strtoul(argv[1], &end, 10) : 100000;
	int repeats = argc > 2 ? (int)strtol(argv[2], &end, 10) : 5;
	size_t len = 0, len64 = 0;
	char *buf = flood(n, &len), *small = flood(64, &len64);
	char *plain = malloc(len);
	if (plain == NULL)
		return 1;
	for (size_t i = 0; i < len; i++)
		plain[i] = buf[i] == '&' ? ' ' : buf[i];
	char msg[1024];
	double t_flood = best_load_s(buf, len, repeats, msg, sizeof msg);
	printf("flood      : %zu anchors, %zu bytes: refused in %.3f ms\n  (%s)\n", n, len,
	       t_flood * 1e3, msg);
	double t_plain = best_load_s(plain, len, repeats, msg, sizeof msg);
	printf("baseline   : the same bytes without '&': %.3f ms\n  (%s)\n", t_plain * 1e3, msg);
	double t_small = best_load_s(small, len64, repeats, msg, sizeof msg);
	printf("at the cap : 64 anchors, %zu bytes: %.3f ms\n", len64, t_small * 1e3);
	printf("ratio flood/baseline: %.4f\n", t_flood / t_plain);
	printf("libyaml loader alone on the flood (no cap): %.3f s\n", loader_s(buf, len));
	free(buf);
	free(small);
	free(plain);
	return 0;
}
