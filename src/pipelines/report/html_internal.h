/* Private: the section renderers of ergon report (html_run.c: run
 * reports; html_profile.c: profile and analyze summaries; html_compare.c:
 * comparisons), called by report_html.c (document, loading). The helpers
 * they share are in html_util.h (html_util.c). */
#ifndef ERGON_HTML_INTERNAL_H
#define ERGON_HTML_INTERNAL_H

#include "ergon/dynbuf.h"
#include "ergon/error.h"
#include "pipelines/report/html_util.h"

#include <jansson.h>

/* Sections. */
void hd_run_section(struct ergon_dynbuf *b, const struct html_doc *d);
int hd_profile_section(struct ergon_dynbuf *b, struct html_doc *d, struct ergon_err *err);
void hd_compare_section(struct ergon_dynbuf *b, const struct html_doc *d);
/* ergon.kernels (html_kernels.c). */
void hd_kernels_section(struct ergon_dynbuf *b, const struct html_doc *d);
/* html_trend.c: ergon.trend (ergon db trend --html). */
void hd_trend_section(struct ergon_dynbuf *b, const struct html_doc *d);

#endif
