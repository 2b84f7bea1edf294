/* Runs a libFuzzer target over every file of a corpus folder, so that the
 * normal test build (sanitized under scripts/test.sh) replays the seed
 * corpus and past findings without clang's libFuzzer.
 *   Usage: fuzzcorpus_<name> [--min-seeds N] DIR|FILE [DIR|FILE...]
 * It fails (exit 1) when a folder is missing or cannot be read, when a file
 * cannot be opened or read in full, or when fewer than N seed files were
 * replayed (N defaults to 1): a replay over nothing is not a pass. A target
 * whose property is violated abort()s, which fails the test too. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Seed files larger than this are refused (the corpora hold small seeds). */
#define SEED_MAX_BYTES (64u * 1024u * 1024u)

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "fuzzcorpus: %s: cannot open: %s\n", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
	    (uint64_t)st.st_size > SEED_MAX_BYTES) {
		fprintf(stderr, "fuzzcorpus: %s: not a regular file of at most %u bytes\n", path,
			SEED_MAX_BYTES);
		fclose(f);
		return -1;
	}
	size_t n = (size_t)st.st_size;
	uint8_t *buf = malloc(n > 0 ? n : 1);
	if (buf == NULL) {
		fclose(f);
		return -1;
	}
	size_t got = n > 0 ? fread(buf, 1, n, f) : 0;
	int rerr = ferror(f);
	fclose(f);
	if (got != n || rerr) {
		fprintf(stderr, "fuzzcorpus: %s: read %zu of %zu bytes\n", path, got, n);
		free(buf);
		return -1;
	}
	LLVMFuzzerTestOneInput(buf, got);
	free(buf);
	return 0;
}

static int parse_count(const char *s, long *out)
{
	char *end = NULL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 0 || v > 1000000)
		return -1;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	long min_seeds = 1;
	int files = 0, failed = 0, paths = 0;
	int i = 1;
	if (i + 1 < argc && strcmp(argv[i], "--min-seeds") == 0) {
		if (parse_count(argv[i + 1], &min_seeds) != 0) {
			fprintf(stderr, "fuzzcorpus: --min-seeds: '%s' is not a count 0..1000000\n",
				argv[i + 1]);
			return 2;
		}
		i += 2;
	}
	/* The empty input always runs. */
	LLVMFuzzerTestOneInput((const uint8_t *)"", 0);
	for (; i < argc; i++) {
		paths++;
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "fuzzcorpus: %s: corpus path missing: %s\n", argv[i],
				strerror(errno));
			failed++;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]) == 0)
				files++;
			else
				failed++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		if (d == NULL) {
			fprintf(stderr, "fuzzcorpus: %s: cannot read folder: %s\n", argv[i],
				strerror(errno));
			failed++;
			continue;
		}
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			char path[4096];
			int w = snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			if (w < 0 || (size_t)w >= sizeof(path)) {
				fprintf(stderr, "fuzzcorpus: %s/%s: path too long\n", argv[i],
					e->d_name);
				failed++;
				continue;
			}
			if (run_file(path) == 0)
				files++;
			else
				failed++;
		}
		closedir(d);
	}
	if (paths == 0) {
		fprintf(stderr, "fuzzcorpus: no corpus given (usage: %s [--min-seeds N] DIR...)\n",
			argv[0]);
		return 1;
	}
	printf("%d seed files replayed, %d unreadable\n", files, failed);
	if (failed > 0)
		return 1;
	if (files < min_seeds) {
		fprintf(stderr,
			"fuzzcorpus: only %d seed files replayed, %ld expected: restore the "
			"corpus folder or lower the target's minimum in cmake/ErgonTests.cmake\n",
			files, min_seeds);
		return 1;
	}
	return 0;
}
