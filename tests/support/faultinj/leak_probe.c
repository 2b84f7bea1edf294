/* A program that leaks in libergon on purpose, for
 * tests/functional/test_reliab_faultinj_lsan.sh: it shows that the
 * fault-injection walks' LeakSanitizer settings (faultinj_lib.sh: the shim
 * preloaded, lsan.supp) still catch a leak in ergon's own code, on a
 * machine with or without the C library's debug symbols.
 *
 *   ergon_leak_probe leak    builds a text in an ergon_dynbuf, takes it and
 *                            drops the pointer: one allocation, made by
 *                            libergon (ergon_dynbuf_add), never freed
 *   ergon_leak_probe free    the same, and frees it (the control)
 *
 * It calls setlocale(LC_CTYPE, "") first, as ergon's main does, so the
 * stack of every allocation it makes passes through the same C library
 * frames as ergon's (__libc_start_call_main, the shim's main_armed and
 * malloc): a suppression that matched those would hide this leak too.
 * Exit 0 when nothing leaked (LeakSanitizer then turns a leak into a
 * non-zero exit), 3 when the text could not be built (out of memory).
 */
#include "ergon/dynbuf.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char PLANTED[] = "planted leak: an ergon_dynbuf's text, never freed";

/* noinline: the pointer lives and dies in this frame, below main's. */
static __attribute__((noinline)) int plant(int leak)
{
	struct ergon_dynbuf b;
	ergon_dynbuf_init(&b, 4096);
	ergon_dynbuf_adds(&b, PLANTED);
	size_t len = 0;
	char *volatile text = ergon_dynbuf_take(&b, &len);
	if (text == NULL) {
		fprintf(stderr, "ergon_leak_probe: out of memory\n");
		return 3;
	}
	printf("%zu bytes: %s\n", len, text);
	if (!leak)
		free(text);
	/* Drop the only pointer (volatile: the store is kept). */
	text = NULL;
	return 0;
}

int main(int argc, char **argv)
{
	setlocale(LC_CTYPE, "");
	if (argc != 2 || (strcmp(argv[1], "leak") != 0 && strcmp(argv[1], "free") != 0)) {
		fprintf(stderr, "usage: ergon_leak_probe leak|free\n");
		return 2;
	}
	return plant(strcmp(argv[1], "leak") == 0);
}
