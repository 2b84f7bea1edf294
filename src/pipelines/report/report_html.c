/* report/: `ergon report`: any artifact as one HTML file.
 *
 * ergon report: the HTML document, artifact loading (with recovery of a
 * truncated file), status banners and the tables every section shares. */
#include "ergon/report_html.h"

#include "ergon/artifact.h"
#include "ergon/fileio.h"
#include "ergon/report.h"
#include "ergon/signature.h"
#include "pipelines/common/common.h"
#include "pipelines/report/report_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HTML_MAX ((size_t)512 << 20)
/* Deepest nesting the recovery of a truncated file follows. */
#define SALVAGE_DEPTH 64

/* --- loading ------------------------------------------------------------- */

/* A truncated artifact: keep the text up to the last complete value inside
 * a container, close what is still open, and parse that. A number or a
 * literal that touches the end of the text may itself be cut, so only a
 * value followed by a delimiter counts as complete. Returns the recovered
 * object or NULL; *kept gets the bytes used. */
static json_t *salvage(const char *s, size_t len, size_t *kept)
{
	char stack[SALVAGE_DEPTH], safe_stack[SALVAGE_DEPTH];
	int expect_key[SALVAGE_DEPTH];
	size_t depth = 0, safe_depth = 0, safe_at = 0;
	size_t i = 0;
	while (i < len) {
		char c = s[i];
		if (c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == ':' || c == ',') {
			if (c == ',' && depth > 0)
				expect_key[depth - 1] = stack[depth - 1] == '{';
			if (c == ':' && depth > 0)
				expect_key[depth - 1] = 0;
			i++;
			continue;
		}
		int value_done = 0;
		if (c == '{' || c == '[') {
			if (depth == SALVAGE_DEPTH)
				break;
			stack[depth] = c;
			expect_key[depth] = c == '{';
			depth++;
			i++;
			continue;
		} else if (c == '}' || c == ']') {
			if (depth == 0)
				break;
			depth--;
			i++;
			value_done = 1;
		} else if (c == '"') {
			size_t j = i + 1;
			while (j < len && s[j] != '"')
				j += s[j] == '\\' ? 2 : 1;
			if (j >= len)
				break;
			int was_key = depth > 0 && expect_key[depth - 1];
			i = j + 1;
			if (was_key) {
				expect_key[depth - 1] = 0;
				continue;
			}
			value_done = 1;
		} else {
			size_t j = i;
			/* strchr finds the terminator too: a NUL byte is no delimiter. */
			while (j < len && s[j] != '\0' && strchr(" \n\r\t,]}", s[j]) == NULL)
				j++;
			if (j >= len || j == i)
				break; /* may have been cut, or a byte no JSON value starts with */
			i = j;
			value_done = 1;
		}
		if (value_done && depth > 0) {
			safe_at = i;
			safe_depth = depth;
			memcpy(safe_stack, stack, depth);
		}
	}
	if (safe_depth == 0)
		return NULL;
	char *t = malloc(safe_at + safe_depth + 1);
	if (t == NULL)
		return NULL;
	memcpy(t, s, safe_at);
	for (size_t k = 0; k < safe_depth; k++)
		t[safe_at + k] = safe_stack[safe_depth - 1 - k] == '{' ? '}' : ']';
	json_error_t je;
	json_t *j = json_loadb(t, safe_at + safe_depth, JSON_REJECT_DUPLICATES, &je);
	free(t);
	if (!json_is_object(j)) {
		json_decref(j);
		return NULL;
	}
	*kept = safe_at;
	return j;
}

static int load(struct html_doc *d, const json_t *given, struct ergon_err *err)
{
	if (given) {
		d->a = json_deep_copy(given);
		return d->a ? 0 : ergon_err_set(err, ERGON_ENOMEM, "report: out of memory");
	}
	char *data = NULL;
	size_t len = 0;
	int rc = ergon_file_read_all(d->path, ERGON_HTML_ARTIFACT_MAX, &data, &len, err);
	if (rc)
		return rc;
	json_error_t je;
	d->a = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	if (d->a && !json_is_object(d->a)) {
		json_decref(d->a);
		d->a = NULL;
		snprintf(je.text, sizeof je.text, "the top level is not an object");
	}
	if (d->a == NULL) {
		size_t kept = 0;
		d->a = salvage(data, len, &kept);
		if (d->a == NULL) {
			free(data);
			return ergon_err_set(err, ERGON_EPARSE,
					     "%s:%d:%d (byte %d): %s; nothing could be recovered "
					     "(not an ergon artifact)",
					     d->path, je.line, je.column, je.position, je.text);
		}
		d->truncated = 1;
		snprintf(d->note, sizeof d->note,
			 "TRUNCATED OR DAMAGED: the file stops being JSON at line %d, column %d "
			 "(byte %d: %s). Shown below is what the first %zu of its %zu bytes "
			 "hold; anything after that is missing, and the digest cannot match.",
			 je.line, je.column, je.position, je.text, kept, len);
	}
	free(data);
	return 0;
}

enum doc_kind { K_UNKNOWN, K_RUN, K_PROFILE, K_MODEL, K_COMPARE, K_KERNELS, K_TREND };

static enum doc_kind kind_of(const json_t *a)
{
	const char *s = json_string_value(json_object_get(a, "schema"));
	if (s == NULL)
		return K_UNKNOWN;
	if (strcmp(s, ERGON_REPORT_SCHEMA) == 0)
		return K_RUN;
	if (strcmp(s, "ergon.profile") == 0)
		return K_PROFILE;
	if (ERGON_IS_ENERGY_MODEL_SCHEMA(s))
		return K_MODEL;
	if (strcmp(s, "ergon.compare") == 0)
		return K_COMPARE;
	if (strcmp(s, "ergon.kernels") == 0)
		return K_KERNELS;
	if (strcmp(s, "ergon.trend") == 0)
		return K_TREND;
	return K_UNKNOWN;
}

/* --- the document -------------------------------------------------------- */

static const char css[] =
    ":root{--fg:#1d2330;--mut:#5b6475;--bg:#f5f6f8;--card:#fff;--line:#dfe3ea;"
    "--s0:#1f6fd1;--s1:#d4522a;--s2:#2a9d5c;--s3:#8e44ad;--s4:#c99a06;--s5:#16a2b8}\n"
    "*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);"
    "font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif}\n"
    "header.top{background:#1d2330;color:#fff;padding:14px 28px}header.top h1{margin:0;"
    "font-size:20px;font-weight:600}header.top p{margin:2px 0 0;color:#b8c0cf;font-size:12px}\n"
    "main{max-width:1180px;margin:0 auto;padding:18px 20px 40px}\n"
    "section.artifact{background:var(--card);border:1px solid var(--line);border-radius:10px;"
    "padding:18px 22px;margin:0 0 22px;box-shadow:0 1px 2px rgba(0,0,0,.04)}\n"
    "section.artifact>h2{margin:0 0 4px;font-size:18px}h3{font-size:15px;margin:22px 0 8px;"
    "border-bottom:1px solid var(--line);padding-bottom:4px}\n"
    ".sub{color:var(--mut);font-size:12px;margin:0 0 10px;word-break:break-all}\n"
    ".banner{border-radius:8px;padding:8px 12px;margin:8px 0;font-weight:500}\n"
    ".banner.ok{background:#e7f6ec;color:#17603a;border:1px solid #b9e3c8}\n"
    ".banner.warn{background:#fff6df;color:#7a5600;border:1px solid #f1dc9d}\n"
    ".banner.bad{background:#fdeaea;color:#8f1d1d;border:1px solid #f2bcbc}\n"
    ".chips span{display:inline-block;background:#eef1f6;border-radius:12px;padding:2px 10px;"
    "margin:0 6px 6px 0;font-size:12px}.chips span b{font-weight:600}\n"
    ".grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(330px,1fr));gap:14px;"
    "align-items:start}\n"
    "table{border-collapse:collapse;width:100%;font-size:12.5px;margin:4px 0 10px}"
    "caption{text-align:left;font-weight:600;padding:4px 0;color:var(--fg)}\n"
    "th,td{border-bottom:1px solid var(--line);padding:3px 8px;text-align:left;"
    "vertical-align:top}th{color:var(--mut);font-weight:500}td.num{text-align:right;"
    "font-variant-numeric:tabular-nums;white-space:nowrap}td.na{color:#9aa3b2}\n"
    ".scroll{overflow-x:auto}table.kv td{word-break:break-all}"
    "table.wide th{white-space:nowrap}\n"
    "tr.sev-error td{background:#fdeaea}tr.sev-warning td{background:#fff6df}"
    "td.ok{color:#17603a}\n"
    "figure.plotbox{margin:10px 0 18px;padding:0}figure.plotbox figcaption.title{font-weight:"
    "600;margin:0 0 4px}\n"
    "svg.plot{width:100%;height:auto;background:#fff;border:1px solid var(--line);"
    "border-radius:6px}\n"
    "svg .frame{fill:none;stroke:#aab2c0}svg .grid{stroke:#eef0f4}svg .tick{font-size:11px;"
    "fill:#5b6475}svg .axislabel{font-size:12px;fill:#39404d}\n"
    "svg .series{stroke-width:1.4}svg polyline.series{fill:none;stroke:currentColor}"
    "svg polygon.band{stroke:none;fill:currentColor;fill-opacity:.25}"
    "svg path.bars{stroke:none;fill:currentColor;fill-opacity:.55}"
    "svg path.errbar{fill:none;stroke:currentColor;stroke-opacity:.7}\n"
    ".s0{color:var(--s0)}.s1{color:var(--s1)}.s2{color:var(--s2)}.s3{color:var(--s3)}"
    ".s4{color:var(--s4)}.s5{color:var(--s5)}svg text.s1{fill:var(--s1)}\n"
    "svg rect.span{stroke:none}svg rect.idle{fill:#8e9aaf;fill-opacity:.12}"
    "svg rect.load{fill:#1f6fd1;fill-opacity:.06}svg rect.gate{fill:#2a9d5c;"
    "fill-opacity:.14}\n"
    "svg .spanlabel{font-size:11px;fill:#5b6475}svg line.mark{stroke-width:1.2}"
    "svg line.edge{stroke:#2a9d5c;stroke-dasharray:3 3}svg line.onset{stroke:#d4522a;"
    "stroke-width:2}svg line.pct{stroke:#39404d;stroke-dasharray:4 3}"
    "svg line.win{stroke:#c6ccd6}\n"
    "svg .marklabel{font-size:10.5px;fill:#39404d}svg .marklabel.onset{fill:#d4522a}\n"
    "ul.legend{list-style:none;margin:4px 0 0;padding:0;font-size:12px;color:var(--mut)}"
    "ul.legend li{display:inline-block;margin-right:14px}.sw{display:inline-block;width:14px;"
    "height:4px;border-radius:2px;vertical-align:middle;margin-right:5px;"
    "background:currentColor}"
    ".sw.band{height:10px;opacity:.35}.sw.bars{height:10px}\n"
    "p.caption{color:var(--mut);font-size:12px;margin:2px 0 0}\n"
    "table.headline{font-size:15px;margin:6px 0 8px}table.headline td.num{font-weight:600}"
    ".integrity-valid{color:#17603a;font-weight:600}.integrity-degraded{color:#7a5600;"
    "font-weight:600}.integrity-invalid{color:#8f1d1d;font-weight:600}\n"
    "#ergon-selfcheck{font:12px ui-monospace,monospace;color:var(--mut);margin-top:8px}\n"
    "code{font-size:12px}\n";

/* Compares every plot's series and points with its data attributes and
 * every figure cell's text with its data-value (4 significant digits and
 * an SI prefix), and writes the result into #ergon-selfcheck. */
static const char selfcheck_js[] =
    "(function(){var errs=[],P={G:1e9,M:1e6,k:1e3,m:1e-3,'\\u00b5':1e-6,n:1e-9,p:1e-12};\n"
    "var plots=document.querySelectorAll('svg.plot'),ns=0,np=0;\n"
    "plots.forEach(function(s){var se=s.querySelectorAll('.series'),tot=0;\n"
    " if(se.length!=+s.dataset.series)errs.push(s.parentNode.id+': '+se.length+' series, "
    "says '+s.dataset.series);\n"
    " se.forEach(function(e){var n;if(e.tagName=='path'){n=(e.getAttribute('d').match(/M/g)"
    "||[]).length}else{var t=e.getAttribute('points').trim();n=t?t.split(/\\s+/).length:0}\n"
    "  if(n!=+e.dataset.n)errs.push(s.parentNode.id+': a series has '+n+' points, says '"
    "+e.dataset.n);tot+=n});\n"
    " if(tot!=+s.dataset.points)errs.push(s.parentNode.id+': '+tot+' points, says '"
    "+s.dataset.points);ns+=se.length;np+=tot});\n"
    "var cells=document.querySelectorAll('td[data-value]');\n"
    "cells.forEach(function(td){var v=parseFloat(td.dataset.value),m=/^\\s*(-?[0-9.]+"
    "(?:e[-+]?[0-9]+)?)\\s*(\\S?)/.exec(td.textContent);\n"
    " if(!m){errs.push(td.dataset.path+': no number shown');return}var x=parseFloat(m[1]);"
    "if(P[m[2]]&&td.textContent.trim().split(/\\s+/)[1]&&td.textContent.trim().split(/\\s+/)"
    "[1].length>1)x*=P[m[2]];\n"
    " if(!(Math.abs(x-v)<=Math.abs(v)*6e-4))errs.push(td.dataset.path+': shows '"
    "+td.textContent+' for '+v)});\n"
    "var o=document.getElementById('ergon-selfcheck');o.dataset.status=errs.length?'fail':'ok';"
    "o.dataset.plots=plots.length;o.dataset.series=ns;o.dataset.points=np;"
    "o.dataset.figures=cells.length;\n"
    "o.textContent='self-check '+o.dataset.status+': '+plots.length+' plots, '+ns+' series, '"
    "+np+' points, '+cells.length+' figures'+(errs.length?' — '+errs.join('; '):'');\n"
    "console.log('ergon-selfcheck '+o.dataset.status+' plots='+plots.length+' series='+ns"
    "+' points='+np+' figures='+cells.length);if(errs.length)console.error(errs.join('; '))"
    "})();\n";

/* Digest, figures (run reports) and signature: one banner each. */
static void status_banners(struct ergon_dynbuf *b, const struct html_doc *d,
			   const struct ergon_public_key *pub, enum doc_kind k)
{
	struct ergon_err e = {0};
	if (d->note[0]) {
		ergon_dynbuf_adds(b, "<div class=\"banner bad\" data-check=\"truncated\">");
		ergon_html_escape(b, d->note);
		ergon_dynbuf_adds(b, "</div>\n");
	}
	if (k == K_MODEL) {
		/* An energy model names the report it was exported from; it has no
		 * digest of its own. */
		ergon_dynbuf_adds(
		    b, "<div class=\"banner warn\" data-check=\"digest\" "
		       "data-ok=\"0\">An energy model carries the report_id of the "
		       "report it was exported from, not a digest of itself: verify that "
		       "report (ergon verify) to trust these values.</div>\n");
		return;
	}
	int digest_ok = ergon_artifact_check_digest(d->a, &e) == 0;
	ergon_dynbuf_addf(b, "<div class=\"banner %s\" data-check=\"digest\" data-ok=\"%d\">",
			  digest_ok ? "ok" : "bad", digest_ok);
	if (digest_ok)
		ergon_dynbuf_adds(b, "Digest OK: report_id matches the content.");
	else {
		ergon_dynbuf_adds(b, "CHANGED OR DAMAGED: ");
		ergon_html_escape(b, e.msg);
		ergon_dynbuf_adds(b, " — the figures below are what the file says, not verified.");
	}
	ergon_dynbuf_adds(b, "</div>\n");
	if (k == K_RUN && digest_ok) {
		ergon_err_clear(&e);
		int ok = ergon_report_verify(d->a, &e) == 0;
		ergon_dynbuf_addf(b,
				  "<div class=\"banner %s\" data-check=\"figures\" "
				  "data-ok=\"%d\">",
				  ok ? "ok" : "bad", ok);
		if (ok)
			ergon_dynbuf_addf(
			    b,
			    "Figures verified: every figure follows from the embedded "
			    "series (tolerance %g relative + %g absolute).",
			    ERGON_VERIFY_REL, ERGON_VERIFY_ABS);
		else {
			ergon_dynbuf_adds(b, "FIGURES DO NOT FOLLOW FROM THE SERIES: ");
			ergon_html_escape(b, e.msg);
		}
		ergon_dynbuf_adds(b, "</div>\n");
	}
	char signer[ERGON_KEY_ID_MAX];
	int signed_ = ergon_artifact_signer(d->a, signer);
	const char *cls = "warn", *state = "unsigned";
	char msg[ERGON_ERR_MSG_MAX + 200];
	if (!signed_) {
		snprintf(msg, sizeof msg, "Unsigned: nothing says who wrote it (ergon sign).");
	} else if (pub == NULL) {
		snprintf(msg, sizeof msg,
			 "Signed by %s — not checked here (ergon report --pubkey PUB, or ergon "
			 "verify --pubkey PUB).",
			 signer);
		state = "signed-unchecked";
	} else {
		ergon_err_clear(&e);
		if (ergon_artifact_check_signature(d->a, pub, &e) == 0 && digest_ok) {
			snprintf(msg, sizeof msg, "Signature OK: signed by %s.", pub->key_id);
			cls = "ok";
			state = "signature-ok";
		} else {
			snprintf(msg, sizeof msg, "SIGNATURE DOES NOT VERIFY: %s",
				 e.msg[0] ? e.msg : "the digest does not match");
			cls = "bad";
			state = "signature-bad";
		}
	}
	ergon_dynbuf_addf(b, "<div class=\"banner %s\" data-check=\"signature\" data-state=\"%s\">",
			  cls, state);
	ergon_html_escape(b, msg);
	ergon_dynbuf_adds(b, "</div>\n");
}

/* The ± of a figure: its budget's U (k = 2) when complete, else the
 * sibling plain uncertainty, else why there is none. Writes one cell. */
static void headline_u(struct ergon_dynbuf *b, const json_t *a, const char *budget_path,
		       const char *plain_path, const char *basis_path, const char *unit)
{
	const json_t *bj = ergon_jpath(a, budget_path);
	char path[160];
	if (json_is_object(bj) && json_is_true(json_object_get(bj, "complete"))) {
		snprintf(path, sizeof path, "%s.U", budget_path);
		hd_figure_cell(b, path, json_object_get(bj, "U"), unit);
		ergon_dynbuf_adds(b, "<td class=\"text\">U, k = 2 (the budget below)</td>");
		return;
	}
	const json_t *u = plain_path ? ergon_jpath(a, plain_path) : NULL;
	if (json_is_number(u)) {
		hd_figure_cell(b, plain_path, u, unit);
		const char *basis =
		    basis_path ? json_string_value(ergon_jpath(a, basis_path)) : NULL;
		ergon_dynbuf_adds(b, "<td class=\"text\">");
		ergon_html_escape(b, basis ? basis : "as the artifact states it");
		ergon_dynbuf_adds(b, "</td>");
		return;
	}
	ergon_dynbuf_adds(b, "<td class=\"na\">not stated</td><td class=\"text\">");
	if (json_is_object(bj)) {
		ergon_dynbuf_adds(b, "the budget is incomplete: ");
		ergon_html_escape(b, json_string_value(json_object_get(bj, "dominant")));
		ergon_dynbuf_adds(b, " is unknown");
	} else {
		ergon_dynbuf_adds(b, "no uncertainty budget in the artifact");
	}
	ergon_dynbuf_adds(b, "</td>");
}

/* The headline: the figure the artifact exists for (energy per operation
 * or per inference) with its ±, its integrity and its date, before
 * anything else; the cells carry data-path like every figure cell. */
static void headline(struct ergon_dynbuf *b, const struct html_doc *d, enum doc_kind k)
{
	const json_t *a = d->a;
	const char *integ = json_string_value(json_object_get(a, "integrity"));
	const char *integ_path = "integrity";
	if (integ == NULL) {
		integ = json_string_value(ergon_jpath(a, "power.integrity"));
		integ_path = "power.integrity";
	}
	ergon_dynbuf_adds(b, "<table class=\"headline\" data-headline=\"1\"><tr>"
			     "<th>figure</th><th>value</th><th>±</th><th>how</th></tr>\n");
	if (k == K_RUN) {
		const json_t *e = ergon_jpath(a, "figures.energy_per_op");
		static const char *const rows[][3] = {
		    {"total_j", "total_budget", "energy per operation"},
		    {"above_idle_j", "above_idle_budget", "energy per operation above idle"}};
		for (size_t i = 0; i < 2; i++) {
			char path[128], bpath[128];
			snprintf(path, sizeof path, "figures.energy_per_op.%s", rows[i][0]);
			snprintf(bpath, sizeof bpath, "figures.energy_per_op.%s", rows[i][1]);
			ergon_dynbuf_addf(b, "<tr><th>%s</th>", rows[i][2]);
			if (!json_is_number(json_object_get(e, rows[i][0]))) {
				ergon_dynbuf_adds(b, "<td class=\"na\">withheld</td><td></td>"
						     "<td class=\"text\">");
				ergon_html_escape(
				    b, json_string_value(json_object_get(e, "reason"))
					   ? json_string_value(json_object_get(e, "reason"))
					   : "see the issues");
				ergon_dynbuf_adds(b, "</td></tr>\n");
				continue;
			}
			hd_figure_cell(b, path, json_object_get(e, rows[i][0]), "J");
			headline_u(b, a, bpath, NULL, NULL, "J");
			ergon_dynbuf_adds(b, "</tr>\n");
		}
	} else if (k == K_PROFILE && json_is_object(json_object_get(a, "power"))) {
		const json_t *epi = ergon_jpath(a, "power.energy_per_inference_j");
		ergon_dynbuf_adds(b, "<tr><th>energy per inference</th>");
		if (json_is_number(epi)) {
			hd_figure_cell(b, "power.energy_per_inference_j", epi, "J");
			headline_u(b, a, "power.uncertainty.energy_per_inference_j",
				   "power.energy_per_inference_uncertainty_j",
				   "power.uncertainty_basis", "J");
		} else {
			const json_t *why = ergon_jpath(a, "power.per_inference_omitted_reasons");
			ergon_dynbuf_adds(b, "<td class=\"na\">withheld</td><td></td>"
					     "<td class=\"text\">");
			size_t i;
			const json_t *x;
			json_array_foreach(why, i, x)
			{
				ergon_dynbuf_adds(b, i ? ", " : "");
				ergon_html_escape(b, json_is_string(x) ? json_string_value(x) : "?");
			}
			if (json_array_size(why) == 0)
				ergon_dynbuf_adds(b, "not measured per inference (see the checks)");
			else
				ergon_dynbuf_adds(b, " (see the issues)");
			ergon_dynbuf_adds(b, "</td>");
		}
		ergon_dynbuf_adds(b, "</tr>\n<tr><th>energy in the gated windows</th>");
		hd_figure_cell(b, "power.energy_j", ergon_jpath(a, "power.energy_j"), "J");
		headline_u(b, a, "power.uncertainty.energy_j", NULL, NULL, "J");
		ergon_dynbuf_adds(b, "</tr>\n");
	}
	ergon_dynbuf_addf(b,
			  "<tr><th>integrity</th><td class=\"text integrity-%s\" "
			  "data-path=\"%s\">",
			  integ ? integ : "unknown", integ_path);
	ergon_html_escape(b, integ ? integ : "not stated");
	ergon_dynbuf_adds(b, "</td><td></td><td class=\"text\">");
	ergon_html_escape(b, integ && strcmp(integ, "valid") == 0 ? "every check passed"
								  : "see the issues below");
	ergon_dynbuf_adds(b, "</td></tr>\n<tr><th>date</th>");
	const char *date = json_string_value(ergon_jpath(a, "power.capture_start_utc"));
	if (date == NULL)
		date = json_string_value(ergon_jpath(a, "provenance.recording.capture_start_utc"));
	if (date) {
		ergon_dynbuf_adds(b, "<td class=\"text\" data-date=\"1\">");
		ergon_html_escape(b, date);
		ergon_dynbuf_adds(b, "</td><td></td><td class=\"text\">the first sample of the "
				     "recording (UTC)</td></tr>\n");
	} else {
		ergon_dynbuf_adds(b, "<td class=\"na\">not recorded</td><td></td>"
				     "<td class=\"text\">this artifact carries no clock time</td>"
				     "</tr>\n");
	}
	ergon_dynbuf_adds(b, "</table>\n");
}

static void chips(struct ergon_dynbuf *b, const json_t *a)
{
	static const char *const paths[][2] = {{"provenance", "provenance.kind"},
					       {"integrity", "integrity"},
					       {"status", "status"},
					       {"device", "device.name"},
					       {"board", "board.name"},
					       {"instrument", "instrument.model"},
					       {"workload", "workload.spec"},
					       {"tool", "tool.version"}};
	ergon_dynbuf_adds(b, "<div class=\"chips\">");
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		const char *s = json_string_value(ergon_jpath(a, paths[i][1]));
		if (s == NULL)
			continue;
		ergon_dynbuf_addf(b, "<span>%s <b>", paths[i][0]);
		ergon_html_escape(b, s);
		ergon_dynbuf_adds(b, "</b></span>");
	}
	ergon_dynbuf_adds(b, "</div>\n");
}

static void identity_block(struct ergon_dynbuf *b, const json_t *a)
{
	ergon_dynbuf_adds(b, "<h3>Provenance, instrument, conditions</h3><div class=\"grid\">");
	hd_kv_table(b, json_object_get(a, "provenance"), "provenance");
	hd_kv_table(b, json_object_get(a, "instrument"), "instrument identity");
	hd_kv_table(b, json_object_get(a, "conditions"), "conditions");
	json_t *ids = json_object();
	const json_t *rid = json_object_get(a, "report_id");
	json_object_set_new(ids, "report_id", rid ? json_deep_copy(rid) : json_string("(missing)"));
	const json_t *sig = json_object_get(a, "signature");
	if (sig)
		json_object_set_new(ids, "signature", json_deep_copy(sig));
	json_object_set_new(ids, "schema", json_deep_copy(json_object_get(a, "schema")));
	json_object_set_new(ids, "schema_version",
			    json_deep_copy(json_object_get(a, "schema_version")));
	hd_kv_table(b, ids, "identity");
	json_decref(ids);
	ergon_dynbuf_adds(b, "</div>\n");
}

static void generic_section(struct ergon_dynbuf *b, const struct html_doc *d)
{
	json_t *body = json_deep_copy(d->a);
	const char *drop[] = {"provenance", "instrument", "conditions",	    "issues", "report_id",
			      "signature",  "schema",	  "schema_version", "tool"};
	for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++)
		json_object_del(body, drop[i]);
	ergon_dynbuf_adds(b, "<h3>Content</h3>");
	hd_kv_table(b, body, "fields");
	json_decref(body);
}

static int render(const struct ergon_html_input *in, size_t n, const struct ergon_html_options *o,
		  struct ergon_dynbuf *b, struct ergon_err *err)
{
	struct html_doc docs[ERGON_HTML_INPUTS_MAX];
	struct ergon_public_key pub;
	int rc = 0;
	size_t loaded = 0;
	if (n == 0 || n > ERGON_HTML_INPUTS_MAX)
		return ergon_err_set(err, ERGON_EUSAGE, "report: give 1 to %d artifacts",
				     ERGON_HTML_INPUTS_MAX);
	if (o && o->pubkey_path && (rc = ergon_public_key_load(o->pubkey_path, &pub, err)) != 0)
		return rc;
	memset(docs, 0, sizeof docs);
	for (size_t i = 0; i < n; i++, loaded++) {
		docs[i].path = in[i].path;
		docs[i].jls_path = in[i].jls_path;
		docs[i].index = (int)i;
		if ((rc = load(&docs[i], in[i].artifact, err)) != 0)
			goto out;
		if (kind_of(docs[i].a) == K_UNKNOWN) {
			const char *s = json_string_value(json_object_get(docs[i].a, "schema"));
			rc = ergon_err_set(err, ERGON_EUSAGE,
					   "%s: schema %s is not one ergon writes (ergon.report, "
					   "ergon.profile, " ERGON_ENERGY_MODEL_SCHEMA ", ergon.compare, "
					   "ergon.kernels, ergon.trend); nothing rendered",
					   in[i].path, s ? s : "(missing)");
			loaded++;
			goto out;
		}
		if (in[i].jls_path && kind_of(docs[i].a) != K_PROFILE) {
			rc = ergon_err_set(err, ERGON_EUSAGE,
					   "%s: --jls %s: a recording goes with a profile or "
					   "analyze summary, not with this artifact",
					   in[i].path, in[i].jls_path);
			loaded++;
			goto out;
		}
		if (in[i].jls_path) {
			struct ergon_err cerr = {0};
			int crc = ergon_summary_recording_check(docs[i].a, in[i].path,
								in[i].jls_path, &cerr);
			/* Only a recording that is not shown to belong may be drawn
			 * anyway; one that cannot be read fails here. */
			if (crc != 0 && (crc != ERGON_EREFUSED || !in[i].force_jls)) {
				rc = ergon_err_set(err, crc, "%s", cerr.msg);
				loaded++;
				goto out;
			}
			if (crc != 0)
				snprintf(docs[i].jls_note, sizeof docs[i].jls_note, "%s", cerr.msg);
		}
	}
	ergon_dynbuf_adds(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
			     "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
			     "'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
			     "<meta name=\"viewport\" content=\"width=device-width\">\n"
			     "<meta name=\"generator\" content=\"ergon " ERGON_VERSION "\">\n"
			     "<title>ergon report — ");
	ergon_html_escape(b, in[0].path);
	ergon_dynbuf_addf(b, "%s</title>\n<style>\n%s</style></head><body>\n", n > 1 ? " …" : "",
			  css);
	ergon_dynbuf_addf(b,
			  "<header class=\"top\"><h1>ergon report</h1><p>%zu artifact%s, "
			  "rendered by ergon %s. Self-contained: this page loads nothing.</p>"
			  "</header>\n<main>\n",
			  n, n > 1 ? "s" : "", ERGON_VERSION);
	for (size_t i = 0; i < n; i++) {
		struct html_doc *d = &docs[i];
		enum doc_kind k = kind_of(d->a);
		static const char *const kind_names[] = {
		    "?",	  "run report",	    "profile summary", "energy model",
		    "comparison", "kernel timings", "trend (ergon db)"};
		const char *kname = kind_names[k];
		if (k == K_PROFILE && !json_object_get(d->a, "profile"))
			kname = "power analysis (ergon analyze)";
		ergon_dynbuf_addf(b,
				  "<section class=\"artifact\" id=\"a%zu\" data-kind=\"%s\" "
				  "data-truncated=\"%d\">\n<h2>",
				  i,
				  k == K_RUN	   ? "run"
				  : k == K_PROFILE ? "profile"
				  : k == K_KERNELS ? "kernels"
						   : "other",
				  d->truncated);
		ergon_html_escape(b, kname);
		ergon_dynbuf_adds(b, "</h2><p class=\"sub\">");
		ergon_html_escape(b, d->path);
		ergon_dynbuf_adds(b, "</p>\n");
		headline(b, d, k);
		status_banners(b, d, o && o->pubkey_path ? &pub : NULL, k);
		hd_issues(b, json_object_get(d->a, "issues"), "issues");
		chips(b, d->a);
		if (k == K_RUN) {
			hd_run_section(b, d);
		} else if (k == K_PROFILE) {
			if ((rc = hd_profile_section(b, d, err)) != 0)
				goto out;
		} else if (k == K_COMPARE) {
			hd_compare_section(b, d);
		} else if (k == K_KERNELS) {
			hd_kernels_section(b, d);
		} else if (k == K_TREND) {
			hd_trend_section(b, d);
		} else {
			generic_section(b, d);
		}
		identity_block(b, d->a);
		ergon_dynbuf_adds(b, "</section>\n");
	}
	ergon_dynbuf_addf(b,
			  "<div id=\"ergon-selfcheck\" data-status=\"not run\">self-check not "
			  "run (scripts disabled)</div>\n</main>\n<script>\n%s</script>\n"
			  "</body></html>\n",
			  selfcheck_js);
	rc = ergon_dynbuf_error(b);
	if (rc)
		rc = ergon_err_set(err, rc, "report: the page is over %zu bytes or out of memory",
				   (size_t)HTML_MAX);
out:
	for (size_t i = 0; i < loaded && i < n; i++)
		json_decref(docs[i].a);
	return rc;
}

int ergon_report_html(const struct ergon_html_input *in, size_t n,
		      const struct ergon_html_options *o, char **html, size_t *len,
		      struct ergon_err *err)
{
	struct ergon_dynbuf b;
	*html = NULL;
	ergon_dynbuf_init(&b, HTML_MAX);
	int rc = render(in, n, o, &b, err);
	if (rc) {
		ergon_dynbuf_free(&b);
		return rc;
	}
	*html = ergon_dynbuf_take(&b, len);
	return *html ? 0 : ergon_err_set(err, ERGON_ENOMEM, "report: out of memory");
}

int ergon_report_html_write(const struct ergon_html_input *in, size_t n,
			    const struct ergon_html_options *o, const char *out, unsigned flags,
			    struct ergon_err *err)
{
	char *html = NULL;
	size_t len = 0;
	int rc = ergon_file_check_writable(out, flags, err);
	if (rc)
		return rc;
	if ((rc = ergon_report_html(in, n, o, &html, &len, err)) != 0)
		return rc;
	rc = ergon_file_write_atomic(out, html, len, flags, err);
	free(html);
	return rc;
}
