/* ergon_jls_ref_check: reads a JLS file with the reference JLS library's
 * own readers (jetperch/jls 0.17: `jls info`, `jls inspect`,
 * `jls fsr_statistics`, `jls_dump`; ../shared/tools/jls-ref) and checks
 * what they say against statistics this program computes from the
 * samples, for tests/functional/test_jls_reference_readers.sh.
 *
 *   ergon_jls_ref_check TOOLS_DIR FILE [--spans 10,100,...] [--issue-spans]
 *                       [--signals 1,4,...]
 *
 * For every FSR signal of FILE (f32 and u1), or those --signals names:
 * 1. `jls info` and `jls inspect` exit 0 and log no warning or error (the
 *    library's log lines are "<time>Z <level> <file>:<line>: ...").
 * 2. The samples are the library's: f32 through `jls_dump FILE ID N`, u1
 *    through `jls_dump FILE ID 0 1 N` (the library's statistics over spans
 *    of one sample, read from the samples). Their count is what `jls info`
 *    says.
 * 3. Every summary entry of every level, parsed here from the file (an
 *    independent walk of the chunks, not ergon's reader), holds the
 *    statistics of the samples it covers: mean, population std, min, max
 *    of the finite ones, each rounded to f32; NaN when none is finite. A
 *    level holds floor(N / step) entries (the complete ones, as the
 *    reference writer writes them), the levels run from 1 without a gap,
 *    and the top one has one chunk (the reference reader starts every
 *    seek from its first INDEX).
 * 4. For each span length S of --spans, each level's entry length that
 *    the library would use (N >= 25 x step), and the whole file:
 *    `jls_dump FILE ID 0 S N/S` (mean, %.9e) and `jls fsr_statistics FILE
 *    ID 0 S N/S` (mean, std, min, max, six decimals) against the samples'
 *    own: mean, min and max equal; the std equals the samples' (Bessel's)
 *    where the library reads samples, the entry's stored (population) std
 *    where a span is one entry, and else lies between the samples' std
 *    x sqrt(1 - 1/D) and the samples' std: the library combines entries
 *    as samples (k - 1 weights), which takes at most 1/D of the variance
 *    (D the samples per level-1 entry). The library's level choice and
 *    combination are facts read from its source (src/reader.c,
 *    fsr_statistics and jls_core_fsr_statistics).
 *    A span with lost samples (NaN) reads NaN where the library reads
 *    samples; where it reads entries, the finite samples' min and max and
 *    their mean within the lost fraction of the range (the library weighs
 *    an entry by its length, the entry leaves NaN out).
 * 5. --issue-spans: the spans of issue 29 ([49000, 50000), [40000, 50000),
 *    [0, 50000), one statistic each) and the 1000-sample span 49 of a run
 *    of spans, printed as "figure:" lines and checked like the others.
 * Exit 0 when everything holds, 1 with one line per failure. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *tools, *file;
static int failures;

#define FAIL(...)                                  \
	do {                                       \
		if (failures++ < 40) {             \
			printf("FAIL %s: ", file); \
			printf(__VA_ARGS__);       \
			printf("\n");              \
		}                                  \
	} while (0)

/* Run a command; its stdout (and stderr with merge) in a malloc'd string. */
static char *run(const char *cmd, int merge, int *status)
{
	char *full = NULL;
	if (asprintf(&full, "%s%s", cmd, merge ? " 2>&1" : " 2>/dev/null") < 0)
		exit(2);
	FILE *p = popen(full, "r");
	if (p == NULL) {
		perror(full);
		exit(2);
	}
	size_t cap = 1 << 16, len = 0;
	char *b = malloc(cap);
	size_t got;
	while (b && (got = fread(b + len, 1, cap - len - 1, p)) > 0) {
		len += got;
		if (cap - len < 4096) {
			cap *= 2;
			b = realloc(b, cap);
		}
	}
	if (b == NULL)
		exit(2);
	b[len] = 0;
	int st = pclose(p);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	free(full);
	return b;
}

/* The library's data lines: its log lines ("2026-...Z I ...") interleave. */
static int is_log_line(const char *l)
{
	return l[0] >= '0' && l[0] <= '9' && strlen(l) > 28 && l[4] == '-' &&
	       strstr(l, "Z ") != NULL;
}

static void check_no_warning(const char *what)
{
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "'%s/jls' %s '%s'", tools, what, file);
	int st = 0;
	char *out = run(cmd, 1, &st);
	if (st != 0)
		FAIL("jls %s exits %d", what, st);
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
		if (strstr(l, "### ERROR"))
			FAIL("jls %s: %s", what, l);
		if (is_log_line(l)) {
			const char *z = strstr(l, "Z ");
			char lvl = z[2];
			if (lvl != 'I' && lvl != 'D')
				FAIL("jls %s logs: %s", what, l);
		}
	}
	free(out);
}

/* ---- the file, parsed here ---- */
struct summ {
	int level;
	int64_t ts;
	uint32_t n;
	const uint8_t *e; /* n x 4 f32: mean, std, min, max */
	int is_index;
};

struct sigdef {
	int defined, u1;
	uint32_t spd, dec, eps, sd;
	char name[64];
	int64_t id0;
	int have_id0;
	struct summ *s;
	size_t ns, cap;
};

static struct sigdef sig[256];
static uint8_t *fb;
static size_t flen;

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static void parse_file(void)
{
	FILE *f = fopen(file, "rb");
	if (f == NULL) {
		perror(file);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	flen = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	fb = malloc(flen ? flen : 1);
	if (fb == NULL || fread(fb, 1, flen, f) != flen)
		exit(2);
	fclose(f);
	size_t off = 32;
	while (off + 32 <= flen) {
		const uint8_t *h = fb + off;
		uint8_t tag = h[16];
		unsigned meta = (unsigned)h[18] | (unsigned)h[19] << 8;
		uint32_t plen = rd32(h + 20);
		size_t span = plen ? ((plen + 4u + 7u) & ~7u) : 0;
		if (off + 32 + span > flen)
			break;
		const uint8_t *p = h + 32;
		unsigned id = meta & 0xffu, level = meta >> 12;
		if (tag == 0x02 && plen >= 128 && meta < 256) {
			struct sigdef *s = &sig[meta];
			s->defined = p[2] == 0; /* FSR */
			s->u1 = rd32(p + 4) == 0x0103;
			s->spd = rd32(p + 12);
			s->dec = rd32(p + 16);
			s->eps = rd32(p + 20);
			s->sd = rd32(p + 24);
			snprintf(s->name, sizeof s->name, "%s", (const char *)p + 128);
		} else if (tag == 0x22 && !sig[id].have_id0 && plen >= 16) {
			sig[id].id0 = (int64_t)rd64(p);
			sig[id].have_id0 = 1;
		} else if ((tag == 0x24 || tag == 0x23) && plen >= 16) {
			struct sigdef *s = &sig[id];
			if (s->ns == s->cap) {
				s->cap = s->cap ? 2 * s->cap : 64;
				s->s = realloc(s->s, s->cap * sizeof(*s->s));
				if (s->s == NULL)
					exit(2);
			}
			s->s[s->ns++] = (struct summ){.level = (int)level,
						      .ts = (int64_t)rd64(p),
						      .n = rd32(p + 8),
						      .e = p + 16,
						      .is_index = tag == 0x23};
		}
		off += 32 + span;
	}
}

/* ---- statistics of the samples ---- */
struct st {
	uint64_t n;
	double mean, m2, min, max, maxabs;
};

static struct st stats(const double *x, uint64_t a, uint64_t b)
{
	struct st s = {.min = INFINITY, .max = -INFINITY};
	double sum = 0;
	for (uint64_t i = a; i < b; i++) {
		if (!isfinite(x[i]))
			continue;
		s.n++;
		sum += x[i];
		s.min = fmin(s.min, x[i]);
		s.max = fmax(s.max, x[i]);
		s.maxabs = fmax(s.maxabs, fabs(x[i]));
	}
	if (s.n == 0)
		return s;
	s.mean = sum / (double)s.n;
	for (uint64_t i = a; i < b; i++)
		if (isfinite(x[i]))
			s.m2 += (x[i] - s.mean) * (x[i] - s.mean);
	return s;
}

static double pop_std(const struct st *s)
{
	return s->n ? sqrt(s->m2 / (double)s->n) : NAN;
}

static double sample_std(const struct st *s)
{
	return s->n > 1 ? sqrt(s->m2 / (double)(s->n - 1)) : 0.0;
}

static int near(double got, double want, double tol)
{
	return fabs(got - want) <= tol;
}

/* count lines of width comma-separated numbers from a reference tool
 * (jls_dump: one per line; jls fsr_statistics: mean,std,min,max). */
static double *read_values(const char *cmd, uint64_t count, int width, const char *what)
{
	int st = 0;
	char *out = run(cmd, 0, &st);
	double *x = calloc((size_t)width * (count ? count : 1), sizeof(double));
	uint64_t n = 0;
	int parsed = 1;
	if (x == NULL)
		exit(2);
	char *save = NULL;
	for (char *l = strtok_r(out, "\n", &save); l && parsed; l = strtok_r(NULL, "\n", &save)) {
		if (is_log_line(l))
			continue;
		for (int j = 0; j < width && n < count; j++) {
			char *end = l;
			x[(size_t)width * n + (size_t)j] = strtod(l, &end);
			parsed = end != l && (j + 1 == width || *end == ',');
			if (!parsed)
				break;
			l = end + 1;
		}
		n++;
	}
	free(out);
	if (st != 0 || n != count || !parsed) {
		FAIL("%s: exit %d, %llu lines of %d values for %llu", what, st,
		     (unsigned long long)n, width, (unsigned long long)count);
		free(x);
		return NULL;
	}
	return x;
}

static uint64_t info_length(const char *info, unsigned id)
{
	char head[32];
	snprintf(head, sizeof head, "\n  %u:\n", id);
	const char *sigs = strstr(info, "Signals:");
	const char *p = sigs ? strstr(sigs, head) : NULL;
	if (p == NULL)
		return UINT64_MAX;
	/* This signal's block ends at the next "  <id>:" line. */
	const char *end = p + strlen(head);
	while ((end = strstr(end, "\n  ")) != NULL && !(end[3] >= '0' && end[3] <= '9'))
		end++;
	const char *l = strstr(p, "length: ");
	if (l == NULL || (end && l > end))
		return UINT64_MAX;
	return strtoull(l + 8, NULL, 10);
}

/* 3: the stored entries. */
static void check_entries(unsigned id, const double *x, uint64_t n)
{
	struct sigdef *s = &sig[id];
	uint64_t step = s->dec, top_chunks = 0;
	int top = 0;
	for (int level = 1; level < 16; level++, step *= s->sd) {
		uint64_t entries = 0, chunks = 0, index_chunks = 0;
		for (size_t c = 0; c < s->ns; c++) {
			const struct summ *m = &s->s[c];
			if (m->level != level)
				continue;
			if (m->is_index) {
				index_chunks++;
				continue;
			}
			chunks++;
			int64_t first = m->ts - s->id0;
			uint64_t chunk_span = (uint64_t)s->eps * step;
			if (first < 0 || (uint64_t)first % chunk_span != 0)
				FAIL("%s level %d: SUMMARY at sample %lld is not on a chunk edge "
				     "(%llu samples)",
				     s->name, level, (long long)first,
				     (unsigned long long)chunk_span);
			for (uint32_t i = 0; i < m->n; i++) {
				uint64_t a = (uint64_t)first + i * step, b = a + step;
				entries++;
				if (b > n) {
					FAIL("%s level %d entry %u covers [%llu, %llu) past the "
					     "end %llu",
					     s->name, level, i, (unsigned long long)a,
					     (unsigned long long)b, (unsigned long long)n);
					continue;
				}
				float e[4];
				memcpy(e, m->e + 16 * i, 16);
				struct st t = stats(x, a, b);
				int ok;
				if (t.n == 0)
					ok = isnan(e[0]) && isnan(e[1]) && isnan(e[2]) &&
					     isnan(e[3]);
				else
					ok = near(e[0], t.mean, 1.2e-7 * t.maxabs + 1e-30) &&
					     near(e[1], pop_std(&t),
						  1e-6 * pop_std(&t) + 1e-9 * t.maxabs) &&
					     e[2] == (float)t.min && e[3] == (float)t.max;
				if (!ok)
					FAIL("%s level %d entry [%llu, %llu): stored mean %.9g std "
					     "%.9g min %.9g max %.9g; the samples' %.9g %.9g %.9g "
					     "%.9g",
					     s->name, level, (unsigned long long)a,
					     (unsigned long long)b, e[0], e[1], e[2], e[3], t.mean,
					     pop_std(&t), t.min, t.max);
			}
		}
		if (index_chunks != chunks)
			FAIL("%s level %d: %llu INDEX and %llu SUMMARY chunks", s->name, level,
			     (unsigned long long)index_chunks, (unsigned long long)chunks);
		if (chunks == 0)
			break;
		top = level;
		top_chunks = chunks;
		if (entries != n / step)
			FAIL("%s level %d: %llu entries, the complete ones are %llu", s->name,
			     level, (unsigned long long)entries, (unsigned long long)(n / step));
		printf("  %s level %d: %llu chunk(s), %llu entries of %llu samples\n", s->name,
		       level, (unsigned long long)chunks, (unsigned long long)entries,
		       (unsigned long long)step);
	}
	if (n > 0 && top == 0)
		FAIL("%s: no summary level (every sample must be reachable from a level-1 INDEX)",
		     s->name);
	if (top > 0 && top_chunks != 1)
		FAIL("%s: the top level %d has %llu chunks; the reader seeks from its first only",
		     s->name, top, (unsigned long long)top_chunks);
	for (size_t c = 0; c < s->ns; c++)
		if (s->s[c].level > top)
			FAIL("%s: a chunk at level %d above level %d, with none between", s->name,
			     s->s[c].level, top);
}

/* The level the library reads for count spans of len samples (reader.c:
 * up a level while len >= the level's entry and the whole request covers
 * 25 of them) and that level's entry length. */
static int lib_level(const struct sigdef *s, uint64_t len, uint64_t count, uint64_t *step)
{
	int level = 0;
	uint64_t next = s->dec;
	*step = 1;
	while (len >= next && len * count >= 25 * next) {
		level++;
		*step = next;
		next *= s->sd;
	}
	return level;
}

/* 4: spans [start + k x len, +len), k < count. */
static void check_spans(unsigned id, const double *x, uint64_t start, uint64_t len, uint64_t count,
			int figure)
{
	struct sigdef *s = &sig[id];
	char cmd[4096], what[256];
	snprintf(cmd, sizeof cmd, "'%s/jls_dump' '%s' %u %llu %llu %llu", tools, file, id,
		 (unsigned long long)start, (unsigned long long)len, (unsigned long long)count);
	snprintf(what, sizeof what, "jls_dump %s %llu+%llux%llu", s->name,
		 (unsigned long long)start, (unsigned long long)len, (unsigned long long)count);
	double *m = read_values(cmd, count, 1, what);
	snprintf(cmd, sizeof cmd, "'%s/jls' fsr_statistics '%s' %u %llu %llu %llu", tools, file, id,
		 (unsigned long long)start, (unsigned long long)len, (unsigned long long)count);
	double *q = read_values(cmd, count, 4, what);
	if (m == NULL || q == NULL) {
		free(m);
		free(q);
		return;
	}
	uint64_t step = 1;
	int level = lib_level(s, len, count, &step);
	uint64_t bad = 0;
	for (uint64_t k = 0; k < count; k++) {
		uint64_t a = start + k * len;
		struct st t = stats(x, a, a + len);
		double tol = 1.2e-7 * t.maxabs + 1e-9 * fabs(t.mean) + 1e-30;
		double p6 = 5.1e-7; /* six decimals */
		double sd = sample_std(&t), lo = sd, hi = sd;
		if (level > 0) {
			if (len == step && k + 1 < count)
				lo = hi = pop_std(&t);
			else
				lo = sd * sqrt(1.0 - 1.0 / (double)s->dec);
		}
		double stol = 1e-6 * sd + 1e-9 * t.maxabs + p6;
		int ok;
		if (t.n == len) {
			ok = near(m[k], t.mean, tol) && near(q[4 * k], t.mean, tol + p6) &&
			     q[4 * k + 1] >= lo - stol && q[4 * k + 1] <= hi + stol &&
			     near(q[4 * k + 2], t.min, 1e-7 * fabs(t.min) + p6) &&
			     near(q[4 * k + 3], t.max, 1e-7 * fabs(t.max) + p6);
		} else if (isnan(m[k])) {
			/* Lost samples (NaN): the library's statistics from samples
			 * add them in (NaN); entries leave them out, as the
			 * reference writer makes them. */
			ok = t.n < len;
		} else {
			/* From entries: the finite samples' min and max; the mean
			 * within the lost fraction of the range (the library
			 * weights an entry by its length, not its finite count). */
			double slack = (double)(len - t.n) / (double)len * (t.max - t.min);
			ok = t.n > 0 && near(m[k], t.mean, tol + slack) &&
			     near(q[4 * k + 2], t.min, 1e-7 * fabs(t.min) + p6) &&
			     near(q[4 * k + 3], t.max, 1e-7 * fabs(t.max) + p6);
		}
		if (!ok && bad++ < 3)
			FAIL("%s [%llu, %llu) (level %d): library mean %.9e (%.6f) std %.6f min "
			     "%.6f max %.6f; samples mean %.9e std %.6f..%.6f min %.6f max %.6f",
			     s->name, (unsigned long long)a, (unsigned long long)(a + len), level,
			     m[k], q[4 * k], q[4 * k + 1], q[4 * k + 2], q[4 * k + 3], t.mean, lo,
			     hi, t.min, t.max);
		if (figure && count > 1 && k == (uint64_t)figure - 1)
			printf("figure: %s [%llu, %llu) as span %llu of %llu: library mean "
			       "%.9e, samples %.9e\n",
			       s->name, (unsigned long long)a, (unsigned long long)(a + len),
			       (unsigned long long)k, (unsigned long long)count, m[k], t.mean);
	}
	if (figure && count == 1)
		printf("figure: %s [%llu, %llu): library mean %.9e, samples %.9e\n", s->name,
		       (unsigned long long)start, (unsigned long long)(start + len), m[0],
		       stats(x, start, start + len).mean);
	free(m);
	free(q);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: ergon_jls_ref_check TOOLS_DIR FILE [--spans 10,100,...] "
				"[--issue-spans] [--signals 1,4,...]\n");
		return 2;
	}
	tools = argv[1];
	file = argv[2];
	uint64_t spans[32];
	size_t nspans = 0;
	int issue = 0, only = 0;
	static int wanted[256];
	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "--signals") == 0 && i + 1 < argc) {
			char *p = argv[++i];
			only = 1;
			while (*p) {
				unsigned long v = strtoul(p, &p, 10);
				if (v < 256)
					wanted[v] = 1;
				if (*p != ',')
					break;
				p++;
			}
			continue;
		}
		if (strcmp(argv[i], "--spans") == 0 && i + 1 < argc) {
			char *p = argv[++i];
			while (*p && nspans < 32) {
				spans[nspans++] = strtoull(p, &p, 10);
				if (*p == ',')
					p++;
			}
		} else if (strcmp(argv[i], "--issue-spans") == 0) {
			issue = 1;
		} else {
			fprintf(stderr, "ergon_jls_ref_check: unknown argument %s\n", argv[i]);
			return 2;
		}
	}
	check_no_warning("info");
	check_no_warning("inspect");
	parse_file();
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "'%s/jls' info '%s'", tools, file);
	int st = 0;
	char *info = run(cmd, 0, &st);
	unsigned nsig = 0;
	for (unsigned id = 1; id < 256; id++) {
		struct sigdef *s = &sig[id];
		if (!s->defined || (only && !wanted[id]))
			continue;
		nsig++;
		uint64_t n = info_length(info, id);
		if (n == UINT64_MAX) {
			FAIL("jls info gives no length for signal %u (%s)", id, s->name);
			continue;
		}
		printf("%s: %llu samples, %u per DATA chunk, %u per level-1 entry, %u entries per "
		       "SUMMARY, %u per entry above\n",
		       s->name, (unsigned long long)n, s->spd, s->dec, s->eps, s->sd);
		if (n == 0)
			continue;
		if (s->u1)
			snprintf(cmd, sizeof cmd, "'%s/jls_dump' '%s' %u 0 1 %llu", tools, file, id,
				 (unsigned long long)n);
		else
			snprintf(cmd, sizeof cmd, "'%s/jls_dump' '%s' %u %llu", tools, file, id,
				 (unsigned long long)n);
		char what[128];
		snprintf(what, sizeof what, "the samples of %s", s->name);
		double *x = read_values(cmd, n, 1, what);
		if (x == NULL)
			continue;
		check_entries(id, x, n);
		uint64_t lens[48];
		size_t nl = 0;
		for (size_t i = 0; i < nspans; i++)
			lens[nl++] = spans[i];
		/* Each level's entry where the library reads that level. */
		for (uint64_t step = s->dec; n >= 25 * step && nl < 47; step *= s->sd) {
			int dup = 0;
			for (size_t i = 0; i < nl; i++)
				dup |= lens[i] == step;
			if (!dup)
				lens[nl++] = step;
		}
		/* The figures: the f32 signals and gpi[0]. */
		int fig = issue && n >= 50000 && (!s->u1 || strcmp(s->name, "gpi[0]") == 0);
		for (size_t i = 0; i < nl; i++)
			if (lens[i] > 0 && lens[i] <= n)
				check_spans(id, x, 0, lens[i], n / lens[i],
					    fig && lens[i] == 1000 ? 50 : 0);
		check_spans(id, x, 0, n, 1, 0); /* the whole file */
		if (issue && n >= 50000) {
			check_spans(id, x, 49000, 1000, 1, fig);
			check_spans(id, x, 40000, 10000, 1, fig);
			check_spans(id, x, 0, 50000, 1, fig);
		}
		free(x);
	}
	free(info);
	if (nsig == 0)
		FAIL("no FSR signal defined");
	if (failures) {
		printf("%d failure(s)\n", failures);
		return 1;
	}
	printf("ok: %s reads in the reference library as its samples say\n", file);
	return 0;
}
