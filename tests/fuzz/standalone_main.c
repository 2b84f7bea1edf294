/* Runs a libFuzzer target over every file of a corpus folder, so that the
 * normal (sanitized) test build replays the seed corpus and past findings
 * without clang's libFuzzer. Usage: fuzzcorpus_<name> DIR [DIR...] */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return -1;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
	size_t got = n > 0 ? fread(buf, 1, (size_t)n, f) : 0;
	fclose(f);
	LLVMFuzzerTestOneInput(buf, got);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0;
	/* The empty input always runs. */
	LLVMFuzzerTestOneInput((const uint8_t *)"", 0);
	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		if (d == NULL) {
			if (run_file(argv[i]) == 0)
				files++;
			continue;
		}
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			if (run_file(path) == 0)
				files++;
		}
		closedir(d);
	}
	printf("%d passed, 0 failed\n", files + 1);
	return 0;
}
