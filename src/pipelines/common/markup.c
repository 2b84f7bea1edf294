/* HTML and XML text escaping, shared by the report renderers (report/) and
 * validate's JUnit XML (common.h). */
#include "pipelines/common/common.h"

void ergon_html_escape(struct ergon_dynbuf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<':
			ergon_dynbuf_adds(b, "&lt;");
			break;
		case '>':
			ergon_dynbuf_adds(b, "&gt;");
			break;
		case '&':
			ergon_dynbuf_adds(b, "&amp;");
			break;
		case '"':
			ergon_dynbuf_adds(b, "&quot;");
			break;
		case '\'':
			ergon_dynbuf_adds(b, "&#39;");
			break;
		default:
			ergon_dynbuf_add(b, s, 1);
		}
	}
}
