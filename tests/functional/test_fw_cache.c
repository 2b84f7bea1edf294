/* The firmware object cache (docs/internals/fw_cache.md), through
 * ergon_model_fw_build on kws_ref_model.tflite, with XDG_CACHE_HOME in a
 * folder of this test (never the user's cache):
 *   a first build compiles every unit and a second, into a new folder,
 *   compiles none, and links the same ELF; --no-cache compiles every unit,
 *   touches no cache file and links the same ELF, byte for byte; a
 *   damaged, truncated or header-only entry is never used (that unit is
 *   built again, the ELF unchanged); a change of flags (ERGON_TFL_KERNELS),
 *   of a source of the target tree, or of the toolchain (a wrapper whose
 *   --version differs) builds every unit the change concerns, and a copy
 *   of the tree elsewhere builds none; another input rebuilds the model's
 *   data alone; three processes building at once into an empty cache
 *   compile each unit once in all and link the same ELF.
 * The unit count is counted here from target/src (plus the four port files
 * and the model's data), the ELFs are compared as files: neither comes from
 * the build record under test. Needs arm-none-eabi-gcc (bootstrap.sh). */
#include "ergon/model.h"
#include "ergon/model_fw.h"
#include "test_support.h"

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PORT_UNITS 4 /* port.c libc_min.c startup.S common/model_main.c */

static char *dir;      /* this test's scratch folder */
static char *cache;    /* XDG_CACHE_HOME */
static char *objects;  /* the cache's objects folder */
static char *target;   /* the source tree's target/ */
static struct ergon_model *model;
static uint8_t input[490];
static int n_units; /* counted from the tree, not from ergon */
static int build_no;

static int count_c_files(const char *src)
{
	DIR *d = opendir(src);
	assert_non_null(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);
		n += l > 2 && strcmp(e->d_name + l - 2, ".c") == 0;
	}
	closedir(d);
	return n;
}

/* One build into a new folder; how many units came from where. */
struct tally {
	int built, hit, off, units;
	char folder[512];
	char elf[600];
	char compiler[256];
};

static void tally_of(json_t *b, struct tally *t)
{
	json_t *units = json_object_get(json_object_get(b, "compile"), "units");
	assert_true(json_is_array(units));
	size_t i;
	json_t *u;
	json_array_foreach(units, i, u)
	{
		const char *how = json_string_value(json_object_get(u, "cache"));
		assert_non_null(how);
		t->built += strcmp(how, "built") == 0;
		t->hit += strcmp(how, "hit") == 0;
		t->off += strcmp(how, "off") == 0;
		t->units++;
	}
	snprintf(t->elf, sizeof t->elf, "%s", json_string_value(json_object_get(b, "elf")));
	snprintf(t->compiler, sizeof t->compiler, "%s",
		 json_string_value(json_object_get(b, "compiler")));
}

static struct tally build(unsigned flags, const uint8_t *in)
{
	struct tally t = {0};
	snprintf(t.folder, sizeof t.folder, "%s/b%02d", dir, ++build_no);
	json_t *b = NULL;
	struct ergon_err err = {0};
	if (ergon_model_fw_build(model, "qemu-an547", t.folder, ERGON_MODEL_FW_PROFILE, in ? in : input,
				 sizeof input, flags, &b, &err) != 0)
		fail_msg("build %d: %s", build_no, err.msg);
	tally_of(b, &t);
	json_decref(b);
	return t;
}

static int same_file(const char *a, const char *b)
{
	size_t la = 0, lb = 0;
	char *x = ts_read_file(a, &la), *y = ts_read_file(b, &lb);
	int same = x && y && la == lb && memcmp(x, y, la) == 0;
	free(x);
	free(y);
	return same;
}

/* The cache's entries: names, sizes and times, as one text. */
static char *listing(void)
{
	char *cmd = ts_strf("cd '%s' 2>/dev/null && find . -type f -printf '%%p %%s %%T@\\n' | sort",
			    cache);
	FILE *f = popen(cmd, "r");
	free(cmd);
	assert_non_null(f);
	char *buf = calloc(1, 1 << 20);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = '\0';
	pclose(f);
	return buf;
}

/* The path of the n-th cached object (sorted), or NULL. */
static char *nth_entry(int n)
{
	char *cmd = ts_strf("find '%s' -name '*.o' | sort | sed -n '%dp'", objects, n + 1);
	FILE *f = popen(cmd, "r");
	free(cmd);
	char line[1024] = "";
	if (f) {
		if (!fgets(line, sizeof line, f))
			line[0] = '\0';
		pclose(f);
	}
	line[strcspn(line, "\n")] = '\0';
	return line[0] ? strdup(line) : NULL;
}

static void run(const char *fmt, const char *a)
{
	char *cmd = ts_strf(fmt, a);
	assert_int_equal(system(cmd), 0);
	free(cmd);
}

static void cache_cycle(void **state)
{
	(void)state;
	/* Cold: every unit compiled; warm, into a new folder: none. */
	struct tally cold = build(0, NULL);
	assert_int_equal(cold.units, n_units);
	assert_int_equal(cold.built, n_units);
	struct tally warm = build(0, NULL);
	assert_int_equal(warm.hit, n_units);
	assert_int_equal(warm.built, 0);
	assert_true(same_file(cold.elf, warm.elf));

	/* --no-cache: every unit compiled, no cache file touched, the same
	 * firmware byte for byte (reproducible). */
	char *before = listing();
	struct tally off = build(ERGON_MODEL_FW_NO_CACHE, NULL);
	char *after = listing();
	assert_int_equal(off.off, n_units);
	assert_string_equal(before, after);
	assert_true(same_file(cold.elf, off.elf));
	char *m1 = ts_strf("%s/ergon_an547_profile.map", cold.folder);
	char *m2 = ts_strf("%s/ergon_an547_profile.map", off.folder);
	assert_true(same_file(m1, m2));
	free(m1);
	free(m2);
	free(before);
	free(after);

	/* A damaged entry (one byte of the object flipped), a truncated one
	 * and one cut after its header: each a miss, built again. */
	char *e1 = nth_entry(3), *e2 = nth_entry(7), *e3 = nth_entry(11);
	assert_non_null(e1);
	assert_non_null(e2);
	assert_non_null(e3);
	size_t len = 0;
	char *data = ts_read_file(e1, &len);
	assert_true(len > 200);
	data[len - 100] ^= 0x40;
	assert_int_equal(ts_write_file(e1, data, len), 0);
	free(data);
	assert_int_equal(truncate(e2, 150), 0);
	data = ts_read_file(e3, &len);
	char *nl = memchr(data, '\n', len);
	assert_non_null(nl);
	assert_int_equal(ts_write_file(e3, data, (size_t)(nl + 1 - data)), 0);
	free(data);
	struct tally mend = build(0, NULL);
	assert_int_equal(mend.built, 3);
	assert_int_equal(mend.hit, n_units - 3);
	assert_true(same_file(cold.elf, mend.elf));
	struct tally again = build(0, NULL);
	assert_int_equal(again.hit, n_units);
	free(e1);
	free(e2);
	free(e3);

	/* Flags: the Helium kernels' define changes every unit's command. */
	setenv("ERGON_TFL_KERNELS", "mve", 1);
	struct tally mve = build(0, NULL);
	unsetenv("ERGON_TFL_KERNELS");
	assert_int_equal(mve.built, n_units);
	assert_false(same_file(cold.elf, mve.elf));
	assert_int_equal(build(0, NULL).hit, n_units);

	/* Another input: the model's data unit alone. */
	uint8_t other[sizeof input];
	memcpy(other, input, sizeof other);
	other[0] ^= 1;
	struct tally in2 = build(0, other);
	assert_int_equal(in2.built, 1);
	assert_int_equal(in2.hit, n_units - 1);

	/* The tree copied elsewhere: nothing to build (keys do not depend on
	 * where it is), the same ELF; one comment added to one header: every
	 * unit of the tree built again, the model's data not. */
	char *copy = ts_strf("%s/tree/target", dir);
	run("mkdir -p '%s'", copy);
	char *cp = ts_strf("cp -R '%s/.' '%s'", target, copy);
	assert_int_equal(system(cp), 0);
	free(cp);
	setenv("ERGON_TARGET_DIR", copy, 1);
	struct tally moved = build(0, NULL);
	assert_int_equal(moved.hit, n_units);
	assert_true(same_file(cold.elf, moved.elf));
	char *hdr = ts_strf("%s/include/ergon/ert_fmt.h", copy);
	FILE *f = fopen(hdr, "a");
	assert_non_null(f);
	fputs("/* a change of a source */\n", f);
	fclose(f);
	struct tally edited = build(0, NULL);
	assert_int_equal(edited.built, n_units - 1);
	assert_int_equal(edited.hit, 1);
	unsetenv("ERGON_TARGET_DIR");
	free(hdr);
	free(copy);

	/* The toolchain: a wrapper on PATH whose --version says otherwise
	 * (everything else goes to the real compiler) builds every unit. */
	char *bin = ts_strf("%s/wrap", dir);
	run("mkdir -p '%s'", bin);
	char *script = ts_strf("%s/arm-none-eabi-gcc", bin);
	char *real = NULL;
	FILE *w = popen("command -v arm-none-eabi-gcc", "r");
	char rp[512] = "";
	if (w) {
		if (!fgets(rp, sizeof rp, w))
			rp[0] = '\0';
		pclose(w);
	}
	rp[strcspn(rp, "\n")] = '\0';
	assert_true(rp[0] == '/');
	real = ts_strf("#!/bin/sh\n"
		       "if [ \"$1\" = --version ]; then echo 'arm-none-eabi-gcc (wrapped) 99.9'; "
		       "exit 0; fi\nexec '%s' \"$@\"\n",
		       rp);
	assert_int_equal(ts_write_file(script, real, strlen(real)), 0);
	assert_int_equal(chmod(script, 0755), 0);
	const char *path0 = getenv("PATH");
	char *path1 = ts_strf("%s:%s", bin, path0 ? path0 : "/usr/bin:/bin");
	char *saved = strdup(path0 ? path0 : "/usr/bin:/bin");
	setenv("PATH", path1, 1);
	struct tally wrapped = build(0, NULL);
	setenv("PATH", saved, 1);
	assert_string_equal(wrapped.compiler, "arm-none-eabi-gcc (wrapped) 99.9");
	assert_int_equal(wrapped.built, n_units);
	assert_true(same_file(cold.elf, wrapped.elf));
	free(saved);
	free(path1);
	free(real);
	free(script);
	free(bin);
}

/* Three processes build the same firmware at once into an empty cache:
 * each unit is compiled once in all (the others wait on its lock and take
 * it from the cache), and all three link the same ELF. */
static void concurrent_builders(void **state)
{
	(void)state;
	char *c2 = ts_strf("%s/cache2", dir);
	setenv("XDG_CACHE_HOME", c2, 1);
	enum { K = 3 };
	pid_t pid[K];
	int base = build_no;
	for (int k = 0; k < K; k++) {
		pid[k] = fork();
		assert_true(pid[k] >= 0);
		if (pid[k] == 0) {
			build_no = base + k;
			json_t *b = NULL;
			struct ergon_err err = {0};
			char *folder = ts_strf("%s/b%02d", dir, base + k + 1);
			int rc = ergon_model_fw_build(model, "qemu-an547", folder, ERGON_MODEL_FW_PROFILE, input,
						      sizeof input, 0, &b, &err);
			if (rc)
				fprintf(stderr, "builder %d: %s\n", k, err.msg);
			json_decref(b);
			free(folder);
			_exit(rc ? 1 : 0);
		}
	}
	for (int k = 0; k < K; k++) {
		int st = 0;
		assert_int_equal(waitpid(pid[k], &st, 0), pid[k]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	int built = 0, hit = 0;
	char first[600] = "";
	for (int k = 0; k < K; k++) {
		char *rec = ts_strf("%s/b%02d/build-profile.json", dir, base + k + 1);
		json_error_t je;
		json_t *b = json_load_file(rec, 0, &je);
		assert_non_null(b);
		struct tally t = {0};
		tally_of(b, &t);
		json_decref(b);
		assert_int_equal(t.units, n_units);
		built += t.built;
		hit += t.hit;
		if (k == 0)
			snprintf(first, sizeof first, "%s", t.elf);
		else
			assert_true(same_file(first, t.elf));
		free(rec);
	}
	assert_int_equal(built, n_units);
	assert_int_equal(hit, (K - 1) * n_units);
	build_no = base + K;
	setenv("XDG_CACHE_HOME", cache, 1);
	free(c2);
}

static int setup(void **state)
{
	(void)state;
	dir = ts_tmpdir();
	cache = ts_strf("%s/cache", dir);
	objects = ts_strf("%s/ergon/firmware/v1/objects", cache);
	setenv("XDG_CACHE_HOME", cache, 1);
	const char *src = getenv("ERGON_SOURCE_DIR");
	assert_non_null(src);
	target = ts_strf("%s/target", src);
	setenv("ERGON_TARGET_DIR", target, 1);
	char *s = ts_strf("%s/src", target);
	n_units = count_c_files(s) + PORT_UNITS + 1;
	free(s);
	char *mp = ts_fixture("models/kws_ref_model.tflite");
	struct ergon_err err = {0};
	if (ergon_model_open(mp, &model, &err) != 0)
		fail_msg("%s", err.msg);
	free(mp);
	for (size_t i = 0; i < sizeof input; i++)
		input[i] = (uint8_t)(i * 7u + 3u);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ergon_model_free(model);
	ts_tmpdir_remove(dir);
	free(dir);
	free(cache);
	free(objects);
	free(target);
	return 0;
}

int main(void)
{
	if (system("command -v arm-none-eabi-gcc >/dev/null 2>&1") != 0) {
		fprintf(stderr, "arm-none-eabi-gcc missing (scripts/bootstrap.sh)\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(cache_cycle),
	    cmocka_unit_test(concurrent_builders),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
