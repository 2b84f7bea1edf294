/* Fuzz the command-line splitter of the command: and pipe: workloads: any
 * bytes must split or fail with a message, never overrun the word buffer,
 * and every word must be NUL-terminated inside it. */
#include "drivers/workloads/wl_proc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	static struct ergon_wl_argv av;
	struct ergon_err err = {0};
	int rc = ergon_wl_argv_split(text, "fuzz", &av, &err);
	if (rc != 0 && err.msg[0] == '\0')
		abort();
	if (rc == 0) {
		if (av.argc == 0 || av.argc > ERGON_WL_ARGV_MAX || av.argv[av.argc] != NULL)
			abort();
		for (size_t i = 0; i < av.argc; i++) {
			const char *w = av.argv[i];
			if (w < av.buf || w >= av.buf + sizeof(av.buf))
				abort();
			size_t room = (size_t)(av.buf + sizeof(av.buf) - w);
			if (memchr(w, '\0', room) == NULL)
				abort();
		}
	}
	free(text);
	return 0;
}
