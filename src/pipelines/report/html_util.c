/* ergon report: the helpers every section renderer shares (numbers at a
 * dotted path, SI formatting, figure cells, scalar/key-value/issue tables,
 * plot ids). Called by report_html.c and the section files html_run.c,
 * html_profile.c and html_compare.c; calls only html_plot.c, so that no
 * circle runs through the document renderer. */
#include "pipelines/common/common.h"
#include "pipelines/report/report_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double hd_num(const json_t *root, const char *path)
{
	const json_t *v = ergon_jpath(root, path);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

void hd_value_marks(struct hp_plot *pl, const json_t *root, const char *const (*marks)[2], size_t n,
		    const char *unit, double scale)
{
	for (size_t i = 0; i < n; i++) {
		char label[64], v[48];
		double x = hd_num(root, marks[i][0]);
		hd_fmt(v, sizeof v, x, unit);
		snprintf(label, sizeof label, "%s %s", marks[i][1], v);
		hp_vline(pl, x * scale, "pct", label);
	}
}

void hd_id(char *out, size_t cap, const struct html_doc *d, const char *name)
{
	snprintf(out, cap, "a%d-%s", d->index, name);
}

const char *hd_unit_of(const char *key)
{
	static const struct {
		const char *suffix, *unit;
	} u[] = {{"_per_s", "/s"}, {"_pct", "%"}, {"_hz", "Hz"}, {"_us", "us"}, {"_j", "J"},
		 {"_w", "W"},	   {"_a", "A"},	  {"_v", "V"},	 {"_c", "C"},	{"_s", "s"}};
	size_t kl = strlen(key);
	for (size_t i = 0; i < sizeof u / sizeof u[0]; i++) {
		size_t sl = strlen(u[i].suffix);
		if (kl > sl && strcmp(key + kl - sl, u[i].suffix) == 0)
			return u[i].unit;
	}
	return "";
}

void hd_label(char *out, size_t cap, const char *key)
{
	/* Words a reader knows better than the field's abbreviation. */
	static const char *const words[][2] = {{"avg", "mean"},	       {"ops", "operations"},
					       {"pct", "%"},	       {"insns", "instructions"},
					       {"utc", "(UTC)"},       {"id", "id"},
					       {"cpu", "CPU"},	       {"pmu", "PMU"},
					       {"dwt", "DWT"},	       {"sha256", "SHA-256"},
					       {"json", "JSON"},       {"csv", "CSV"},
					       {"gpio", "GPIO"},       {"jls", "JLS"},
					       {"io", "I/O"},	       {"ref", "reference"},
					       {"max", "max"},	       {"min", "min"},
					       {"num", "number of"},   {"hz", "Hz"},
					       {"infer", "inference"}, {"vs", "vs"}};
	size_t o = 0;
	out[0] = '\0';
	const char *seg = key;
	while (*seg && o + 1 < cap) {
		const char *dot = strchr(seg, '.');
		size_t sl = dot ? (size_t)(dot - seg) : strlen(seg);
		char part[128];
		snprintf(part, sizeof part, "%.*s", (int)(sl < sizeof part ? sl : sizeof part - 1),
			 seg);
		/* The unit goes with the value (hd_fmt), not into the label. */
		const char *unit = hd_unit_of(part);
		size_t pl = strlen(part);
		if (unit[0] && strcmp(unit, "%") != 0) {
			const char *us = strrchr(part, '_');
			if (strcmp(unit, "/s") == 0 && pl > 6)
				part[pl - 6] = '\0';
			else if (us)
				part[us - part] = '\0';
		}
		if (o && o + 4 < cap) {
			memcpy(out + o, " › ", sizeof " › " - 1);
			o += sizeof " › " - 1;
		}
		/* Word by word: underscores are spaces. */
		char *w = part;
		int first = 1;
		while (*w && o + 1 < cap) {
			char *end = strchr(w, '_');
			size_t wl = end ? (size_t)(end - w) : strlen(w);
			const char *rep = NULL;
			for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
				if (strlen(words[i][0]) == wl && strncmp(words[i][0], w, wl) == 0)
					rep = words[i][1];
			int n = snprintf(out + o, cap - o, "%s%.*s", first ? "" : " ",
					 (int)(rep ? strlen(rep) : wl), rep ? rep : w);
			if (n < 0 || (size_t)n >= cap - o) {
				o = cap - 1;
				break;
			}
			o += (size_t)n;
			first = 0;
			if (!end)
				break;
			w = end + 1;
		}
		if (!dot)
			break;
		seg = dot + 1;
	}
	out[o < cap ? o : cap - 1] = '\0';
}

/* A table's row header: the readable label, the field's own name on hover
 * and in data-key (for a reader who looks it up in the JSON). */
static void key_th(struct ergon_dynbuf *b, const char *key, const json_t *v)
{
	char label[256];
	hd_label(label, sizeof label, key);
	/* A value that cannot carry the unit (null: not recorded) leaves it
	 * to the label, so that two fields that differ only by unit differ. */
	const char *last = strrchr(key, '.');
	const char *unit = hd_unit_of(last ? last + 1 : key);
	if (!json_is_number(v) && unit[0] && strcmp(unit, "%") != 0) {
		size_t l = strlen(label);
		snprintf(label + l, sizeof label - l, " (%s)", unit);
	}
	ergon_dynbuf_adds(b, "<th data-key=\"");
	ergon_html_escape(b, key);
	ergon_dynbuf_adds(b, "\" title=\"");
	ergon_html_escape(b, key);
	ergon_dynbuf_adds(b, "\">");
	ergon_html_escape(b, label);
	ergon_dynbuf_adds(b, "</th>");
}

void hd_key_th(struct ergon_dynbuf *b, const char *key)
{
	key_th(b, key, NULL);
}

void hd_fmt(char *out, size_t cap, double v, const char *unit)
{
	static const struct {
		double f;
		const char *p;
	} pre[] = {{1e9, "G"},	{1e6, "M"},  {1e3, "k"},  {1, ""},
		   {1e-3, "m"}, {1e-6, "µ"}, {1e-9, "n"}, {1e-12, "p"}};
	if (!isfinite(v)) {
		snprintf(out, cap, "—");
		return;
	}
	int si = strcmp(unit, "J") == 0 || strcmp(unit, "W") == 0 || strcmp(unit, "A") == 0 ||
		 strcmp(unit, "V") == 0 || strcmp(unit, "s") == 0 || strcmp(unit, "C") == 0;
	if (!si || v == 0) {
		snprintf(out, cap, "%.6g%s%s", v, unit[0] ? " " : "", unit);
		return;
	}
	size_t k = 0;
	/* Seconds and the rest never go above the base unit (no "ks"). */
	size_t first = 3;
	for (k = first; k + 1 < sizeof pre / sizeof pre[0] && fabs(v) < pre[k].f * 0.9995; k++)
		;
	snprintf(out, cap, "%.4g %s%s", v / pre[k].f, pre[k].p, unit);
}

void hd_figure_cell(struct ergon_dynbuf *b, const char *path, const json_t *v, const char *unit)
{
	char txt[96];
	if (json_is_number(v)) {
		hd_fmt(txt, sizeof txt, json_number_value(v), unit);
		ergon_dynbuf_adds(b, "<td class=\"num\" data-path=\"");
		ergon_html_escape(b, path);
		ergon_dynbuf_addf(b, "\" data-value=\"%.17g\">", json_number_value(v));
		ergon_html_escape(b, txt);
		ergon_dynbuf_adds(b, "</td>");
	} else if (json_is_string(v)) {
		ergon_dynbuf_adds(b, "<td class=\"text\">");
		ergon_html_escape(b, json_string_value(v));
		ergon_dynbuf_adds(b, "</td>");
	} else if (json_is_boolean(v)) {
		ergon_dynbuf_addf(b, "<td class=\"text\">%s</td>", json_is_true(v) ? "yes" : "no");
	} else {
		ergon_dynbuf_adds(b, "<td class=\"na\">—</td>");
	}
}

void hd_scalar_table(struct ergon_dynbuf *b, const json_t *obj, const char *path, const char *title)
{
	if (!json_is_object(obj))
		return;
	ergon_dynbuf_adds(b, "<table class=\"figures\"><caption>");
	ergon_html_escape(b, title);
	ergon_dynbuf_adds(b, "</caption><tr><th>figure</th><th>value</th><th>±</th></tr>\n");
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)obj, k, v)
	{
		if (json_is_object(v) || json_is_array(v) || strstr(k, "_u_") != NULL)
			continue;
		const char *unit = hd_unit_of(k);
		char sub[256], ukey[128], upath[384];
		snprintf(sub, sizeof sub, "%s.%s", path, k);
		/* energy_j -> energy_u_j, mean_power_w -> mean_power_u_w */
		const char *us = strrchr(k, '_');
		const json_t *u = NULL;
		if (us && unit[0]) {
			snprintf(ukey, sizeof ukey, "%.*s_u%s", (int)(us - k), k, us);
			u = json_object_get(obj, ukey);
			snprintf(upath, sizeof upath, "%s.%s", path, ukey);
		}
		ergon_dynbuf_adds(b, "<tr>");
		key_th(b, k, v);
		hd_figure_cell(b, sub, v, unit);
		if (u)
			hd_figure_cell(b, upath, u, unit);
		else
			ergon_dynbuf_adds(b, "<td></td>");
		ergon_dynbuf_adds(b, "</tr>\n");
	}
	ergon_dynbuf_adds(b, "</table>\n");
}

static void budget_table(struct ergon_dynbuf *b, const json_t *bj, const char *path,
			 const char *title)
{
	const char *unit = json_string_value(json_object_get(bj, "unit"));
	char txt[96], sub[512];
	unit = unit ? unit : "";
	ergon_dynbuf_adds(b, "<table class=\"figures budget\"><caption>");
	ergon_html_escape(b, title);
	ergon_dynbuf_adds(b, "</caption><tr><th>term</th><th>u (standard)</th><th>bound</th>"
			     "<th>distribution</th><th>source</th></tr>\n");
	size_t i;
	const json_t *t;
	json_array_foreach(json_object_get(bj, "terms"), i, t)
	{
		ergon_dynbuf_adds(b, "<tr><th>");
		ergon_html_escape(b, json_string_value(json_object_get(t, "name")));
		ergon_dynbuf_adds(b, "</th>");
		if (json_is_true(json_object_get(t, "known"))) {
			snprintf(sub, sizeof sub, "%s.terms[%zu].value", path, i);
			hd_figure_cell(b, sub, json_object_get(t, "value"), unit);
			snprintf(sub, sizeof sub, "%s.terms[%zu].limit", path, i);
			hd_figure_cell(b, sub, json_object_get(t, "limit"), unit);
		} else {
			ergon_dynbuf_adds(b,
					  "<td class=\"na\">unknown</td><td class=\"na\">—</td>");
		}
		ergon_dynbuf_adds(b, "<td class=\"text\">");
		ergon_html_escape(b, json_string_value(json_object_get(t, "distribution")));
		ergon_dynbuf_adds(b, "</td><td class=\"text\">");
		ergon_html_escape(b, json_string_value(json_object_get(t, "source")));
		ergon_dynbuf_adds(b, "</td></tr>\n");
	}
	ergon_dynbuf_adds(b, "<tr><th>u_c (combined)</th>");
	snprintf(sub, sizeof sub, "%s.u_c", path);
	hd_figure_cell(b, sub, json_object_get(bj, "u_c"), unit);
	ergon_dynbuf_adds(b, "<td></td><td></td><td class=\"text\">known terms</td></tr>\n");
	ergon_dynbuf_adds(b, "<tr><th>U (k = 2)</th>");
	snprintf(sub, sizeof sub, "%s.U", path);
	if (json_is_true(json_object_get(bj, "complete"))) {
		hd_figure_cell(b, sub, json_object_get(bj, "U"), unit);
		double pct = json_number_value(json_object_get(bj, "U_pct"));
		snprintf(txt, sizeof txt, "%.3g %% of the figure; largest term: ", pct);
		ergon_dynbuf_adds(b, "<td></td><td></td><td class=\"text\">");
		ergon_html_escape(b, txt);
		ergon_html_escape(b, json_string_value(json_object_get(bj, "dominant")));
	} else {
		ergon_dynbuf_adds(b, "<td class=\"na\">incomplete</td><td></td><td></td>"
				     "<td class=\"text\">not stated: ");
		ergon_html_escape(b, json_string_value(json_object_get(bj, "dominant")));
		hd_fmt(txt, sizeof txt, json_number_value(json_object_get(bj, "U_known")), unit);
		ergon_dynbuf_adds(b, " is unknown; the known terms alone give ");
		ergon_html_escape(b, txt);
	}
	ergon_dynbuf_adds(b, "</td></tr>\n</table>\n");
}

size_t hd_budget_tables(struct ergon_dynbuf *b, const json_t *root, const char *path,
			const char *title)
{
	if (json_is_object(root) && json_is_array(json_object_get(root, "terms")) &&
	    json_object_get(root, "U") != NULL) {
		char cap[400], fig[96];
		const char *unit = json_string_value(json_object_get(root, "unit"));
		hd_fmt(fig, sizeof fig, json_number_value(json_object_get(root, "figure")),
		       unit ? unit : "");
		snprintf(cap, sizeof cap, "%s = %s", title, fig);
		budget_table(b, root, path, cap);
		return 1;
	}
	size_t n = 0;
	char sub[512], t2[400];
	if (json_is_object(root)) {
		const char *k;
		json_t *v;
		json_object_foreach((json_t *)root, k, v)
		{
			if (!json_is_object(v) && !json_is_array(v))
				continue;
			snprintf(sub, sizeof sub, "%s.%s", path, k);
			snprintf(t2, sizeof t2, "%s%s%s", title, title[0] ? " " : "", k);
			n += hd_budget_tables(b, v, sub, t2);
		}
	} else if (json_is_array(root)) {
		size_t i;
		json_t *v;
		json_array_foreach((json_t *)root, i, v)
		{
			snprintf(sub, sizeof sub, "%s[%zu]", path, i);
			const char *nm = json_string_value(json_object_get(v, "name"));
			snprintf(t2, sizeof t2, "%s[%s]", title, nm ? nm : "");
			n += hd_budget_tables(b, v, sub, t2);
		}
	}
	return n;
}

static void kv_rows(struct ergon_dynbuf *b, const json_t *obj, const char *prefix, int depth)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)obj, k, v)
	{
		char key[256];
		snprintf(key, sizeof key, "%s%s%s", prefix, prefix[0] ? "." : "", k);
		if (json_is_object(v) && depth < 3 && json_object_size(v) > 0) {
			kv_rows(b, v, key, depth + 1);
			continue;
		}
		ergon_dynbuf_adds(b, "<tr>");
		key_th(b, key, v);
		ergon_dynbuf_adds(b, "<td>");
		if (json_is_string(v)) {
			ergon_html_escape(b, json_string_value(v));
		} else if (json_is_null(v)) {
			ergon_dynbuf_adds(b, "<span class=\"na\">— (not recorded)</span>");
		} else if (json_is_boolean(v)) {
			ergon_dynbuf_adds(b, json_is_true(v) ? "yes" : "no");
		} else if (json_is_number(v)) {
			/* With the unit of the field's name, 4 significant digits
			 * and an SI prefix; the exact value on hover. */
			char txt[96];
			hd_fmt(txt, sizeof txt, json_number_value(v), hd_unit_of(k));
			ergon_dynbuf_addf(b, "<span title=\"%.17g\">", json_number_value(v));
			ergon_html_escape(b, txt);
			ergon_dynbuf_adds(b, "</span>");
		} else {
			char *s =
			    json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(10));
			if (s && strlen(s) > 300)
				memcpy(s + 290, " …", sizeof " …"); /* s is longer than 300 */
			ergon_html_escape(b, s ? s : "?");
			free(s);
		}
		ergon_dynbuf_adds(b, "</td></tr>\n");
	}
}

void hd_kv_table(struct ergon_dynbuf *b, const json_t *obj, const char *title)
{
	ergon_dynbuf_adds(b, "<table class=\"kv\"><caption>");
	ergon_html_escape(b, title);
	ergon_dynbuf_adds(b, "</caption>\n");
	if (json_is_object(obj) && json_object_size(obj)) {
		kv_rows(b, obj, "", 0);
	} else if (json_is_string(obj)) {
		ergon_dynbuf_adds(b, "<tr><th>value</th><td>");
		ergon_html_escape(b, json_string_value(obj));
		ergon_dynbuf_adds(b, "</td></tr>\n");
	} else {
		ergon_dynbuf_adds(b, "<tr><td class=\"na\">not in the artifact</td></tr>\n");
	}
	ergon_dynbuf_adds(b, "</table>\n");
}

void hd_issues(struct ergon_dynbuf *b, const json_t *issues, const char *title)
{
	ergon_dynbuf_adds(b, "<table class=\"issues\"><caption>");
	ergon_html_escape(b, title);
	ergon_dynbuf_adds(b, "</caption>\n");
	if (json_array_size(issues) == 0) {
		ergon_dynbuf_adds(b, "<tr><td class=\"ok\">no issues</td></tr></table>\n");
		return;
	}
	ergon_dynbuf_adds(b, "<tr><th>severity</th><th>code</th><th>message</th></tr>\n");
	size_t i;
	json_t *x;
	json_array_foreach(issues, i, x)
	{
		const char *sev = json_string_value(json_object_get(x, "severity"));
		const char *code = json_string_value(json_object_get(x, "code"));
		const char *msg = json_string_value(json_object_get(x, "message"));
		ergon_dynbuf_adds(b, "<tr class=\"sev-");
		ergon_html_escape(b, sev ? sev : "unknown");
		ergon_dynbuf_adds(b, "\"><td>");
		ergon_html_escape(b, sev ? sev : "?");
		ergon_dynbuf_adds(b, "</td><td><code>");
		ergon_html_escape(b, code ? code : "?");
		ergon_dynbuf_adds(b, "</code></td><td>");
		ergon_html_escape(b, msg ? msg : "");
		ergon_dynbuf_adds(b, "</td></tr>\n");
	}
	ergon_dynbuf_adds(b, "</table>\n");
}
