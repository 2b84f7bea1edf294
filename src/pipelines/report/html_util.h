/* Private: the helpers every renderer of ergon report shares
 * (html_util.c), used by report_html.c and the section files. */
#ifndef ERGON_HTML_UTIL_H
#define ERGON_HTML_UTIL_H

#include "ergon/dynbuf.h"
#include "ergon/error.h"
#include "pipelines/report/report_internal.h"

#include <jansson.h>

/* One artifact as the renderers see it. */
struct html_doc {
	const char *path;
	const char *jls_path;
	json_t *a;		      /* the artifact (possibly recovered from a truncated file) */
	int index;		      /* position in the report: ids are "a<index>-..." */
	int truncated;		      /* recovered from the part of the file that parses */
	char note[ERGON_ERR_MSG_MAX]; /* why it is marked, "" when clean */
};

/* The number at a dotted path (NaN when absent or not a number). */
double hd_num(const json_t *root, const char *path);
/* "%.4g" with an SI prefix for the units ergon uses (J, W, A, V, s, C). */
void hd_fmt(char *out, size_t cap, double v, const char *unit);
/* The unit of a field from its name's suffix (energy_j -> J), or "". */
const char *hd_unit_of(const char *key);
/* A table cell holding a figure: data-path and data-value let the browser
 * test compare it with the artifact. */
void hd_figure_cell(struct ergon_dynbuf *b, const char *path, const json_t *v, const char *unit);
/* A table of the scalar members of obj (at path), one row each, with the
 * ± from the sibling "<name>_u_<unit>" where there is one. */
void hd_scalar_table(struct ergon_dynbuf *b, const json_t *obj, const char *path,
		     const char *title);
/* A key/value table of a nested object, flattened to dotted keys. */
void hd_kv_table(struct ergon_dynbuf *b, const json_t *obj, const char *title);
/* The issues array as a table. */
void hd_issues(struct ergon_dynbuf *b, const json_t *issues, const char *title);
/* Vertical marks at the values of root at marks[i][0] (times scale), each
 * labelled marks[i][1] and the value in unit ("p99 24.17 ms"). */
void hd_value_marks(struct hp_plot *pl, const json_t *root, const char *const (*marks)[2], size_t n,
		    const char *unit, double scale);
/* A plot id: "a<index>-<name>" into out. */
void hd_id(char *out, size_t cap, const struct html_doc *d, const char *name);

#endif
