/* Internal to src/core: the number formatter that jcs_stream.c writes
 * straight into its output buffer. */
#ifndef ERGON_CORE_JCS_INTERNAL_H
#define ERGON_CORE_JCS_INTERNAL_H

/* Room ergon_jcs_format_wide may write into (the text is at most 26
 * bytes and a NUL; the rest is scratch its fixed-size copies use). */
#define ERGON_JCS_FORMAT_WIDE 64

/* ergon_jcs_format_number into out[ERGON_JCS_FORMAT_WIDE]: the same text
 * and return value; bytes after the NUL are unspecified. */
int ergon_jcs_format_wide(double v, char *out);

#endif
