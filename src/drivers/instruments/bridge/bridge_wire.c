/* The bridge protocol's wire format: JSON Lines decoded into typed
 * messages (docs/BRIDGE.md). Every error names the byte offset in the
 * bridge's stdout, the line and the field. */
#include "drivers/instruments/bridge/bridge_wire.h"

#include "ergon/artifact.h"

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bridge_wire_no_fast;

struct wctx {
	const char *line;
	size_t len;
	uint64_t offset, line_no;
	const char *type; /* message type, for field names */
	struct ergon_err *err;
};

/* Byte position of the key "name" in the line, or 0 when not found (the
 * start of the line is then the best place to point at). */
static size_t key_pos(const struct wctx *c, const char *name)
{
	size_t kl = strlen(name);
	for (size_t i = 0; i + kl + 2 <= c->len; i++)
		if (c->line[i] == '"' && memcmp(c->line + i + 1, name, kl) == 0 &&
		    c->line[i + 1 + kl] == '"')
			return i;
	return 0;
}

__attribute__((format(printf, 4, 5))) static int fail_at(const struct wctx *c, size_t pos,
							 const char *field, const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ergon_err_set(c->err, ERGON_EPARSE,
			     "bridge: stdout byte %llu (line %llu, column %zu): %s%s%s%s%s; "
			     "fix the bridge to follow docs/BRIDGE.md",
			     (unsigned long long)(c->offset + pos), (unsigned long long)c->line_no,
			     pos + 1, c->type ? c->type : "", c->type && field ? "." : "",
			     field ? field : "", c->type || field ? ": " : "", msg);
}

#define FAIL_FIELD(c, field, ...) fail_at((c), key_pos((c), (field)), (field), __VA_ARGS__)

/* A literal NaN/Infinity outside strings: jansson refuses it as a generic
 * syntax error, but the usual cause (Python's json.dumps without
 * allow_nan=False) deserves its own message. Returns the position or -1. */
static long find_nonfinite(const char *s, size_t n)
{
	int in_str = 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (in_str) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in_str = 0;
			continue;
		}
		if (ch == '"')
			in_str = 1;
		else if ((ch == 'N' && n - i >= 3 && memcmp(s + i, "NaN", 3) == 0) ||
			 (ch == 'I' && n - i >= 8 && memcmp(s + i, "Infinity", 8) == 0))
			return (long)(i > 0 && s[i - 1] == '-' ? i - 1 : i);
	}
	return -1;
}

/* --- field getters: absent fields leave *out alone and return 0 ------- */

static int get_num(const struct wctx *c, json_t *o, const char *k, int required, double *out,
		   int *present)
{
	json_t *v = json_object_get(o, k);
	if (present)
		*present = v != NULL;
	if (v == NULL)
		return required ? FAIL_FIELD(c, k, "missing (required)") : 0;
	if (!json_is_number(v))
		return FAIL_FIELD(c, k, "expected a number");
	double d = json_number_value(v);
	if (!isfinite(d))
		return FAIL_FIELD(c, k, "expected a finite number (NaN is refused)");
	*out = d;
	return 0;
}

static int get_uint(const struct wctx *c, json_t *o, const char *k, int required, uint64_t max,
		    uint64_t *out, int *present)
{
	json_t *v = json_object_get(o, k);
	if (present)
		*present = v != NULL;
	if (v == NULL)
		return required ? FAIL_FIELD(c, k, "missing (required)") : 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) > max)
		return FAIL_FIELD(c, k, "expected an integer in 0..%llu", (unsigned long long)max);
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int get_str(const struct wctx *c, json_t *o, const char *k, int required, char *out,
		   size_t cap)
{
	json_t *v = json_object_get(o, k);
	if (v == NULL)
		return required ? FAIL_FIELD(c, k, "missing (required)") : 0;
	if (!json_is_string(v))
		return FAIL_FIELD(c, k, "expected a string");
	if (json_string_length(v) >= cap)
		return FAIL_FIELD(c, k, "longer than %zu bytes", cap - 1);
	if (memchr(json_string_value(v), '\0', json_string_length(v)))
		return FAIL_FIELD(c, k, "contains a NUL byte");
	memcpy(out, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

static int get_bool(const struct wctx *c, json_t *o, const char *k, int required, int *out)
{
	json_t *v = json_object_get(o, k);
	if (v == NULL)
		return required ? FAIL_FIELD(c, k, "missing (required)") : 0;
	if (!json_is_boolean(v))
		return FAIL_FIELD(c, k, "expected true or false");
	*out = json_is_true(v);
	return 0;
}

/* Every key of o must be in the NULL-terminated list. */
static int check_keys(const struct wctx *c, json_t *o, const char *const *known)
{
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v)
	{
		int ok = 0;
		for (const char *const *p = known; *p && !ok; p++)
			ok = strcmp(k, *p) == 0;
		if (!ok)
			return FAIL_FIELD(c, k, "unknown field (protocol %d)",
					  ERGON_BRIDGE_PROTOCOL);
	}
	return 0;
}

/* --- base64 ---------------------------------------------------------------- */

/* The value of a base64 character, -1 for any other byte (a table, value
 * + 1, so that every byte not listed is 0: the statistics blocks of issue
 * 33 decode ~170 characters a packet). */
static int b64_val(unsigned char ch)
{
	static const unsigned char tab[256] = {
	    ['A'] = 1, ['B'] = 2, ['C'] = 3, ['D'] = 4, ['E'] = 5, ['F'] = 6, ['G'] = 7,
	    ['H'] = 8, ['I'] = 9, ['J'] = 10, ['K'] = 11, ['L'] = 12, ['M'] = 13, ['N'] = 14,
	    ['O'] = 15, ['P'] = 16, ['Q'] = 17, ['R'] = 18, ['S'] = 19, ['T'] = 20, ['U'] = 21,
	    ['V'] = 22, ['W'] = 23, ['X'] = 24, ['Y'] = 25, ['Z'] = 26, ['a'] = 27, ['b'] = 28,
	    ['c'] = 29, ['d'] = 30, ['e'] = 31, ['f'] = 32, ['g'] = 33, ['h'] = 34, ['i'] = 35,
	    ['j'] = 36, ['k'] = 37, ['l'] = 38, ['m'] = 39, ['n'] = 40, ['o'] = 41, ['p'] = 42,
	    ['q'] = 43, ['r'] = 44, ['s'] = 45, ['t'] = 46, ['u'] = 47, ['v'] = 48, ['w'] = 49,
	    ['x'] = 50, ['y'] = 51, ['z'] = 52, ['0'] = 53, ['1'] = 54, ['2'] = 55, ['3'] = 56,
	    ['4'] = 57, ['5'] = 58, ['6'] = 59, ['7'] = 60, ['8'] = 61, ['9'] = 62, ['+'] = 63,
	    ['/'] = 64};
	return (int)tab[ch] - 1;
}

/* Decode standard padded base64 of exactly `want` bytes into out. Returns
 * 0, or the position of the first bad character + 1, or -1 for a wrong
 * length. */
static long b64_decode(const char *s, size_t n, uint8_t *out, size_t want)
{
	if (n != (want + 2) / 3 * 4)
		return -1;
	size_t o = 0;
	for (size_t i = 0; i < n; i += 4) {
		int v[4];
		for (int k = 0; k < 4; k++) {
			unsigned char ch = (unsigned char)s[i + (size_t)k];
			int pad_ok = i + 4 == n && k >= 2 && ch == '=';
			v[k] = pad_ok ? 0 : b64_val(ch);
			if (v[k] < 0)
				return (long)(i + (size_t)k + 1);
			if (pad_ok && k == 2 && s[i + 3] != '=')
				return (long)(i + 4);
		}
		uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 |
			     (uint32_t)v[3];
		for (int k = 0; k < 3 && o < want; k++)
			out[o++] = (uint8_t)(w >> (16 - 8 * k));
	}
	/* Padding must match the length exactly: "AA==" carries one byte. */
	size_t pads = (size_t)(s[n - 1] == '=') + (size_t)(s[n - 2] == '=');
	if (pads != (3 - want % 3) % 3)
		return -1;
	return 0;
}

/* A base64 string of exactly nbytes bytes; *out (malloc'd, owned by the
 * caller) stays NULL when the field is absent. what names the content for
 * messages ("float32", "float64", "u32"); n is the element count. */
static int get_b64(const struct wctx *c, json_t *o, const char *k, int required, size_t n,
		   size_t width, const char *what, uint8_t **out)
{
	json_t *v = json_object_get(o, k);
	*out = NULL;
	if (v == NULL)
		return required ? FAIL_FIELD(c, k, "missing (required)") : 0;
	if (!json_is_string(v))
		return FAIL_FIELD(c, k, "expected a base64 string of %zu little-endian %s", n,
				  what);
	uint8_t *bytes = malloc(n * width);
	if (bytes == NULL)
		return ergon_err_set(c->err, ERGON_ENOMEM, "bridge: out of memory");
	long bad = b64_decode(json_string_value(v), json_string_length(v), bytes, n * width);
	int rc = 0;
	if (bad < 0)
		rc = FAIL_FIELD(c, k,
				"base64 of %zu characters does not hold %zu %s (%zu bytes, %zu "
				"characters padded)",
				json_string_length(v), n, what, n * width, (n * width + 2) / 3 * 4);
	else if (bad > 0)
		rc = FAIL_FIELD(c, k, "character %ld is not base64", bad);
	if (rc) {
		free(bytes);
		return rc;
	}
	*out = bytes;
	return 0;
}

/* Little-endian by definition of the protocol, whatever the host. */
static uint64_t le_u64(const uint8_t *b, size_t width)
{
	uint64_t w = 0;
	for (size_t i = 0; i < width; i++)
		w |= (uint64_t)b[i] << (8 * i);
	return w;
}

/* A base64 float32 array of n samples, finite only. *out owned by caller. */
static int get_f32(const struct wctx *c, json_t *o, const char *k, int required, size_t n,
		   float **out)
{
	uint8_t *bytes = NULL;
	int rc = get_b64(c, o, k, required, n, 4, "float32", &bytes);
	if (rc || bytes == NULL)
		return rc;
	float *f = malloc(n * sizeof(float));
	if (f == NULL) {
		rc = ergon_err_set(c->err, ERGON_ENOMEM, "bridge: out of memory");
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t w = (uint32_t)le_u64(bytes + 4 * i, 4);
		memcpy(&f[i], &w, sizeof(w));
		if (!isfinite(f[i])) {
			rc = FAIL_FIELD(c, k, "sample %zu is %s (NaN and infinities are refused)",
					i, isnan(f[i]) ? "NaN" : "infinite");
			goto done;
		}
	}
	*out = f;
	f = NULL;
done:
	free(bytes);
	free(f);
	return rc;
}

/* --- messages ---------------------------------------------------------- */

static int decode_hello(const struct wctx *c, json_t *o, struct bridge_hello *h)
{
	static const char *const keys[] = {"type",	    "protocol",
					   "vendor",	    "model",
					   "serial",	    "accuracy_pct",
					   "resolution_a",  "resolution_w",
					   "resolution_j",  "sample_rate_hz",
					   "stats_rate_hz", "integrates",
					   "provenance",    "clock",
					   "streams",	    "inputs",
					   "outputs",	    "passthrough",
					   "heartbeat_s",   "validated_against",
					   "notes",	    NULL};
	int rc = check_keys(c, o, keys);
	uint64_t u = 0;
	char buf[32] = "";
	if (rc || (rc = get_uint(c, o, "protocol", 1, 1000, &u, NULL)))
		return rc;
	if (u != ERGON_BRIDGE_PROTOCOL)
		return FAIL_FIELD(c, "protocol",
				  "protocol %llu is not spoken here (this ergon speaks %d); "
				  "upgrade ergon or run the bridge in protocol %d",
				  (unsigned long long)u, ERGON_BRIDGE_PROTOCOL,
				  ERGON_BRIDGE_PROTOCOL);
	h->protocol = (int)u;
	if ((rc = get_str(c, o, "vendor", 1, h->vendor, sizeof(h->vendor))) ||
	    (rc = get_str(c, o, "model", 1, h->model, sizeof(h->model))) ||
	    (rc = get_str(c, o, "serial", 1, h->serial, sizeof(h->serial))) ||
	    (rc = get_num(c, o, "accuracy_pct", 1, &h->accuracy_pct, NULL)) ||
	    (rc = get_num(c, o, "resolution_a", 0, &h->resolution_a, NULL)) ||
	    (rc = get_num(c, o, "resolution_w", 0, &h->resolution_w, NULL)) ||
	    (rc = get_num(c, o, "resolution_j", 0, &h->resolution_j, NULL)) ||
	    (rc = get_num(c, o, "sample_rate_hz", 1, &h->sample_rate_hz, NULL)) ||
	    (rc = get_num(c, o, "stats_rate_hz", 0, &h->stats_rate_hz, NULL)) ||
	    (rc = get_num(c, o, "heartbeat_s", 1, &h->heartbeat_s, NULL)) ||
	    (rc = get_str(c, o, "integrates", 1, h->integrates, sizeof(h->integrates))) ||
	    (rc = get_str(c, o, "validated_against", 1, h->validated_against,
			  sizeof(h->validated_against))) ||
	    (rc = get_str(c, o, "notes", 0, h->notes, sizeof(h->notes))) ||
	    (rc = get_bool(c, o, "passthrough", 0, &h->passthrough)))
		return rc;
	if (h->accuracy_pct < 0 || h->accuracy_pct > 100)
		return FAIL_FIELD(c, "accuracy_pct", "%g is not a percentage in 0..100",
				  h->accuracy_pct);
	if (h->resolution_a < 0 || h->resolution_w < 0 || h->resolution_j < 0)
		return FAIL_FIELD(c,
				  h->resolution_a < 0	? "resolution_a"
				  : h->resolution_w < 0 ? "resolution_w"
							: "resolution_j",
				  "a resolution cannot be negative");
	if (!(h->sample_rate_hz > 0) || h->sample_rate_hz > 1e10)
		return FAIL_FIELD(c, "sample_rate_hz", "%g Hz is not in (0, 1e10]",
				  h->sample_rate_hz);
	if (h->stats_rate_hz < 0 || h->stats_rate_hz > h->sample_rate_hz)
		return FAIL_FIELD(c, "stats_rate_hz", "%g Hz is not in (0, sample_rate_hz]",
				  h->stats_rate_hz);
	if (!(h->heartbeat_s >= 0.05 && h->heartbeat_s <= 60))
		return FAIL_FIELD(c, "heartbeat_s", "%g s is not in 0.05..60", h->heartbeat_s);
	if (strcmp(h->integrates, "none") && strcmp(h->integrates, "energy") &&
	    strcmp(h->integrates, "energy+charge"))
		return FAIL_FIELD(c, "integrates", "'%s' is not none, energy or energy+charge",
				  h->integrates);
	if ((rc = get_str(c, o, "provenance", 1, buf, sizeof(buf))))
		return rc;
	h->provenance = ergon_provenance_parse(buf);
	if (h->provenance != ERGON_PROV_MEASURED && h->provenance != ERGON_PROV_SYNTHETIC)
		return FAIL_FIELD(c, "provenance", "'%s' is not measured or synthetic", buf);
	if ((rc = get_str(c, o, "clock", 1, buf, sizeof(buf))))
		return rc;
	if (strcmp(buf, "instrument") && strcmp(buf, "host_monotonic"))
		return FAIL_FIELD(c, "clock", "'%s' is not instrument or host_monotonic", buf);
	h->clock_host = strcmp(buf, "host_monotonic") == 0;
	json_t *st = json_object_get(o, "streams");
	if (!json_is_array(st) || json_array_size(st) == 0 || json_array_size(st) > 2)
		return FAIL_FIELD(c, "streams", "expected [\"stats\"], [\"raw\"] or both");
	size_t i;
	json_t *e;
	json_array_foreach(st, i, e)
	{
		const char *s = json_string_value(e);
		if (s && strcmp(s, "stats") == 0)
			h->stream_stats = 1;
		else if (s && strcmp(s, "raw") == 0)
			h->stream_raw = 1;
		else
			return FAIL_FIELD(c, "streams", "element %zu is not \"stats\" or \"raw\"",
					  i);
	}
	if (h->stream_stats && !(h->stats_rate_hz > 0))
		return FAIL_FIELD(c, "stats_rate_hz", "required (> 0) with the stats stream");
	uint64_t in = 0, out = 0;
	if ((rc = get_uint(c, o, "inputs", 0, ERGON_BRIDGE_IO_MAX, &in, NULL)) ||
	    (rc = get_uint(c, o, "outputs", 0, ERGON_BRIDGE_IO_MAX, &out, NULL)))
		return rc;
	h->inputs = (int)in;
	h->outputs = (int)out;
	return 0;
}

static int decode_stats(const struct wctx *c, json_t *o, struct bridge_msg *m)
{
	static const char *const keys[] = {
	    "type",    "sample_id", "sample_count", "t_start_s", "t_end_s",  "i_avg_a", "i_std_a",
	    "i_min_a", "i_max_a",   "v_avg_v",	    "v_std_v",	 "v_min_v",  "v_max_v", "p_avg_w",
	    "p_std_w", "p_min_w",   "p_max_w",	    "charge_c",	 "energy_j", "digital", NULL};
	struct ergon_stats_packet *p = &m->stats;
	int rc = check_keys(c, o, keys), hv = 0, hp = 0, hq = 0, he = 0, hmin = 0, hmax = 0, hd = 0;
	uint64_t dig = 0;
	if (rc || (rc = get_uint(c, o, "sample_id", 1, UINT64_MAX >> 2, &p->sample_id, NULL)) ||
	    (rc = get_uint(c, o, "sample_count", 1, UINT32_MAX, &m->sample_count, NULL)) ||
	    (rc = get_num(c, o, "t_start_s", 1, &p->t_start_s, NULL)) ||
	    (rc = get_num(c, o, "t_end_s", 1, &p->t_end_s, NULL)) ||
	    (rc = get_num(c, o, "i_avg_a", 1, &p->i_avg_a, NULL)) ||
	    (rc = get_num(c, o, "i_std_a", 0, &p->i_std_a, NULL)) ||
	    (rc = get_num(c, o, "i_min_a", 0, &p->i_min_a, &hmin)) ||
	    (rc = get_num(c, o, "i_max_a", 0, &p->i_max_a, &hmax)) ||
	    (rc = get_num(c, o, "v_avg_v", 0, &p->v_avg_v, &hv)) ||
	    (rc = get_num(c, o, "v_std_v", 0, &p->v_std_v, NULL)) ||
	    (rc = get_num(c, o, "v_min_v", 0, &p->v_min_v, NULL)) ||
	    (rc = get_num(c, o, "v_max_v", 0, &p->v_max_v, NULL)) ||
	    (rc = get_num(c, o, "p_avg_w", 0, &p->p_avg_w, &hp)) ||
	    (rc = get_num(c, o, "p_std_w", 0, &p->p_std_w, NULL)) ||
	    (rc = get_num(c, o, "p_min_w", 0, &p->p_min_w, NULL)) ||
	    (rc = get_num(c, o, "p_max_w", 0, &p->p_max_w, NULL)) ||
	    (rc = get_num(c, o, "charge_c", 0, &p->charge_c, &hq)) ||
	    (rc = get_num(c, o, "energy_j", 0, &p->energy_j, &he)) ||
	    (rc = get_uint(c, o, "digital", 0, UINT32_MAX, &dig, &hd)))
		return rc;
	if (m->sample_count == 0)
		return FAIL_FIELD(c, "sample_count", "a packet covers at least one sample");
	if (!(p->t_end_s > p->t_start_s))
		return FAIL_FIELD(c, "t_end_s", "%.9g is not after t_start_s %.9g", p->t_end_s,
				  p->t_start_s);
	if (hq != he)
		return FAIL_FIELD(c, hq ? "charge_c" : "energy_j",
				  "the accumulators come as a pair (charge_c and energy_j)");
	if (hmin != hmax)
		return FAIL_FIELD(c, hmin ? "i_min_a" : "i_max_a",
				  "i_min_a and i_max_a come as a pair");
	if (!hv && (json_object_get(o, "v_std_v") || json_object_get(o, "v_min_v") ||
		    json_object_get(o, "v_max_v")))
		return FAIL_FIELD(c, "v_avg_v", "missing while other v_* fields are present");
	if (!hp && (json_object_get(o, "p_std_w") || json_object_get(o, "p_min_w") ||
		    json_object_get(o, "p_max_w")))
		return FAIL_FIELD(c, "p_avg_w", "missing while other p_* fields are present");
	p->digital = (uint32_t)dig;
	p->fields = (hv ? ERGON_PKT_VOLTAGE : 0u) | (hp ? ERGON_PKT_POWER : 0u) |
		    (hq ? ERGON_PKT_ACCUM : 0u) | (hd ? ERGON_PKT_DIGITAL : 0u) |
		    (hmin ? ERGON_PKT_MINMAX : 0u);
	return 0;
}

/* --- stats_block ---------------------------------------------------------- */

/* A stats_block's fields: the scalars, then its columns in protocol order
 * (float64 columns, where each goes in a packet and its group, then the
 * u32 digital column). */
#define BLK_SCALARS 4 /* type, sample_id, sample_count, n */
#define BLK_F64 16
#define BLK_COLS (BLK_F64 + 1)
#define BLK_KEYS (BLK_SCALARS + BLK_COLS)
static const char *const blk_keys[BLK_KEYS + 1] = {
    "type",	"sample_id", "sample_count", "n",	 "t_start_s", "t_end_s",
    "i_avg_a",	"i_std_a",   "i_min_a",	     "i_max_a",	 "v_avg_v",   "v_std_v",
    "v_min_v",	"v_max_v",   "p_avg_w",	     "p_std_w",	 "p_min_w",   "p_max_w",
    "charge_c", "energy_j",  "digital",	     NULL};
static const size_t blk_off[BLK_F64] = {
    offsetof(struct ergon_stats_packet, t_start_s), offsetof(struct ergon_stats_packet, t_end_s),
    offsetof(struct ergon_stats_packet, i_avg_a),   offsetof(struct ergon_stats_packet, i_std_a),
    offsetof(struct ergon_stats_packet, i_min_a),   offsetof(struct ergon_stats_packet, i_max_a),
    offsetof(struct ergon_stats_packet, v_avg_v),   offsetof(struct ergon_stats_packet, v_std_v),
    offsetof(struct ergon_stats_packet, v_min_v),   offsetof(struct ergon_stats_packet, v_max_v),
    offsetof(struct ergon_stats_packet, p_avg_w),   offsetof(struct ergon_stats_packet, p_std_w),
    offsetof(struct ergon_stats_packet, p_min_w),   offsetof(struct ergon_stats_packet, p_max_w),
    offsetof(struct ergon_stats_packet, charge_c),  offsetof(struct ergon_stats_packet, energy_j)};

/* One column's base64 text (s NULL: absent). */
struct blk_col {
	const char *s;
	size_t len;
};

/* Decode the columns into b->n packets from sample id first (b->p
 * allocated here, owned by the message): the checks of a stats line. */
static int block_fill(const struct wctx *c, struct bridge_stats_block *b, uint64_t first,
		      const struct blk_col col[BLK_COLS])
{
	const char *const *name = blk_keys + BLK_SCALARS;
	for (int i = 0; i < 3; i++)
		if (col[i].s == NULL)
			return FAIL_FIELD(c, name[i], "missing (required)");
	/* The pairs and groups of a stats line: i_min_a with i_max_a, the
	 * accumulators together, v_* and p_* only with their average. */
	int has[BLK_COLS];
	for (int i = 0; i < BLK_COLS; i++)
		has[i] = col[i].s != NULL;
	if (has[4] != has[5])
		return FAIL_FIELD(c, has[4] ? "i_min_a" : "i_max_a",
				  "i_min_a and i_max_a come as a pair");
	if (has[14] != has[15])
		return FAIL_FIELD(c, has[14] ? "charge_c" : "energy_j",
				  "the accumulators come as a pair (charge_c and energy_j)");
	if (!has[6] && (has[7] || has[8] || has[9]))
		return FAIL_FIELD(c, "v_avg_v", "missing while other v_* fields are present");
	if (!has[10] && (has[11] || has[12] || has[13]))
		return FAIL_FIELD(c, "p_avg_w", "missing while other p_* fields are present");
	b->p = calloc(b->n, sizeof(*b->p));
	uint8_t *bytes = malloc(b->n * 8);
	int rc = 0;
	if (b->p == NULL || bytes == NULL) {
		rc = ergon_err_set(c->err, ERGON_ENOMEM, "bridge: out of memory");
		goto done;
	}
	for (int i = 0; i < BLK_COLS && rc == 0; i++) {
		if (!has[i])
			continue;
		size_t width = i < BLK_F64 ? 8 : 4;
		const char *what = i < BLK_F64 ? "float64" : "u32";
		long bad = b64_decode(col[i].s, col[i].len, bytes, b->n * width);
		if (bad < 0) {
			rc = FAIL_FIELD(c, name[i],
					"base64 of %zu characters does not hold %zu %s (%zu bytes, "
					"%zu characters padded)",
					col[i].len, b->n, what, b->n * width,
					(b->n * width + 2) / 3 * 4);
			break;
		}
		if (bad > 0) {
			rc = FAIL_FIELD(c, name[i], "character %ld is not base64", bad);
			break;
		}
		for (size_t k = 0; k < b->n; k++) {
			if (i == BLK_F64) {
				b->p[k].digital = (uint32_t)le_u64(bytes + 4 * k, 4);
				continue;
			}
			uint64_t w = le_u64(bytes + 8 * k, 8);
			double d;
			memcpy(&d, &w, sizeof(d));
			if (!isfinite(d)) {
				rc = FAIL_FIELD(c, name[i],
						"packet %zu is %s (NaN and infinities are refused; "
						"send a packet that has no value as dropped)",
						k, isnan(d) ? "NaN" : "infinite");
				break;
			}
			memcpy((unsigned char *)&b->p[k] + blk_off[i], &d, sizeof(d));
		}
	}
	unsigned fields = (has[6] ? ERGON_PKT_VOLTAGE : 0u) | (has[10] ? ERGON_PKT_POWER : 0u) |
			  (has[14] ? ERGON_PKT_ACCUM : 0u) | (has[BLK_F64] ? ERGON_PKT_DIGITAL : 0u) |
			  (has[4] ? ERGON_PKT_MINMAX : 0u);
	for (size_t k = 0; k < b->n && rc == 0; k++) {
		struct ergon_stats_packet *p = &b->p[k];
		if (!(p->t_end_s > p->t_start_s)) {
			rc = FAIL_FIELD(c, "t_end_s", "packet %zu: %.9g is not after t_start_s %.9g",
					k, p->t_end_s, p->t_start_s);
			break;
		}
		p->sample_id = first + (uint64_t)k * b->sample_count;
		p->fields = fields;
	}
done:
	free(bytes);
	return rc;
}

static int decode_stats_block(const struct wctx *c, json_t *o, struct bridge_msg *m)
{
	struct bridge_stats_block *b = &m->block;
	uint64_t first = 0, n = 0;
	int rc = check_keys(c, o, blk_keys);
	if (rc || (rc = get_uint(c, o, "sample_id", 1, UINT64_MAX >> 2, &first, NULL)) ||
	    (rc = get_uint(c, o, "sample_count", 1, UINT32_MAX, &b->sample_count, NULL)) ||
	    (rc = get_uint(c, o, "n", 1, UINT64_MAX >> 2, &n, NULL)))
		return rc;
	if (b->sample_count == 0)
		return FAIL_FIELD(c, "sample_count", "a packet covers at least one sample");
	/* One range in the message, 0 and 4097 alike (docs/BRIDGE.md). */
	if (n == 0 || n > ERGON_BRIDGE_BLOCK_MAX)
		return FAIL_FIELD(c, "n", "a block holds 1..%d packets", ERGON_BRIDGE_BLOCK_MAX);
	b->n = (size_t)n;
	struct blk_col col[BLK_COLS] = {{0}};
	for (int i = 0; i < BLK_COLS; i++) {
		const char *k = blk_keys[BLK_SCALARS + i];
		json_t *v = json_object_get(o, k);
		if (v == NULL)
			continue;
		if (!json_is_string(v))
			return FAIL_FIELD(c, k, "expected a base64 string of %zu little-endian %s",
					  b->n, i < BLK_F64 ? "float64" : "u32");
		col[i] = (struct blk_col){json_string_value(v), json_string_length(v)};
	}
	return block_fill(c, b, first, col);
}

/* The fast path of a stats_block (issue 33: 100000 packets a second): the
 * line as the Joulescope bridge writes it, read without jansson (whose
 * string parsing costs ~5 us a packet). It accepts only the plain form: no
 * whitespace, integers for the scalars, strings of base64 characters for
 * the columns, every key known and once, nothing after the object, and
 * values that pass every check. Anything else returns 0 with m untouched,
 * and the general path decodes the line (or names what is wrong). 1:
 * decoded. */
static int fast_stats_block(const char *line, size_t len, uint64_t offset, uint64_t line_no,
			    struct bridge_msg *m)
{
	static const char b64ok[256] = {
	    ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1,
	    ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1,
	    ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
	    ['Y'] = 1, ['Z'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
	    ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1,
	    ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1,
	    ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1, ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1,
	    ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1, ['+'] = 1, ['/'] = 1,
	    ['='] = 1};
	static const char head[] = "{\"type\":\"stats_block\"";
	size_t i = sizeof(head) - 1;
	if (len < i + 1 || memcmp(line, head, i) != 0)
		return 0;
	struct blk_col col[BLK_COLS] = {{0}};
	uint64_t num[BLK_SCALARS] = {0};
	int seen[BLK_KEYS] = {1}; /* type */
	while (i < len && line[i] == ',') {
		i++;
		if (i >= len || line[i] != '"')
			return 0;
		size_t k0 = ++i;
		while (i < len && ((line[i] >= 'a' && line[i] <= 'z') || line[i] == '_'))
			i++;
		if (i + 1 >= len || line[i] != '"' || line[i + 1] != ':')
			return 0;
		int key = -1;
		for (int k = 1; k < BLK_KEYS && key < 0; k++)
			if (strlen(blk_keys[k]) == i - k0 && memcmp(blk_keys[k], line + k0, i - k0) == 0)
				key = k;
		if (key < 0 || seen[key])
			return 0;
		seen[key] = 1;
		i += 2;
		if (key < BLK_SCALARS) { /* a JSON integer: 0 or [1-9][0-9]*, at most 2^62 */
			uint64_t v = 0;
			size_t d0 = i;
			while (i < len && line[i] >= '0' && line[i] <= '9' && i - d0 < 19)
				v = v * 10 + (uint64_t)(line[i++] - '0');
			if (i == d0 || (line[d0] == '0' && i - d0 > 1) || v > (UINT64_MAX >> 2) ||
			    (i < len && line[i] >= '0' && line[i] <= '9'))
				return 0;
			num[key] = v;
		} else {
			if (i >= len || line[i] != '"')
				return 0;
			size_t s0 = ++i;
			while (i < len && b64ok[(unsigned char)line[i]])
				i++;
			if (i >= len || line[i] != '"')
				return 0;
			col[key - BLK_SCALARS] = (struct blk_col){line + s0, i - s0};
			i++;
		}
	}
	if (i + 1 != len || line[i] != '}' || !seen[1] || !seen[2] || !seen[3] || num[2] == 0 ||
	    num[2] > UINT32_MAX || num[3] == 0 || num[3] > ERGON_BRIDGE_BLOCK_MAX)
		return 0;
	struct ergon_err quiet = {0};
	struct wctx c = {line, len, offset, line_no, "stats_block", &quiet};
	m->type = BRIDGE_MSG_STATS_BLOCK;
	m->block.sample_count = num[2];
	m->block.n = (size_t)num[3];
	if (block_fill(&c, &m->block, num[1], col) != 0) {
		free(m->block.p);
		memset(m, 0, sizeof(*m));
		return 0;
	}
	return 1;
}

static int decode_raw(const struct wctx *c, json_t *o, struct bridge_msg *m)
{
	static const char *const keys[] = {"type",	"sample_id", "t_s",	"n", "current_a",
					   "voltage_v", "power_w",   "digital", NULL};
	struct bridge_raw *r = &m->raw;
	uint64_t n = 0;
	int rc = check_keys(c, o, keys);
	if (rc || (rc = get_uint(c, o, "sample_id", 1, UINT64_MAX >> 2, &r->sample_id, NULL)) ||
	    (rc = get_num(c, o, "t_s", 1, &r->t_s, NULL)) ||
	    (rc = get_uint(c, o, "n", 1, UINT64_MAX >> 2, &n, NULL)))
		return rc;
	if (n == 0 || n > ERGON_BRIDGE_RAW_MAX)
		return FAIL_FIELD(c, "n", "a block holds 1..%d samples", ERGON_BRIDGE_RAW_MAX);
	r->n = (size_t)n;
	if ((rc = get_f32(c, o, "current_a", 1, r->n, &r->current_a)) ||
	    (rc = get_f32(c, o, "voltage_v", 0, r->n, &r->voltage_v)) ||
	    (rc = get_f32(c, o, "power_w", 0, r->n, &r->power_w)))
		return rc;
	json_t *d = json_object_get(o, "digital");
	if (d) {
		if (!json_is_string(d))
			return FAIL_FIELD(c, "digital", "expected a base64 string of %zu bytes",
					  r->n);
		r->digital = malloc(r->n);
		if (r->digital == NULL)
			return ergon_err_set(c->err, ERGON_ENOMEM, "bridge: out of memory");
		long bad =
		    b64_decode(json_string_value(d), json_string_length(d), r->digital, r->n);
		if (bad != 0)
			return FAIL_FIELD(c, "digital", "not base64 of %zu bytes (one per sample)",
					  r->n);
	}
	return 0;
}

static int decode_small(const struct wctx *c, json_t *o, struct bridge_msg *m)
{
	int rc = 0;
	uint64_t v = 0;
	int has_t = 0;
	switch (m->type) {
	case BRIDGE_MSG_GPI: {
		static const char *const keys[] = {"type", "id", "t_s", "value", NULL};
		if ((rc = check_keys(c, o, keys)) ||
		    (rc = get_uint(c, o, "id", 0, UINT64_MAX >> 2, &m->id, &m->has_id)) ||
		    (rc = get_num(c, o, "t_s", 0, &m->t_s, &has_t)) ||
		    (rc = get_uint(c, o, "value", 1, UINT32_MAX, &v, NULL)))
			return rc;
		m->has_t = has_t;
		m->value = (uint32_t)v;
		return 0;
	}
	case BRIDGE_MSG_ACK: {
		static const char *const keys[] = {"type", "id", "ok", "message", NULL};
		if ((rc = check_keys(c, o, keys)) ||
		    (rc = get_uint(c, o, "id", 1, UINT64_MAX >> 2, &m->id, &m->has_id)) ||
		    (rc = get_bool(c, o, "ok", 1, &m->ok)) ||
		    (rc = get_str(c, o, "message", 0, m->message, sizeof(m->message))))
			return rc;
		return 0;
	}
	case BRIDGE_MSG_HEARTBEAT: {
		static const char *const keys[] = {"type", "t_s", NULL};
		if ((rc = check_keys(c, o, keys)) ||
		    (rc = get_num(c, o, "t_s", 0, &m->t_s, &has_t)))
			return rc;
		m->has_t = has_t;
		return 0;
	}
	case BRIDGE_MSG_DROPPED: {
		static const char *const keys[] = {"type", "sample_id", "count", NULL};
		if ((rc = check_keys(c, o, keys)) ||
		    (rc = get_uint(c, o, "sample_id", 1, UINT64_MAX >> 2, &m->drop_sample_id,
				   NULL)) ||
		    (rc = get_uint(c, o, "count", 1, UINT64_MAX >> 2, &m->drop_count, NULL)))
			return rc;
		if (m->drop_count == 0)
			return FAIL_FIELD(c, "count", "a drop loses at least one sample");
		return 0;
	}
	default: { /* BRIDGE_MSG_ERROR */
		static const char *const keys[] = {"type", "message", NULL};
		if ((rc = check_keys(c, o, keys)) ||
		    (rc = get_str(c, o, "message", 1, m->message, sizeof(m->message))))
			return rc;
		return 0;
	}
	}
}

int bridge_wire_decode(const char *line, size_t len, uint64_t offset, uint64_t line_no,
		       struct bridge_msg *m, struct ergon_err *err)
{
	static const struct {
		const char *name;
		int type;
	} types[] = {
	    {"hello", BRIDGE_MSG_HELLO},     {"stats", BRIDGE_MSG_STATS},
	    {"raw", BRIDGE_MSG_RAW},	     {"gpi", BRIDGE_MSG_GPI},
	    {"ack", BRIDGE_MSG_ACK},	     {"heartbeat", BRIDGE_MSG_HEARTBEAT},
	    {"dropped", BRIDGE_MSG_DROPPED}, {"error", BRIDGE_MSG_ERROR},
	    {"stats_block", BRIDGE_MSG_STATS_BLOCK},
	};
	struct wctx c = {line, len, offset, line_no, NULL, err};
	memset(m, 0, sizeof(*m));
	if (len > ERGON_BRIDGE_LINE_MAX)
		return ergon_err_set(err, ERGON_ETOOBIG,
				     "bridge: stdout byte %llu (line %llu): a line is longer than "
				     "%zu bytes; split raw blocks into smaller ones",
				     (unsigned long long)offset, (unsigned long long)line_no,
				     ERGON_BRIDGE_LINE_MAX);
	if (!bridge_wire_no_fast && fast_stats_block(line, len, offset, line_no, m))
		return 0;
	json_error_t je;
	json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	int rc = 0;
	if (o == NULL) {
		long nf = find_nonfinite(line, len);
		if (nf >= 0)
			return fail_at(&c, (size_t)nf, NULL,
				       "NaN or Infinity is refused (numbers must be finite; leave "
				       "a field out when it has no value, and write JSON with "
				       "json.dumps(..., allow_nan=False))");
		size_t pos = je.position > 0 ? (size_t)je.position - 1 : 0;
		if (pos > len)
			pos = len;
		return fail_at(&c, pos, NULL, "not a JSON object: %s", je.text);
	}
	if (!json_is_object(o)) {
		rc = fail_at(&c, 0, NULL, "expected a JSON object {\"type\": ...}");
		goto done;
	}
	const char *t = json_string_value(json_object_get(o, "type"));
	if (t == NULL) {
		rc = FAIL_FIELD(&c, "type", "missing or not a string");
		goto done;
	}
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(t, types[i].name) == 0)
			m->type = types[i].type, c.type = types[i].name;
	if (m->type == BRIDGE_MSG_NONE) {
		rc = FAIL_FIELD(&c, "type",
				"'%.40s' is not a message type (hello, stats, stats_block, raw, gpi, "
				"ack, heartbeat, dropped, error)",
				t);
		goto done;
	}
	if (m->type == BRIDGE_MSG_HELLO)
		rc = decode_hello(&c, o, &m->hello);
	else if (m->type == BRIDGE_MSG_STATS)
		rc = decode_stats(&c, o, m);
	else if (m->type == BRIDGE_MSG_STATS_BLOCK)
		rc = decode_stats_block(&c, o, m);
	else if (m->type == BRIDGE_MSG_RAW)
		rc = decode_raw(&c, o, m);
	else
		rc = decode_small(&c, o, m);
done:
	json_decref(o);
	return rc;
}

void bridge_msg_cleanup(struct bridge_msg *m)
{
	free(m->raw.current_a);
	free(m->raw.voltage_v);
	free(m->raw.power_w);
	free(m->raw.digital);
	free(m->block.p);
	m->raw.current_a = m->raw.voltage_v = m->raw.power_w = NULL;
	m->raw.digital = NULL;
	m->block.p = NULL;
}

/* --- lines ------------------------------------------------------------- */

int bridge_lines_append(struct bridge_lines *l, const char *data, size_t n, struct ergon_err *err)
{
	if (l->pos > 0) { /* drop the lines already handed out */
		memmove(l->buf, l->buf + l->pos, l->len - l->pos);
		l->len -= l->pos;
		l->offset += l->pos;
		l->pos = 0;
	}
	if (n > ERGON_BRIDGE_APPEND_MAX)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "bridge: internal: append at most %d bytes at once",
				     ERGON_BRIDGE_APPEND_MAX);
	/* The held bytes are one partial line (at most LINE_MAX, checked
	 * below on every append), so this bound is never exceeded. */
	if (l->len + n > l->cap) {
		size_t nc = l->cap ? l->cap : 65536;
		while (nc < l->len + n)
			nc *= 2;
		if (nc > ERGON_BRIDGE_LINE_MAX + 1 + ERGON_BRIDGE_APPEND_MAX)
			nc = ERGON_BRIDGE_LINE_MAX + 1 + ERGON_BRIDGE_APPEND_MAX;
		char *nb = realloc(l->buf, nc);
		if (nb == NULL)
			return ergon_err_set(err, ERGON_ENOMEM, "bridge: out of memory");
		l->buf = nb;
		l->cap = nc;
	}
	memcpy(l->buf + l->len, data, n);
	l->len += n;
	size_t tail = 0; /* start of the unterminated rest */
	for (size_t i = l->len; i > 0; i--)
		if (l->buf[i - 1] == '\n') {
			tail = i;
			break;
		}
	if (l->len - tail > ERGON_BRIDGE_LINE_MAX) {
		uint64_t line = l->line_no + 1;
		for (size_t i = 0; i < tail; i++)
			line += l->buf[i] == '\n';
		return ergon_err_set(err, ERGON_ETOOBIG,
				     "bridge: stdout byte %llu (line %llu): a line is longer than "
				     "%zu bytes; split raw blocks into smaller ones",
				     (unsigned long long)(l->offset + tail),
				     (unsigned long long)line, ERGON_BRIDGE_LINE_MAX);
	}
	return 0;
}

int bridge_lines_next(struct bridge_lines *l, const char **line, size_t *len, uint64_t *offset,
		      uint64_t *line_no)
{
	char *start = l->buf + l->pos;
	char *nl = l->len > l->pos ? memchr(start, '\n', l->len - l->pos) : NULL;
	if (nl == NULL)
		return 0;
	*line = start;
	*len = (size_t)(nl - start);
	*offset = l->offset + l->pos;
	*line_no = ++l->line_no;
	l->pos += *len + 1;
	return 1;
}

size_t bridge_lines_pending(const struct bridge_lines *l)
{
	return l->len - l->pos;
}

void bridge_lines_free(struct bridge_lines *l)
{
	free(l->buf);
	memset(l, 0, sizeof(*l));
}

int bridge_wire_command(char *buf, size_t cap, const char *cmd, uint64_t id, const char *extra)
{
	int n = snprintf(buf, cap, "{\"cmd\":\"%s\",\"id\":%llu%s%s}\n", cmd,
			 (unsigned long long)id, extra ? "," : "", extra ? extra : "");
	return n < 0 || (size_t)n >= cap ? -1 : n;
}
