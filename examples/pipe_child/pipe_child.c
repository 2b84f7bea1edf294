/* An ergon pipe: workload child (docs/internals/workloads.md): a persistent
 * process that answers one request line with one reply line.
 *
 *   ergon run --workload "pipe:build/examples/pipe_child/ergon_pipe_child 64"
 *
 * Per request "invoke <seq>" it multiplies two N x N int8 matrices (N from
 * argv[1], default 0 = no work, for overhead measurements) and replies
 * "ok <seq>", flushing at once: stdout is a socket, fully buffered by
 * default. A request it does not understand gets "err unknown request".
 * EOF on stdin is the cue to exit.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_n(const char *s)
{
	int n = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || n > 1024)
			return -1;
		n = n * 10 + (*s - '0');
	}
	return n <= 1024 ? n : -1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? parse_n(argv[1]) : 0;
	if (n < 0) {
		fprintf(stderr, "pipe_child: N must be 0..1024\n");
		return 2;
	}
	size_t nn = (size_t)n * (size_t)n;
	int8_t *a = malloc(nn + 1), *b = malloc(nn + 1);
	int32_t *c = malloc((nn + 1) * sizeof(int32_t));
	if (!a || !b || !c)
		return 3;
	for (size_t i = 0; i < nn; i++) {
		a[i] = (int8_t)(i * 7u);
		b[i] = (int8_t)(i * 13u);
	}
	char line[256];
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (strncmp(line, "invoke ", 7) != 0) {
			fputs("err unknown request\n", stdout);
			fflush(stdout);
			continue;
		}
		int64_t sum = 0;
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++) {
				int32_t acc = 0;
				for (int k = 0; k < n; k++)
					acc += (int32_t)a[i * n + k] * (int32_t)b[k * n + j];
				c[i * n + j] = acc;
				sum += acc;
			}
		line[strcspn(line, "\r\n")] = '\0';
		/* The checksum rides in the reply text, which ergon ignores; it keeps
		 * the product observable so the compiler cannot drop it. */
		printf("ok %s %lld\n", line + 7, (long long)sum);
		fflush(stdout);
	}
	free(a);
	free(b);
	free(c);
	return 0;
}
