/* CSV recordings (statistics packets, raw samples) and gate marker files,
 * parsed incrementally into a sink (the pipeline wires the sink to the
 * gated engine; a reader computes no figure). */
#include "ergon/power_csv.h"

#include "ergon/plausible.h"
#include "ergon/utf8.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RAW_BATCH 4096u
#define STATS_BATCH 256u
#define COLS_MAX 64
#define MARKERS_MAX (1u << 20)

enum stats_col {
	S_T_START,
	S_T_END,
	S_I_AVG,
	S_I_STD,
	S_I_MIN,
	S_I_MAX,
	S_V_AVG,
	S_V_STD,
	S_V_MIN,
	S_V_MAX,
	S_P_AVG,
	S_P_STD,
	S_P_MIN,
	S_P_MAX,
	S_CHARGE,
	S_ENERGY,
	S_SAMPLE_ID,
	S_DIGITAL,
	S_COUNT
};

static const char *const stats_names[S_COUNT] = {
    "t_start_s", "t_end_s", "i_avg_a",	"i_std_a",  "i_min_a",	 "i_max_a",
    "v_avg_v",	 "v_std_v", "v_min_v",	"v_max_v",  "p_avg_w",	 "p_std_w",
    "p_min_w",	 "p_max_w", "charge_c", "energy_j", "sample_id", "digital"};

enum raw_col { R_T, R_I, R_V, R_P, R_D, R_COUNT };
static const char *const raw_names[R_COUNT] = {"t_s", "current_a", "voltage_v", "power_w",
					       "digital"};

struct ergon_power_csv {
	int kind;
	struct ergon_power_sink sink;
	unsigned sync_index;
	char name[256];
	char line[ERGON_POWER_CSV_LINE_MAX + 1];
	size_t line_len;
	uint64_t line_no;
	int have_header;
	int ncols;
	int map[COLS_MAX]; /* CSV column -> field, -1 ignored */
	int present[S_COUNT];
	/* raw */
	float bi[RAW_BATCH], bv[RAW_BATCH], bp[RAW_BATCH];
	uint8_t bits[RAW_BATCH / 8];
	size_t bn;
	uint64_t k;
	double t0, t_prev, fs;
	int began;
	/* stats */
	struct ergon_stats_packet pk[STATS_BATCH];
	size_t pn;
	uint64_t rows;	       /* statistics rows read */
	double stats_prev_end; /* t_end_s of the previous row */
	int time_fault;	       /* the first error was time going backwards */
	int values_fault;      /* ... or a row's values contradicting each other */
	/* sample_id continuity (statistics CSV with a sample_id column) */
	int have_prev_id;
	uint64_t prev_id;
	double prev_span_s;
	uint64_t id_jumps, id_dropped, id_backwards;
	uint64_t id_first_line, id_first_from, id_first_to;
	double id_first_expected;
	int sig_max[S_COUNT]; /* most significant digits a column printed */
	/* accumulator plausibility (statistics) */
	int have_prev_acc;
	double prev_energy_j, prev_charge_c;
};

/* The widest instrument these CSV columns come from (Joulescope JS220: 10 A,
 * 15 V full scale, datasheet) with 25 % headroom for over-range readings:
 * beyond this a value is not a reading but a corrupt file. */
#define CSV_MAX_ABS_A (ERGON_CSV_FULL_SCALE_A * ERGON_CSV_HEADROOM)
#define CSV_MAX_ABS_V (ERGON_CSV_FULL_SCALE_V * ERGON_CSV_HEADROOM)
#define CSV_MAX_ABS_W (CSV_MAX_ABS_A * CSV_MAX_ABS_V)

/* Joulescope sample ids count samples at the instrument's native rate: 2 MHz
 * on the JS220 (and JS110), whatever the statistics rate. */
#define SAMPLE_ID_HZ ERGON_CSV_SAMPLE_ID_HZ

static void check_sample_id(struct ergon_power_csv *p, const struct ergon_stats_packet *q)
{
	if (p->have_prev_id) {
		/* The previous packet spans prev_span_s, so the next id is
		 * prev_id + prev_span_s x 2 MHz; half a packet of slack. */
		double want = p->prev_span_s * SAMPLE_ID_HZ;
		if (q->sample_id <= p->prev_id) {
			p->id_backwards++;
		} else if (want >= 1.0 && (double)(q->sample_id - p->prev_id) > ERGON_CSV_ID_JUMP * want) {
			double d = (double)(q->sample_id - p->prev_id);
			if (p->id_jumps == 0) {
				p->id_first_line = p->line_no;
				p->id_first_from = p->prev_id;
				p->id_first_to = q->sample_id;
				p->id_first_expected = want;
			}
			p->id_jumps++;
			p->id_dropped += (uint64_t)llround(d / want) - 1u;
		}
	}
	p->have_prev_id = 1;
	p->prev_id = q->sample_id;
	p->prev_span_s = q->t_end_s - q->t_start_s;
}

/* Messages are cut at 511 bytes, as they always were. */
int ergon_power_csv_warnings(const struct ergon_power_csv *p, struct ergon_issue_list *out)
{
	char msg[512];
	int rc = 0;
	if (p == NULL)
		return 0;
	if (p->id_jumps > 0) {
		snprintf(msg, sizeof msg,
			 "%s:%llu: sample_id jumps from %llu to %llu (expected +%.0f at 2 MHz); "
			 "%llu jump(s) in all, about %llu statistics packet(s) dropped by the "
			 "instrument or the host: the figures do not cover them; re-record with "
			 "a lower statistics rate or a less loaded host",
			 p->name, (unsigned long long)p->id_first_line,
			 (unsigned long long)p->id_first_from, (unsigned long long)p->id_first_to,
			 p->id_first_expected, (unsigned long long)p->id_jumps,
			 (unsigned long long)p->id_dropped);
		rc = ergon_issue_list_add(out, "power.packets_dropped", NULL, 0, "%s", msg);
	}
	if (rc == 0 && p->id_backwards > 0) {
		snprintf(msg, sizeof msg,
			 "%s: sample_id repeats or goes backwards %llu time(s) while time moves "
			 "forward: the sample_id column does not belong to these rows",
			 p->name, (unsigned long long)p->id_backwards);
		rc = ergon_issue_list_add(out, "power.packets_dropped", NULL, 0, "%s", msg);
	}
	return rc;
}

int ergon_power_csv_new(int kind, const struct ergon_power_sink *sink, unsigned sync_input_index,
			const char *name, struct ergon_power_csv **out, struct ergon_err *err)
{
	*out = NULL;
	if (kind != ERGON_POWER_CSV_STATS && kind != ERGON_POWER_CSV_RAW)
		return ergon_err_set(err, ERGON_EUSAGE, "power CSV: unknown kind %d", kind);
	if (sync_input_index > 31)
		return ergon_err_set(err, ERGON_ERANGE,
				     "sync input index %u: digital inputs are 0..31",
				     sync_input_index);
	if (sink == NULL || (kind == ERGON_POWER_CSV_STATS && sink->packets == NULL) ||
	    (kind == ERGON_POWER_CSV_RAW && (sink->raw_begin == NULL || sink->raw == NULL)))
		return ergon_err_set(
		    err, ERGON_EUSAGE,
		    "%s: the power CSV reader needs a sink for what it reads "
		    "(ergon_power_sink_gated makes one that feeds the gated engine)",
		    name);
	struct ergon_power_csv *p = calloc(1, sizeof(*p));
	if (p == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", name);
	p->kind = kind;
	p->sink = *sink;
	p->sync_index = sync_input_index;
	snprintf(p->name, sizeof(p->name), "%s", name);
	*out = p;
	return 0;
}

void ergon_power_csv_free(struct ergon_power_csv *p)
{
	free(p);
}

/* Split a line into trimmed fields (optional surrounding double quotes);
 * returns the count, or -1 when there are more than COLS_MAX. */
static int split(char *s, char **f, int *col)
{
	int n = 0;
	char *start = s;
	for (char *c = s;; c++) {
		if (*c == ',' || *c == 0) {
			int end = *c == 0;
			*c = 0;
			if (n == COLS_MAX)
				return -1;
			char *a = start;
			while (*a == ' ' || *a == '\t')
				a++;
			char *b = a + strlen(a);
			while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
				*--b = 0;
			if (b - a >= 2 && *a == '"' && b[-1] == '"') {
				b[-1] = 0;
				a++;
			}
			col[n] = (int)(start - s) + 1;
			f[n++] = a;
			if (end)
				break;
			start = c + 1;
		}
	}
	return n;
}

static int parse_double(struct ergon_power_csv *p, const char *f, int col, const char *what,
			double *out, struct ergon_err *err)
{
	char *end = NULL;
	errno = 0;
	double v = strtod(f, &end);
	if (*f == 0 || end == f || *end != 0)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s:%llu:%d: %s '%.40s' is not a number; write a decimal like "
				     "0.0125",
				     p->name, (unsigned long long)p->line_no, col, what, f);
	*out = v;
	return 0;
}

/* Significant digits of a printed decimal ("0.000252" -> 3, "12.30" -> 4,
 * "1.23457e-05" -> 6); 0 for a cell that is not one (inf, nan, hex). */
static int printed_digits(const char *f)
{
	const char *c = f;
	int sig = 0, lead = 1, any = 0;
	if (*c == '+' || *c == '-')
		c++;
	for (; (*c >= '0' && *c <= '9') || *c == '.'; c++) {
		if (*c == '.')
			continue;
		any = 1;
		if (*c != '0')
			lead = 0;
		if (!lead)
			sig++;
	}
	if (!any)
		return 0;
	if (*c == 'e' || *c == 'E') {
		c++;
		if (*c == '+' || *c == '-')
			c++;
		while (*c >= '0' && *c <= '9')
			c++;
	}
	return *c == '\0' ? sig : 0;
}

/* The resolution a column prints v with: %g-style exports drop trailing
 * zeros ("0.0432" from 9 digits), so the column's precision is the most
 * significant digits any of its cells showed, not this cell's. */
static double printed_resolution(struct ergon_power_csv *p, int k, const char *f, double v)
{
	int d = printed_digits(f);
	if (d > p->sig_max[k])
		p->sig_max[k] = d;
	if (d == 0 || !(fabs(v) > 0) || !isfinite(v))
		return 0;
	return pow(10.0, floor(log10(fabs(v))) - p->sig_max[k] + 1);
}

static int parse_u64(struct ergon_power_csv *p, const char *f, int col, const char *what,
		     uint64_t max, uint64_t *out, struct ergon_err *err)
{
	char *end = NULL;
	errno = 0;
	if (*f == '-' || *f == '+')
		end = (char *)f;
	unsigned long long v = end ? 0 : strtoull(f, &end, 0);
	if (*f == 0 || end == f || *end != 0 || errno == ERANGE || v > max)
		return ergon_err_set(
		    err, ERGON_EPARSE, "%s:%llu:%d: %s '%.40s' is not an unsigned integer <= %llu",
		    p->name, (unsigned long long)p->line_no, col, what, f, (unsigned long long)max);
	*out = v;
	return 0;
}

static int header(struct ergon_power_csv *p, char **f, int *col, int n, struct ergon_err *err)
{
	const char *const *names = p->kind == ERGON_POWER_CSV_STATS ? stats_names : raw_names;
	int count = p->kind == ERGON_POWER_CSV_STATS ? S_COUNT : R_COUNT;
	p->ncols = n;
	for (int i = 0; i < n; i++) {
		p->map[i] = -1;
		for (int k = 0; k < count; k++) {
			if (strcmp(f[i], names[k]) != 0)
				continue;
			if (p->present[k])
				return ergon_err_set(
				    err, ERGON_EPARSE, "%s:%llu:%d: column '%s' appears twice",
				    p->name, (unsigned long long)p->line_no, col[i], names[k]);
			p->present[k] = 1;
			p->map[i] = k;
		}
	}
	int required = p->kind == ERGON_POWER_CSV_STATS ? 3 : 3;
	for (int k = 0; k < required; k++)
		if (!p->present[k])
			return ergon_err_set(
			    err, ERGON_EPARSE,
			    "%s:%llu: the header has no '%s' column; the first line must name "
			    "the columns, e.g. %s",
			    p->name, (unsigned long long)p->line_no, names[k],
			    p->kind == ERGON_POWER_CSV_STATS
				? "t_start_s,t_end_s,i_avg_a,v_avg_v,charge_c,energy_j,digital"
				: "t_s,current_a,voltage_v,power_w,digital");
	if (p->kind == ERGON_POWER_CSV_STATS && p->present[S_CHARGE] != p->present[S_ENERGY])
		return ergon_err_set(
		    err, ERGON_EPARSE,
		    "%s:%llu: charge_c and energy_j come together (the instrument's "
		    "accumulators); add the missing one or drop both",
		    p->name, (unsigned long long)p->line_no);
	p->have_header = 1;
	return 0;
}

static int flush_stats(struct ergon_power_csv *p, struct ergon_err *err)
{
	int rc = 0;
	if (p->pn > 0)
		rc = p->sink.packets(p->sink.ctx, p->pk, p->pn, err);
	p->pn = 0;
	return rc;
}

static int flush_raw(struct ergon_power_csv *p, struct ergon_err *err)
{
	int rc = 0;
	if (p->bn > 0 && p->began)
		rc = p->sink.raw(p->sink.ctx, p->bi, p->bv, p->present[R_P] ? p->bp : NULL,
				 p->present[R_D] ? p->bits : NULL, 0, p->bn, err);
	if (p->began) {
		p->bn = 0;
		memset(p->bits, 0, sizeof(p->bits));
	}
	return rc;
}

/* Physically impossible statistics (docs/POWER_CHECKS.md): a finite
 * current, voltage or power beyond the instrument's range, a negative
 * standard deviation, an accumulator that moves faster than full scale
 * allows, or energy that runs backwards while the row's own power is
 * positive. Non-finite values stay: the engine counts them like NaN. */
static int stats_plausible(struct ergon_power_csv *p, const struct ergon_stats_packet *q,
			   const int *colk, const double *res, struct ergon_err *err)
{
	static const struct {
		int k;
		double max;
		const char *unit;
	} lim[] = {{S_I_AVG, CSV_MAX_ABS_A, "A"}, {S_I_MIN, CSV_MAX_ABS_A, "A"},
		   {S_I_MAX, CSV_MAX_ABS_A, "A"}, {S_I_STD, CSV_MAX_ABS_A, "A"},
		   {S_V_AVG, CSV_MAX_ABS_V, "V"}, {S_V_MIN, CSV_MAX_ABS_V, "V"},
		   {S_V_MAX, CSV_MAX_ABS_V, "V"}, {S_V_STD, CSV_MAX_ABS_V, "V"},
		   {S_P_AVG, CSV_MAX_ABS_W, "W"}, {S_P_MIN, CSV_MAX_ABS_W, "W"},
		   {S_P_MAX, CSV_MAX_ABS_W, "W"}, {S_P_STD, CSV_MAX_ABS_W, "W"}};
	const double *val[S_COUNT] = {
	    [S_I_AVG] = &q->i_avg_a, [S_I_STD] = &q->i_std_a, [S_I_MIN] = &q->i_min_a,
	    [S_I_MAX] = &q->i_max_a, [S_V_AVG] = &q->v_avg_v, [S_V_STD] = &q->v_std_v,
	    [S_V_MIN] = &q->v_min_v, [S_V_MAX] = &q->v_max_v, [S_P_AVG] = &q->p_avg_w,
	    [S_P_STD] = &q->p_std_w, [S_P_MIN] = &q->p_min_w, [S_P_MAX] = &q->p_max_w};
	unsigned long long ln = (unsigned long long)p->line_no;
	for (size_t j = 0; j < sizeof(lim) / sizeof(lim[0]); j++) {
		int k = lim[j].k;
		double v = *val[k];
		if (!p->present[k] || !isfinite(v))
			continue;
		int is_std = k == S_I_STD || k == S_V_STD || k == S_P_STD;
		if (fabs(v) > lim[j].max || (is_std && v < 0))
			return ergon_err_set(err, ERGON_EPARSE,
					     "%s:%llu:%d: %s %.6g %s is physically impossible "
					     "(%s; the instrument's range is +/-%.4g %s): the row "
					     "is corrupt; fix or drop it",
					     p->name, ln, colk[k], stats_names[k], v, lim[j].unit,
					     is_std && v < 0 ? "a negative standard deviation"
							     : "beyond full scale",
					     lim[j].max, lim[j].unit);
	}
	/* A packet's minimum, mean and maximum are of the same samples: the
	 * mean lies between the others, up to the cells' printed precision. */
	static const int triple[3][3] = {
	    {S_I_MIN, S_I_AVG, S_I_MAX}, {S_V_MIN, S_V_AVG, S_V_MAX}, {S_P_MIN, S_P_AVG, S_P_MAX}};
	for (int t = 0; t < 3; t++)
		for (int side = 0; side < 2; side++) {
			int lo = side ? triple[t][1] : triple[t][0];
			int hi = side ? triple[t][2] : triple[t][1];
			double a = *val[lo], b = *val[hi];
			if (!p->present[lo] || !p->present[hi] || !isfinite(a) || !isfinite(b))
				continue;
			double slack = 1e-6 * fmax(fabs(a), fabs(b)) + 0.5 * (res[lo] + res[hi]);
			if (a - b > slack) {
				p->values_fault = 1;
				return ergon_err_set(
				    err, ERGON_EPARSE,
				    "%s:%llu:%d: %s %.9g is %s %s %.9g in the same row: a "
				    "packet's minimum, mean and maximum are of the same samples, "
				    "so the mean lies between the others; the row is corrupt",
				    p->name, ln, colk[side ? hi : lo], stats_names[side ? hi : lo],
				    side ? b : a, side ? "below" : "above",
				    stats_names[side ? lo : hi], side ? a : b);
			}
		}
	if (!p->present[S_ENERGY])
		return 0;
	int acc_ok = isfinite(q->energy_j) && isfinite(q->charge_c);
	if (acc_ok && p->have_prev_acc) {
		/* The accumulators cover the span since the previous row's end. */
		double dt = q->t_end_s - p->stats_prev_end;
		double de = q->energy_j - p->prev_energy_j, dc = q->charge_c - p->prev_charge_c;
		double slack_j = 1e-6 * fmax(fabs(q->energy_j), fabs(p->prev_energy_j)) + 1e-12;
		double slack_c = 1e-6 * fmax(fabs(q->charge_c), fabs(p->prev_charge_c)) + 1e-12;
		if (fabs(de) > CSV_MAX_ABS_W * dt + slack_j)
			return ergon_err_set(err, ERGON_EPARSE,
					     "%s:%llu:%d: energy_j %.6g J moves the accumulator by "
					     "%.3g J in %.3g s, more than the instrument's %.4g W "
					     "full scale allows: the accumulator is corrupt",
					     p->name, ln, colk[S_ENERGY], q->energy_j, de, dt,
					     CSV_MAX_ABS_W);
		if (fabs(dc) > CSV_MAX_ABS_A * dt + slack_c)
			return ergon_err_set(err, ERGON_EPARSE,
					     "%s:%llu:%d: charge_c %.6g C moves the accumulator by "
					     "%.3g C in %.3g s, more than the instrument's %.4g A "
					     "full scale allows: the accumulator is corrupt",
					     p->name, ln, colk[S_CHARGE], q->charge_c, dc, dt,
					     CSV_MAX_ABS_A);
		double pw = p->present[S_P_AVG]	  ? q->p_avg_w
			    : p->present[S_V_AVG] ? q->i_avg_a * q->v_avg_v
						  : NAN;
		/* Negative energy for a load (ergon/plausible.h): judged by the
		 * row's own power, or without a power or voltage column by its
		 * current and the charge accumulator. */
		if (ergon_energy_step_negative(de, dc, dt, pw, q->i_avg_a, slack_j, slack_c)) {
			if (isfinite(pw))
				return ergon_err_set(
				    err, ERGON_EPARSE,
				    "%s:%llu:%d: energy_j runs backwards by %.3g J while "
				    "the row's power is +%.4g W: negative energy is "
				    "physically impossible here; the accumulator is corrupt",
				    p->name, ln, colk[S_ENERGY], -de, pw);
			return ergon_err_set(
			    err, ERGON_EPARSE,
			    "%s:%llu:%d: energy_j runs backwards by %.3g J while the row's "
			    "current is +%.4g A and charge_c advances by %.3g C: negative energy "
			    "for a load is physically impossible; the accumulator is corrupt (a "
			    "negative rail needs a v_avg_v or p_avg_w column)",
			    p->name, ln, colk[S_ENERGY], -de, q->i_avg_a, dc);
		}
	}
	if (acc_ok) {
		p->have_prev_acc = 1;
		p->prev_energy_j = q->energy_j;
		p->prev_charge_c = q->charge_c;
	}
	return 0;
}

static int stats_row(struct ergon_power_csv *p, char **f, int *col, struct ergon_err *err)
{
	struct ergon_stats_packet *q = &p->pk[p->pn];
	memset(q, 0, sizeof(*q));
	double *dst[S_COUNT] = {&q->t_start_s, &q->t_end_s, &q->i_avg_a, &q->i_std_a, &q->i_min_a,
				&q->i_max_a,   &q->v_avg_v, &q->v_std_v, &q->v_min_v, &q->v_max_v,
				&q->p_avg_w,   &q->p_std_w, &q->p_min_w, &q->p_max_w, &q->charge_c,
				&q->energy_j,  NULL,	    NULL};
	int colk[S_COUNT] = {0};
	double res[S_COUNT] = {0}; /* each cell's printed resolution */
	for (int i = 0; i < p->ncols; i++) {
		int k = p->map[i];
		if (k < 0)
			continue;
		int rc;
		colk[k] = col[i];
		if (k == S_SAMPLE_ID) {
			rc = parse_u64(p, f[i], col[i], stats_names[k], UINT64_MAX, &q->sample_id,
				       err);
		} else if (k == S_DIGITAL) {
			uint64_t d = 0;
			rc = parse_u64(p, f[i], col[i], stats_names[k], 0xffffffffu, &d, err);
			q->digital = (uint32_t)d;
		} else {
			rc = parse_double(p, f[i], col[i], stats_names[k], dst[k], err);
			if (rc == 0)
				res[k] = printed_resolution(p, k, f[i], *dst[k]);
			if (rc == 0 && k == S_ENERGY)
				q->energy_res_j = res[k];
			else if (rc == 0 && k == S_P_AVG)
				q->p_res_w = res[k];
			else if (rc == 0 && k == S_I_AVG)
				q->i_res_a = res[k];
			else if (rc == 0 && k == S_V_AVG)
				q->v_res_v = res[k];
		}
		if (rc)
			return rc;
	}
	/* Time order is checked here, where the line is known; the engine's
	 * own check can only name a packet index. Same slack as the engine. */
	if (!isfinite(q->t_start_s) || !isfinite(q->t_end_s) || q->t_end_s < q->t_start_s) {
		p->time_fault = 1;
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s:%llu: span [%.9g, %.9g] is not a finite forward interval; "
				     "fix t_start_s/t_end_s",
				     p->name, (unsigned long long)p->line_no, q->t_start_s,
				     q->t_end_s);
	}
	if (p->rows > 0 && q->t_start_s < p->stats_prev_end - 1e-9) {
		p->time_fault = 1;
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s:%llu: t_start_s %.9g is before the previous row's t_end_s "
				     "%.9g (time goes backwards); rows must be in time order",
				     p->name, (unsigned long long)p->line_no, q->t_start_s,
				     p->stats_prev_end);
	}
	int prc = stats_plausible(p, q, colk, res, err);
	if (prc)
		return prc;
	p->rows++;
	p->stats_prev_end = q->t_end_s;
	if (p->present[S_SAMPLE_ID])
		check_sample_id(p, q);
	if (p->present[S_V_AVG])
		q->fields |= ERGON_PKT_VOLTAGE;
	if (p->present[S_P_AVG])
		q->fields |= ERGON_PKT_POWER;
	if (p->present[S_CHARGE])
		q->fields |= ERGON_PKT_ACCUM;
	if (p->present[S_DIGITAL])
		q->fields |= ERGON_PKT_DIGITAL;
	if (p->present[S_I_MAX])
		q->fields |= ERGON_PKT_MINMAX;
	if (++p->pn == STATS_BATCH)
		return flush_stats(p, err);
	return 0;
}

/* Marks the error being returned as time not moving forward. */
static int time_error(struct ergon_power_csv *p, int rc)
{
	p->time_fault = 1;
	return rc;
}

static int raw_row(struct ergon_power_csv *p, char **f, int *col, struct ergon_err *err)
{
	double v[R_COUNT] = {0};
	uint64_t dig = 0;
	for (int i = 0; i < p->ncols; i++) {
		int k = p->map[i];
		if (k < 0)
			continue;
		int rc = k == R_D ? parse_u64(p, f[i], col[i], raw_names[k], 0xffffffffu, &dig, err)
				  : parse_double(p, f[i], col[i], raw_names[k], &v[k], err);
		if (rc)
			return rc;
	}
	double t = v[R_T];
	if (!isfinite(t))
		return ergon_err_set(err, ERGON_EPARSE, "%s:%llu: t_s is not finite", p->name,
				     (unsigned long long)p->line_no);
	if (p->k > 0 && t <= p->t_prev)
		return time_error(
		    p, ergon_err_set(err, ERGON_EPARSE,
				     "%s:%llu: t_s %.9g is not after the previous %.9g (time goes "
				     "backwards or repeats); raw samples must be in time order",
				     p->name, (unsigned long long)p->line_no, t, p->t_prev));
	if (p->k == 0) {
		p->t0 = t;
	} else if (p->k == 1) {
		p->fs = 1.0 / (t - p->t0);
		int rc = p->sink.raw_begin(p->sink.ctx, p->fs, err);
		if (rc)
			return rc;
		p->began = 1;
	} else {
		/* Uniform sampling: sample k sits at t0 + k/fs within half a period. */
		double want = p->t0 + (double)p->k / p->fs;
		if (fabs(t - want) > 0.5 / p->fs)
			return ergon_err_set(err, ERGON_EPARSE,
					     "%s:%llu: t_s %.9g is off the %.6g Hz grid set by the "
					     "first two samples (expected %.9g); raw CSV must be "
					     "uniformly sampled (use --stats for packets)",
					     p->name, (unsigned long long)p->line_no, t, p->fs,
					     want);
	}
	p->t_prev = t;
	static const double lim[R_COUNT] = {0, CSV_MAX_ABS_A, CSV_MAX_ABS_V, CSV_MAX_ABS_W, 0};
	for (int i = 0; i < p->ncols; i++) {
		int k = p->map[i];
		if (k != R_I && k != R_V && k != R_P)
			continue;
		/* Beyond float32, a sample is no reading (like NaN or an
		 * infinity: counted by the engine); a finite one beyond the
		 * instrument's range is a corrupt row. */
		if (!isfinite(v[k]) || fabs(v[k]) > FLT_MAX)
			v[k] = isnan(v[k]) ? v[k] : copysign(INFINITY, v[k]);
		else if (fabs(v[k]) > lim[k])
			return ergon_err_set(err, ERGON_EPARSE,
					     "%s:%llu:%d: %s %.6g is physically impossible (the "
					     "instrument's range is +/-%.4g): the row is corrupt; "
					     "fix or drop it",
					     p->name, (unsigned long long)p->line_no, col[i],
					     raw_names[k], v[k], lim[k]);
	}
	if (p->present[R_P] && isfinite(v[R_P]) && isfinite(v[R_I]) && isfinite(v[R_V])) {
		/* A raw sample's power is its current times its voltage: the
		 * instrument computes it from the same two readings. 1 % covers
		 * any instrument's arithmetic; the cells' printed precision is
		 * added. */
		double iv = v[R_I] * v[R_V], res[R_COUNT] = {0};
		int colr[R_COUNT] = {0};
		for (int i = 0; i < p->ncols; i++)
			if (p->map[i] == R_I || p->map[i] == R_V || p->map[i] == R_P) {
				res[p->map[i]] =
				    printed_resolution(p, p->map[i], f[i], v[p->map[i]]);
				colr[p->map[i]] = col[i];
			}
		double tol = ERGON_CSV_POWER_REL * fabs(iv) +
			     0.5 * (res[R_P] + fabs(v[R_V]) * res[R_I] + fabs(v[R_I]) * res[R_V]) +
			     1e-12;
		if (fabs(v[R_P] - iv) > tol) {
			p->values_fault = 1;
			return ergon_err_set(
			    err, ERGON_EPARSE,
			    "%s:%llu:%d: power_w %.9g W is not current_a x voltage_v = %.9g x %.9g "
			    "= "
			    "%.9g W (1 %% allowed): a raw sample's power is computed from its own "
			    "current and voltage; the row or the column is corrupt",
			    p->name, (unsigned long long)p->line_no, colr[R_P], v[R_P], v[R_I],
			    v[R_V], iv);
		}
	}
	p->bi[p->bn] = (float)v[R_I];
	p->bv[p->bn] = (float)v[R_V];
	p->bp[p->bn] = (float)v[R_P];
	if ((dig >> p->sync_index) & 1u)
		p->bits[p->bn / 8] |= (uint8_t)(1u << (p->bn % 8));
	p->bn++;
	p->k++;
	if (p->bn == RAW_BATCH)
		return flush_raw(p, err);
	return 0;
}

static int do_line(struct ergon_power_csv *p, struct ergon_err *err)
{
	p->line_no++;
	p->line[p->line_len] = 0;
	if (p->line_len > 0 && p->line[p->line_len - 1] == '\r')
		p->line[--p->line_len] = 0;
	if (memchr(p->line, 0, p->line_len) != NULL)
		return ergon_err_set(err, ERGON_EPARSE, "%s:%llu: NUL byte in a text line", p->name,
				     (unsigned long long)p->line_no);
	char *s = p->line;
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == 0 || *s == '#')
		return 0;
	/* Bytes that are not UTF-8 are named where they are (the message would
	 * otherwise quote them, and a JSON issue cannot hold them). */
	for (size_t i = 0; i < p->line_len;) {
		size_t l = ergon_utf8_len(p->line + i, p->line_len - i);
		if (l == 0)
			return ergon_err_set(
			    err, ERGON_EPARSE,
			    "%s:%llu:%zu: byte 0x%02x is not UTF-8 text: a recording "
			    "is ASCII or UTF-8 (was it edited in another encoding, "
			    "or corrupted?); fix or drop the row",
			    p->name, (unsigned long long)p->line_no, i + 1,
			    (unsigned)(unsigned char)p->line[i]);
		i += l;
	}
	char *f[COLS_MAX];
	int col[COLS_MAX];
	int n = split(p->line, f, col);
	if (n < 0)
		return ergon_err_set(err, ERGON_EPARSE, "%s:%llu: more than %d columns", p->name,
				     (unsigned long long)p->line_no, COLS_MAX);
	if (!p->have_header)
		return header(p, f, col, n, err);
	if (n != p->ncols)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s:%llu: %d fields but the header names %d; every row needs "
				     "one value per column",
				     p->name, (unsigned long long)p->line_no, n, p->ncols);
	return p->kind == ERGON_POWER_CSV_STATS ? stats_row(p, f, col, err)
						: raw_row(p, f, col, err);
}

int ergon_power_csv_feed(struct ergon_power_csv *p, const char *buf, size_t len,
			 struct ergon_err *err)
{
	for (size_t i = 0; i < len; i++) {
		char c = buf[i];
		if (c == '\n') {
			int rc = do_line(p, err);
			p->line_len = 0;
			if (rc)
				return rc;
			continue;
		}
		if (p->line_len < ERGON_POWER_CSV_LINE_MAX) {
			p->line[p->line_len++] = c;
			continue;
		}
		/* Cut at the limit, at once: an endless line (/dev/zero, a
		 * binary file) is never read to its end. */
		return ergon_err_set(
		    err, ERGON_ETOOBIG,
		    "%s:%llu:%u: line longer than %u bytes (a recording's row is a "
		    "few hundred): is this a CSV recording?",
		    p->name, (unsigned long long)p->line_no + 1, ERGON_POWER_CSV_LINE_MAX + 1,
		    ERGON_POWER_CSV_LINE_MAX);
	}
	return 0;
}

int ergon_power_csv_end(struct ergon_power_csv *p, struct ergon_err *err)
{
	int rc = 0;
	if (p->line_len > 0) {
		rc = do_line(p, err);
		p->line_len = 0;
		if (rc)
			return rc;
	}
	if (!p->have_header)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: no header line; the first line must name the columns",
				     p->name);
	if (p->kind == ERGON_POWER_CSV_STATS)
		return flush_stats(p, err);
	if (p->k == 1)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s: a single raw sample; two are needed to know the rate",
				     p->name);
	return flush_raw(p, err);
}

int ergon_gate_markers_parse(const char *buf, size_t len, const char *name,
			     struct ergon_gate_marker **out, size_t *count, struct ergon_err *err)
{
	*out = NULL;
	*count = 0;
	struct ergon_gate_marker *m = NULL;
	size_t n = 0, cap = 0;
	uint64_t line_no = 0;
	int rc = 0;
	size_t i = 0;
	while (i < len) {
		size_t j = i;
		while (j < len && buf[j] != '\n')
			j++;
		line_no++;
		char line[256];
		size_t l = j - i;
		if (l >= sizeof(line)) {
			rc = ergon_err_set(err, ERGON_EPARSE, "%s:%llu: line longer than %zu bytes",
					   name, (unsigned long long)line_no, sizeof(line) - 1);
			goto fail;
		}
		memcpy(line, buf + i, l);
		line[l] = 0;
		i = j + 1;
		if (l > 0 && line[l - 1] == '\r')
			line[--l] = 0;
		char *s = line;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == 0 || *s == '#')
			continue;
		if (memchr(line, 0, l) != NULL) {
			rc = ergon_err_set(err, ERGON_EPARSE, "%s:%llu: NUL byte", name,
					   (unsigned long long)line_no);
			goto fail;
		}
		char *f[COLS_MAX];
		int col[COLS_MAX];
		int nf = split(line, f, col);
		if (n == 0 && nf == 2 && strcmp(f[0], "start_s") == 0 && strcmp(f[1], "end_s") == 0)
			continue;
		double v[2];
		char *end;
		for (int k = 0; k < 2 && nf == 2; k++) {
			v[k] = strtod(f[k], &end);
			if (*f[k] == 0 || *end != 0)
				nf = -1;
		}
		if (nf != 2) {
			rc = ergon_err_set(
			    err, ERGON_EPARSE,
			    "%s:%llu: expected 'start_s,end_s' (two numbers in seconds "
			    "on the recording's clock)",
			    name, (unsigned long long)line_no);
			goto fail;
		}
		if (!isfinite(v[0]) || !isfinite(v[1]) || v[0] < 0 || v[1] <= v[0] ||
		    (n > 0 && v[0] < m[n - 1].end_s)) {
			rc = ergon_err_set(
			    err, ERGON_EPARSE,
			    "%s:%llu: marker [%g, %g) must be finite, start >= 0, end > "
			    "start, after the previous marker",
			    name, (unsigned long long)line_no, v[0], v[1]);
			goto fail;
		}
		if (n == cap) {
			if (cap >= MARKERS_MAX) {
				rc = ergon_err_set(err, ERGON_ETOOBIG, "%s: more than %u markers",
						   name, MARKERS_MAX);
				goto fail;
			}
			size_t nc = cap ? cap * 2 : 16;
			struct ergon_gate_marker *x = realloc(m, nc * sizeof(*m));
			if (x == NULL) {
				rc = ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", name);
				goto fail;
			}
			m = x;
			cap = nc;
		}
		m[n].start_s = v[0];
		m[n].end_s = v[1];
		n++;
	}
	*out = m;
	*count = n;
	return 0;
fail:
	free(m);
	return rc;
}

int ergon_power_csv_time_fault(const struct ergon_power_csv *p)
{
	return p != NULL && p->time_fault;
}

const char *ergon_power_csv_fault_code(const struct ergon_power_csv *p)
{
	if (p == NULL)
		return "power.recording_unusable";
	return p->time_fault	 ? "power.time_backwards"
	       : p->values_fault ? "power.values_inconsistent"
				 : "power.recording_unusable";
}
