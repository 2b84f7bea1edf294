/* Fuzz what `ergon view --serve` answers (src/pipelines/view/view_serve.c):
 * the request's method, path and parameters as the HTTP daemon hands them
 * over, against a small recording with many summary levels (written once
 * by ergon's JLS writer: 30,000 samples in entries of 10, 100, 1000,
 * 10,000 samples, two digital lines).
 *
 * Input: lines separated by '\n': the method, the path, then one
 * parameter a line ("key=value", or "key" for a key without '='). The
 * run's token is added as the first parameter unless the input starts
 * with '!' (then only a token the input gives counts).
 *
 * Properties: every answer is one of 200, 400, 403, 404, 405 (500 means a
 * read failed on a file that did not change, or memory ran out: a bug);
 * without the token it is 403; a JSON answer parses; a tile holds 1..8192
 * entries within the level it names, a range's figures cover exactly the
 * samples asked for with min <= mean <= max. */
#include "ergon/jls_writer.h"
#include "fuzz_props.h"
#include "pipelines/view/view_internal.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOKEN "0123456789abcdef0123456789abcdef"
#define N_SAMPLES 30000u

static struct view_served *served;

static void setup(void)
{
	static char path[64];
	snprintf(path, sizeof path, "/tmp/ergon-fuzz-view-%ld.jls", (long)getpid());
	struct ergon_jls_writer_config cfg = {
	    .path = path,
	    .force = 1,
	    .sample_rate_hz = 100000,
	    .digital_lines = 2,
	    .with_power = 1,
	    .samples_per_data = 1000,
	    .sample_decimate = 10,
	};
	struct ergon_err err = {0};
	struct ergon_jls_writer *w = NULL;
	static float i[N_SAMPLES], v[N_SAMPLES];
	static uint32_t d[N_SAMPLES];
	for (unsigned k = 0; k < N_SAMPLES; k++) {
		i[k] = (k / 5000u) % 2 ? 0.005f : 0.001f;
		v[k] = 3.0f;
		d[k] = (k / 5000u) % 2 ? 1u : 2u;
	}
	i[1234] = NAN; /* a lost sample */
	FUZZ_REQUIRE(ergon_jls_writer_open(&cfg, &w, &err) == 0);
	FUZZ_REQUIRE(ergon_jls_writer_push(w, i, v, NULL, d, N_SAMPLES, &err) == 0);
	FUZZ_REQUIRE(ergon_jls_writer_close(w, NULL, &err) == 0);
	struct ergon_view_input in = {.jls_path = path};
	struct ergon_view_options o = {.max_bins = 100};
	FUZZ_REQUIRE(view_served_open(&in, 1, &o, TOKEN, &served, &err) == 0);
	unlink(path); /* the reader keeps it open */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (served == NULL)
		setup();
	if (size > 4096)
		return 0;
	char *text = malloc(size + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	int with_token = !(size > 0 && text[0] == '!');
	char *cur = with_token ? text : text + 1;
	char *lines[VIEW_ARGS_MAX + 4];
	size_t n_lines = 0;
	while (n_lines < VIEW_ARGS_MAX + 4) {
		lines[n_lines++] = cur;
		char *nl = strchr(cur, '\n');
		if (nl == NULL)
			break;
		*nl = '\0';
		cur = nl + 1;
	}
	const char *method = lines[0], *path = n_lines > 1 ? lines[1] : "/";
	struct view_arg args[VIEW_ARGS_MAX + 2];
	size_t na = 0;
	int token_given = 0;
	if (with_token)
		args[na++] = (struct view_arg){"token", TOKEN};
	for (size_t k = 2; k < n_lines && na < VIEW_ARGS_MAX + 2; k++) {
		char *eq = strchr(lines[k], '=');
		if (eq != NULL)
			*eq = '\0';
		args[na] = (struct view_arg){lines[k], eq ? eq + 1 : NULL};
		if (strcmp(lines[k], "token") == 0 && eq && strcmp(eq + 1, TOKEN) == 0)
			token_given = 1;
		na++;
	}
	struct view_reply r;
	view_served_handle(served, method, path, args, na, &r);
	unsigned st = r.status;
	if (getenv("FUZZ_VIEW_DEBUG"))
		fprintf(stderr, "status %u: %.*s\n", st, (int)(r.len < 300 ? r.len : 300),
			r.body ? r.body : "");
	FUZZ_REQUIRE(st == 200 || st == 400 || st == 403 || st == 404 || st == 405);
	FUZZ_REQUIRE((st == 403) == !(with_token || token_given));
	FUZZ_REQUIRE(r.body != NULL && r.type != NULL);
	FUZZ_REQUIRE((st == 405) == (r.allow != NULL));
	if (strcmp(r.type, "application/json") == 0) {
		json_error_t je;
		json_t *j = json_loadb(r.body, r.len, 0, &je);
		FUZZ_REQUIRE(j != NULL);
		if (st == 200 && strcmp(path, "/api/tile") == 0) {
			json_int_t count = json_integer_value(json_object_get(j, "count"));
			json_int_t es = json_integer_value(json_object_get(j, "entry_samples"));
			json_int_t start = json_integer_value(json_object_get(j, "start"));
			FUZZ_REQUIRE(count >= 1 && count <= (json_int_t)ERGON_VIEW_TILE_MAX);
			FUZZ_REQUIRE(es >= 1 && (start + count) * es <= (json_int_t)N_SAMPLES);
		}
		if (st == 200 && strcmp(path, "/api/stats") == 0) {
			json_int_t a = json_integer_value(json_object_get(j, "start"));
			json_int_t b = json_integer_value(json_object_get(j, "end"));
			json_int_t used = 0;
			size_t k;
			json_t *u;
			json_array_foreach(json_object_get(j, "levels_used"), k, u) used +=
			    json_integer_value(json_object_get(u, "entries")) *
			    json_integer_value(json_object_get(u, "entry_samples"));
			FUZZ_REQUIRE(0 <= a && a < b && b <= (json_int_t)N_SAMPLES &&
				     used == b - a);
			json_t *c = json_object_get(json_object_get(j, "signals"), "current");
			double mn = json_number_value(json_object_get(c, "min"));
			double me = json_number_value(json_object_get(c, "mean"));
			double mx = json_number_value(json_object_get(c, "max"));
			if (json_is_number(json_object_get(c, "mean")))
				FUZZ_REQUIRE(mn <= me * (1 + 1e-6) && me <= mx * (1 + 1e-6));
		}
		json_decref(j);
	}
	view_reply_free(&r);
	free(text);
	return 0;
}
