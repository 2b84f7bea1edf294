/* The replay CSV format: parsing and validation (no device, no clock). */
#include "drivers/instruments/replay/replay.h"
#include "ergon/artifact.h"
#include "ergon/fileio.h"
#include "ergon/parse.h"
#include "ergon/plausible.h"
#include "ergon/select.h"
#include "ergon/utf8.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { COL_T, COL_V, COL_I, COL_P, COL_TEMP, COL_N };
static const char *const col_names[COL_N] = {"t_s", "voltage_v", "current_a", "power_w",
					     "temperature_c"};

/* 1-based column of field idx of the line [p, lend). */
static size_t field_col(const char *p, const char *lend, int idx)
{
	const char *q = p;
	for (int c = 0; c < idx; c++)
		q = memchr(q, ',', (size_t)(lend - q)) + 1;
	return (size_t)(q - p) + 1;
}

/* Line number of data row `row` (0-based, after the header) of text. */
static size_t row_line(const char *text, size_t len, size_t row)
{
	const char *p = text, *end = text + len;
	size_t line = 0, data = 0;
	int header = 1;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = (size_t)((nl ? nl : end) - p);
		line++;
		if (ll && p[ll - 1] == '\r')
			ll--;
		if (ll > 0 && p[0] != '#') {
			if (!header && data++ == row)
				return line;
			header = 0;
		}
		p = nl ? nl + 1 : end;
	}
	return line;
}

/* A replay is a recording with a (roughly) steady period: a step in t_s of
 * more than ERGON_REPLAY_HOLE_PERIODS median periods is a hole in it (the
 * same 10 periods as run.sampler_gap), refused with its line. */
static int check_holes(const char *path, const char *text, size_t len, const struct replay_data *d,
		       struct ergon_err *err)
{
	size_t m = d->n - 1;
	double *dt = malloc(m * sizeof(*dt));
	if (dt == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", path);
	for (size_t i = 0; i < m; i++)
		dt[i] = d->s[i + 1].t_s - d->s[i].t_s;
	double med = ergon_select_kth(dt, m, (m + 1) / 2);
	free(dt);
	for (size_t i = 0; i < m; i++) {
		double step = d->s[i + 1].t_s - d->s[i].t_s;
		if (step > ERGON_REPLAY_HOLE_PERIODS * med)
			return ergon_err_set(
			    err, ERGON_EPARSE,
			    "%s:%zu:1: t_s jumps by %.9g s after %.9g, %.0f times the recording's "
			    "median period %.9g s (more than %d periods): the recording has a "
			    "hole, "
			    "which a replay would play as missing readings; cut the recording "
			    "there "
			    "or re-record",
			    path, row_line(text, len, i + 1), step, d->s[i].t_s, step / med, med,
			    ERGON_REPLAY_HOLE_PERIODS);
	}
	return 0;
}

/* "# key: value" header lines. */
static void header_line(struct replay_data *d, const char *line, size_t len)
{
	const char *p = line + 1;
	const char *end = line + len;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	static const char key[] = "provenance:";
	if ((size_t)(end - p) > sizeof(key) - 1 && strncmp(p, key, sizeof(key) - 1) == 0) {
		p += sizeof(key) - 1;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		size_t l = (size_t)(end - p);
		while (l && (p[l - 1] == ' ' || p[l - 1] == '\r'))
			l--;
		char v[32];
		if (l < sizeof(v)) {
			memcpy(v, p, l);
			v[l] = '\0';
			d->header_provenance = ergon_provenance_parse(v);
			if (d->header_provenance == 0)
				d->header_provenance = -1; /* present but unknown */
		} else {
			d->header_provenance = -1;
		}
	}
}

int ergon_replay_parse(const char *path, const char *text, size_t len, struct replay_data *d,
		       struct ergon_err *err)
{
	int map[COL_N];
	for (int c = 0; c < COL_N; c++)
		map[c] = -1;
	int ncols = 0, have_header = 0;
	size_t cap = 0;
	size_t lineno = 0;
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		size_t ll = (size_t)(le - p);
		lineno++;
		if (ll && p[ll - 1] == '\r')
			ll--;
		if (ll == 0) {
			p = nl ? nl + 1 : end;
			continue;
		}
		if (ll > ERGON_REPLAY_LINE_MAX)
			return ergon_err_set(
			    err, ERGON_ETOOBIG,
			    "%s:%zu:%d: line longer than %d bytes (a recording's row "
			    "is a few dozen): is this a replay CSV?",
			    path, lineno, ERGON_REPLAY_LINE_MAX + 1, ERGON_REPLAY_LINE_MAX);
		if (p[0] == '#') {
			header_line(d, p, ll);
			p = nl ? nl + 1 : end;
			continue;
		}
		for (size_t i = 0; i < ll;) {
			size_t l = ergon_utf8_len(p + i, ll - i);
			if (l == 0 || p[i] == '\0')
				return ergon_err_set(
				    err, ERGON_EPARSE,
				    "%s:%zu:%zu: byte 0x%02x is not UTF-8 text: a "
				    "recording is ASCII or UTF-8 (was it edited in "
				    "another encoding, or corrupted?)",
				    path, lineno, i + 1, (unsigned)(unsigned char)p[i]);
			i += l;
		}
		double vals[16];
		int col = 0;
		const char *f = p;
		const char *lend = p + ll;
		while (1) {
			const char *comma = memchr(f, ',', (size_t)(lend - f));
			const char *fe = comma ? comma : lend;
			size_t column = (size_t)(f - p) + 1;
			if (col >= 16)
				return ergon_err_set(err, ERGON_EPARSE,
						     "%s:%zu:%zu: more than 16 columns", path,
						     lineno, column);
			if (!have_header) {
				for (int c = 0; c < COL_N; c++)
					if ((size_t)(fe - f) == strlen(col_names[c]) &&
					    strncmp(f, col_names[c], (size_t)(fe - f)) == 0) {
						if (map[c] >= 0)
							return ergon_err_set(
							    err, ERGON_EPARSE,
							    "%s:%zu:%zu: column %s appears twice",
							    path, lineno, column, col_names[c]);
						map[c] = col;
					}
			} else {
				if (col >= ncols)
					return ergon_err_set(err, ERGON_EPARSE,
							     "%s:%zu:%zu: more fields than the %d "
							     "header columns",
							     path, lineno, column, ncols);
				double v;
				int prc = ergon_parse_double_n(f, (size_t)(fe - f), &v);
				if (prc == ERGON_ERANGE)
					return ergon_err_set(
					    err, ERGON_EPARSE,
					    "%s:%zu:%zu: '%.*s' underflows (a magnitude under "
					    "2.2250738585072014e-308, read as 0 or a denormal); "
					    "write 0 or the value to a resolution a double holds",
					    path, lineno, column,
					    (int)((fe - f) > 40 ? 40 : (fe - f)), f);
				if (prc)
					return ergon_err_set(
					    err, ERGON_EPARSE, "%s:%zu:%zu: '%.*s' is not a number",
					    path, lineno, column,
					    (int)((fe - f) > 40 ? 40 : (fe - f)), f);
				if (!isfinite(v))
					return ergon_err_set(
					    err, ERGON_EPARSE,
					    "%s:%zu:%zu: %.*s is not finite; a "
					    "recording with NaN or Inf readings is "
					    "refused (fix or cut the recording)",
					    path, lineno, column,
					    (int)((fe - f) > 40 ? 40 : (fe - f)), f);
				vals[col] = v;
			}
			col++;
			if (comma == NULL)
				break;
			f = comma + 1;
		}
		if (!have_header) {
			have_header = 1;
			ncols = col;
			for (int c = 0; c < COL_P; c++)
				if (map[c] < 0)
					return ergon_err_set(
					    err, ERGON_EPARSE,
					    "%s:%zu:1: header lacks column %s; "
					    "expected t_s,voltage_v,current_a[,power_w]"
					    "[,temperature_c]",
					    path, lineno, col_names[c]);
			d->has_power = map[COL_P] >= 0;
			d->has_temp = map[COL_TEMP] >= 0;
		} else {
			if (col != ncols)
				return ergon_err_set(err, ERGON_EPARSE,
						     "%s:%zu:%zu: %d fields, the header has %d",
						     path, lineno, ll + 1, col, ncols);
			double t = vals[map[COL_T]];
			size_t tcol = 1;
			{
				/* Column of the t_s field, for the message. */
				const char *q = p;
				for (int c = 0; c < map[COL_T]; c++)
					q = memchr(q, ',', (size_t)(lend - q)) + 1;
				tcol = (size_t)(q - p) + 1;
			}
			if (t < 0)
				return ergon_err_set(err, ERGON_EPARSE,
						     "%s:%zu:%zu: t_s = %g is negative; times are "
						     "seconds from the start of the recording",
						     path, lineno, tcol, t);
			if (d->n > 0 && !(t > d->s[d->n - 1].t_s))
				return ergon_err_set(
				    err, ERGON_EPARSE,
				    "%s:%zu:%zu: t_s = %.9g does not increase (previous "
				    "%.9g); samples must be in strictly increasing time",
				    path, lineno, tcol, t, d->s[d->n - 1].t_s);
			if (d->n == cap) {
				size_t nc = cap ? cap * 2 : 1024;
				if (nc > REPLAY_MAX_SAMPLES)
					nc = REPLAY_MAX_SAMPLES;
				if (d->n >= nc)
					return ergon_err_set(err, ERGON_ETOOBIG,
							     "%s:%zu: more than %d samples", path,
							     lineno, REPLAY_MAX_SAMPLES);
				struct ergon_sample *ns = realloc(d->s, nc * sizeof(*ns));
				if (ns == NULL)
					return ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory",
							     path);
				d->s = ns;
				cap = nc;
			}
			struct ergon_sample *s = &d->s[d->n++];
			*s = (struct ergon_sample){0};
			s->t_s = t;
			s->voltage_v = vals[map[COL_V]];
			s->current_a = vals[map[COL_I]];
			s->power_w = d->has_power ? vals[map[COL_P]] : s->voltage_v * s->current_a;
			s->fields = ERGON_F_VOLTAGE | ERGON_F_CURRENT | ERGON_F_POWER;
			if (d->has_temp) {
				s->temp_c = vals[map[COL_TEMP]];
				s->fields |= ERGON_F_TEMP;
			}
			/* Beyond the widest rail a bench instrument measures, a
			 * value is not a reading but a corrupt file. */
			static const struct {
				int c;
				double max;
				const char *unit;
			} lim[] = {{COL_V, ERGON_REPLAY_MAX_ABS_V, "V"},
				   {COL_I, ERGON_REPLAY_MAX_ABS_A, "A"},
				   {COL_P, ERGON_REPLAY_MAX_ABS_W, "W"}};
			for (size_t k = 0; k < sizeof(lim) / sizeof(lim[0]); k++) {
				int c = lim[k].c;
				if (map[c] < 0 || !(fabs(vals[map[c]]) > lim[k].max))
					continue;
				return ergon_err_set(
				    err, ERGON_EPARSE,
				    "%s:%zu:%zu: %s %g %s is physically impossible (beyond the "
				    "+/-%g %s of any bench rail): the row is corrupt; fix or drop "
				    "it",
				    path, lineno, field_col(p, lend, map[c]), col_names[c],
				    vals[map[c]], lim[k].unit, lim[k].max, lim[k].unit);
			}
		}
		p = nl ? nl + 1 : end;
	}
	if (!have_header)
		return ergon_err_set(err, ERGON_EPARSE, "%s:1:1: empty recording (no header line)",
				     path);
	if (d->n < 2)
		return ergon_err_set(err, ERGON_EPARSE, "%s: fewer than 2 samples", path);
	return check_holes(path, text, len, d, err);
}

void ergon_replay_data_free(struct replay_data *d)
{
	free(d->s);
	d->s = NULL;
	d->n = 0;
}
