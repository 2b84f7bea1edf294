/* Fuzz ergon report's input side: any bytes as an artifact file go through
 * loading, the recovery of a truncated file (the longest prefix that closes
 * into JSON), kind detection and every section renderer. The bytes are
 * handed over as a memfd, the way a file would be. */
#include "ergon/report_html.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz_artifact", 0);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	struct ergon_html_input in = {.path = path};
	char *html = NULL;
	size_t len = 0;
	struct ergon_err err = {0};
	if (ergon_report_html(&in, 1, NULL, &html, &len, &err) == 0 && (html == NULL || len == 0))
		abort(); /* success always yields a page */
	free(html);
	close(fd);
	return 0;
}
