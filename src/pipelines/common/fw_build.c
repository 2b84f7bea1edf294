/* Building a ported board's firmware with arm-none-eabi-gcc: the
 * toolchain queries, the target sources, the compile of each unit (in
 * parallel, through the object cache of fw_cache.c) and the link, shared
 * by the model firmware (firmware/model_fw.c) and the kernel firmware
 * (kernels/kernels_qemu.c); declared in common.h. What differs between
 * boards (the core's flags, the port's sources, the linker script) comes
 * from the port's descriptor (fw_port.c, docs/internals/ports.md).
 *
 * Every unit is compiled with the build folder as the working directory
 * and the target tree and that folder mapped away (-ffile-prefix-map), so
 * an object's bytes do not depend on where it was built: a cached object
 * and one compiled here now are the same file, and so is the ELF linked
 * from them (docs/internals/fw_cache.md).
 */
#include "pipelines/common/common.h"

#include "ergon/fileio.h"
#include "ergon/jcs.h"
#include "ergon/lifecycle.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef ERGON_TARGET_DIR
#define ERGON_TARGET_DIR "target"
#endif

#define ARM_GCC "arm-none-eabi-gcc"
#define BUILD_TIMEOUT_S 600.0
#define QUERY_TIMEOUT_S 60.0
#define MAX_ARGS 96
/* Units of one firmware: target/src, the port files, the model's data. */
#define UNITS_MAX 64
/* Compilers run at once, at most (fewer when the machine has fewer CPUs). */
#define JOBS_MAX 32
/* The target tree hashed for the cache key (it is about 0.4 MB). */
#define TREE_BYTES_MAX ((size_t)64 << 20)
#define TREE_DEPTH_MAX 8
#define TREE_NAMES_MAX 512 /* entries of one folder of it */

/* Every unit's flags after the port's machine flags (cpu_flags). */
static const char *const flags[] = {"-std=c11",		 "-O2",		    "-g",
				    "-ffreestanding",	 "-nostdinc",	    "-ffunction-sections",
				    "-fdata-sections",	 "-Wall",	    "-Wextra",
				    "-Wconversion",	 "-Werror"};
#define NFLAGS (sizeof flags / sizeof flags[0])

/* snprintf into a path buffer; ERGON_ETOOBIG (naming the start of the
 * path) when it does not fit. */
__attribute__((format(printf, 4, 5))) static int pathf(struct ergon_err *err, char *out,
						      size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, cap, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= cap)
		return ergon_err_set(err, ERGON_ETOOBIG, "%.64s...: the path is too long", out);
	return 0;
}

/* Update h with the first n bytes of s (n from snprintf: negative is 0). */
static void hash_text(crypto_hash_sha256_state *h, const char *s, int n, size_t cap)
{
	size_t len = n < 0 ? 0 : (size_t)n;
	if (len >= cap)
		len = cap - 1;
	crypto_hash_sha256_update(h, (const unsigned char *)s, (unsigned long long)len);
}

const char *ergon_fw_target_dir(void)
{
	const char *e = getenv("ERGON_TARGET_DIR");
	return e && e[0] ? e : ERGON_TARGET_DIR;
}

/* ---- running things in parallel --------------------------------------- */

/* The compilers that may run at once: the CPUs this process may use. */
static unsigned fw_jobs(void)
{
	cpu_set_t set;
	unsigned n = 0;
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		n = (unsigned)CPU_COUNT(&set);
	if (n == 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		n = c > 0 ? (unsigned)c : 1;
	}
	return n > JOBS_MAX ? JOBS_MAX : n;
}

struct pool {
	pthread_mutex_t mu;
	size_t next, n;
	int stop; /* a job failed: start no more */
	int (*job)(void *ctx, size_t i);
	void *ctx;
};

static void *pool_worker(void *arg)
{
	struct pool *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->mu);
		size_t i = p->next < p->n && !p->stop ? p->next++ : p->n;
		pthread_mutex_unlock(&p->mu);
		if (i >= p->n)
			return NULL;
		if (p->job(p->ctx, i) != 0) {
			pthread_mutex_lock(&p->mu);
			p->stop = 1;
			pthread_mutex_unlock(&p->mu);
		}
	}
}

/* job(ctx, i) for i in [0, n), on up to jobs threads (this one among
 * them); after a failed job no new one starts. */
static void run_parallel(size_t n, unsigned jobs, int (*job)(void *, size_t), void *ctx)
{
	struct pool p = {.n = n, .job = job, .ctx = ctx};
	pthread_mutex_init(&p.mu, NULL);
	pthread_t tid[JOBS_MAX];
	unsigned started = 0;
	for (unsigned k = 1; k < jobs && k < n && started < JOBS_MAX; k++)
		if (pthread_create(&tid[started], NULL, pool_worker, &p) == 0)
			started++;
	pool_worker(&p);
	for (unsigned k = 0; k < started; k++)
		pthread_join(tid[k], NULL);
	pthread_mutex_destroy(&p.mu);
}

/* ---- the toolchain ------------------------------------------------------ */

static int read_text(const char *path, char *buf, size_t cap, int first_line_only,
		     struct ergon_err *err)
{
	char *data = NULL;
	size_t len = 0;
	int rc = ergon_file_read_all(path, 1 << 20, &data, &len, err);
	if (rc)
		return rc;
	size_t n = first_line_only ? strcspn(data, "\r\n") : len;
	snprintf(buf, cap, "%.*s", (int)(n < cap ? n : cap - 1), data);
	free(data);
	return 0;
}

/* What each query asks the compiler driver, and where its answer goes. */
static const struct {
	const char *arg, *file;
	int first_line;
} queries[] = {
    {"-print-file-name=include", "gcc-include.txt", 1}, /* its own headers */
    {"--version", "gcc-version.txt", 0},
    {"-print-prog-name=cc1", "gcc-cc1.txt", 1},
    {"-print-prog-name=as", "gcc-as.txt", 1},
    {"-print-prog-name=ld", "gcc-ld.txt", 1},
};
#define NQUERIES (sizeof queries / sizeof queries[0])

struct queries_run {
	const char *dir;
	char answer[NQUERIES][PATH_MAX];
	int rc[NQUERIES];
	struct ergon_err err[NQUERIES];
};

static int query_job(void *ctx, size_t i)
{
	struct queries_run *q = ctx;
	char log[PATH_MAX];
	snprintf(log, sizeof log, "%s/%s", q->dir, queries[i].file);
	remove(log);
	const char *argv[] = {ARM_GCC, queries[i].arg, NULL};
	q->rc[i] = ergon_lifecycle_run_tool_in(argv, NULL, log, QUERY_TIMEOUT_S, &q->err[i]);
	if (!q->rc[i])
		q->rc[i] = read_text(log, q->answer[i], sizeof q->answer[i], queries[i].first_line,
				     &q->err[i]);
	return q->rc[i];
}

/* What identifies a program: its path, size and modification time. */
static void hash_program(crypto_hash_sha256_state *h, const char *path)
{
	struct stat st;
	char line[PATH_MAX + 96];
	int n;
	if (stat(path, &st) == 0)
		n = snprintf(line, sizeof line, "%s %lld %lld.%09ld\n", path, (long long)st.st_size,
			     (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	else
		n = snprintf(line, sizeof line, "%s missing\n", path);
	hash_text(h, line, n, sizeof line);
}

/* The compiler driver execvp would run: the first ARM_GCC on PATH. */
static void driver_path(char *out, size_t cap)
{
	const char *path = getenv("PATH");
	snprintf(out, cap, "%s", ARM_GCC);
	while (path && *path) {
		size_t l = strcspn(path, ":");
		char cand[PATH_MAX];
		int n = snprintf(cand, sizeof cand, "%.*s/%s", (int)l, l ? path : ".", ARM_GCC);
		if (n > 0 && (size_t)n < sizeof cand && access(cand, X_OK) == 0) {
			snprintf(out, cap, "%s", cand);
			return;
		}
		path += l + (path[l] == ':');
	}
}

static void hex_of(const unsigned char *h, char hex[65])
{
	for (size_t i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", h[i]);
}

int ergon_fw_toolchain(const char *dir, char *inc, size_t inc_cap, char *ver, size_t ver_cap,
		       char id[65], struct ergon_err *err)
{
	struct queries_run q = {.dir = dir};
	run_parallel(NQUERIES, fw_jobs(), query_job, &q);
	for (size_t i = 0; i < NQUERIES; i++)
		if (q.rc[i]) {
			*err = q.err[i];
			return q.rc[i];
		}
	snprintf(inc, inc_cap, "%s", q.answer[0]);
	snprintf(ver, ver_cap, "%.*s", (int)strcspn(q.answer[1], "\r\n"), q.answer[1]);
	/* The toolchain's identity for the cache: the driver's whole version
	 * text and include folder, and the driver, compiler proper, assembler
	 * and linker it runs (a rebuilt binutils changes the objects without
	 * changing gcc's version), and the variables that change its search. */
	crypto_hash_sha256_state h;
	crypto_hash_sha256_init(&h);
	for (size_t i = 0; i < 2; i++)
		crypto_hash_sha256_update(&h, (const unsigned char *)q.answer[i],
					  strlen(q.answer[i]) + 1);
	char drv[PATH_MAX];
	driver_path(drv, sizeof drv);
	hash_program(&h, drv);
	for (size_t i = 2; i < NQUERIES; i++)
		hash_program(&h, q.answer[i]);
	static const char *const env[] = {"GCC_EXEC_PREFIX", "COMPILER_PATH", "CPATH",
					  "C_INCLUDE_PATH"};
	for (size_t i = 0; i < sizeof env / sizeof env[0]; i++) {
		const char *v = getenv(env[i]);
		char line[PATH_MAX];
		int n = snprintf(line, sizeof line, "%s=%s\n", env[i], v ? v : "(unset)");
		hash_text(&h, line, n, sizeof line);
	}
	unsigned char d[crypto_hash_sha256_BYTES];
	crypto_hash_sha256_final(&h, d);
	hex_of(d, id);
	return 0;
}

int ergon_fw_sha256_file(const char *path, char hex[65], struct ergon_err *err)
{
	char *data = NULL;
	size_t len = 0;
	int rc = ergon_file_read_all(path, 256u << 20, &data, &len, err);
	if (rc)
		return rc;
	ergon_sha256_hex(data, len, hex);
	free(data);
	return 0;
}

/* ---- the sources --------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ergon_fw_list_sources(const char *src, int power, char **out, int *n, int cap,
			  struct ergon_err *err)
{
	DIR *d = opendir(src);
	if (d == NULL)
		return ergon_err_errno(
		    err, errno,
		    "%s: cannot open ergon-target's sources; set ERGON_TARGET_DIR "
		    "to the target/ folder of the ergon source tree",
		    src);
	struct dirent *e;
	int rc = 0;
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);
		if (l < 3 || strcmp(e->d_name + l - 2, ".c") != 0)
			continue;
		/* The power build has no emitter and no profile flow. */
		if (power &&
		    (strcmp(e->d_name, "emit.c") == 0 || strcmp(e->d_name, "profile.c") == 0))
			continue;
		if (*n >= cap) {
			rc =
			    ergon_err_set(err, ERGON_ETOOBIG, "%s: more than %d sources", src, cap);
			break;
		}
		if (asprintf(&out[*n], "%s/%s", src, e->d_name) < 0) {
			rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
			break;
		}
		(*n)++;
	}
	closedir(d);
	qsort(out, (size_t)*n, sizeof out[0], cmp_str);
	return rc;
}

/* Every regular file under root/rel (its path from root, size and bytes),
 * in name order, into h: the target tree a unit may include. */
static int hash_tree(crypto_hash_sha256_state *h, const char *root, const char *rel, int depth,
		     size_t *total, struct ergon_err *err)
{
	char path[PATH_MAX];
	int prc = pathf(err, path, sizeof path, "%s/%s", root, rel);
	if (prc)
		return prc;
	DIR *d = opendir(path);
	if (d == NULL)
		return ergon_err_errno(err, errno,
				       "%s: cannot read ergon-target's sources; set "
				       "ERGON_TARGET_DIR to the target/ folder of the ergon source "
				       "tree",
				       path);
	char *names[TREE_NAMES_MAX];
	int n = 0, rc = 0;
	struct dirent *e;
	/* Every name counts: one left out could change an object unseen. */
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == TREE_NAMES_MAX)
			rc = ergon_err_set(err, ERGON_ETOOBIG,
					   "%s: more than %d entries; is ERGON_TARGET_DIR the "
					   "target/ folder of the ergon source tree?",
					   path, TREE_NAMES_MAX);
		else if ((names[n] = strdup(e->d_name)) == NULL)
			rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		else
			n++;
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof names[0], cmp_str);
	for (int i = 0; i < n && rc == 0; i++) {
		char sub[PATH_MAX], full[PATH_MAX];
		rc = pathf(err, sub, sizeof sub, "%s/%s", rel, names[i]);
		if (!rc)
			rc = pathf(err, full, sizeof full, "%s/%s", root, sub);
		struct stat st;
		if (rc)
			break;
		if (stat(full, &st) != 0) {
			rc = ergon_err_errno(err, errno, "%s: cannot read ergon-target's source", full);
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			if (depth >= TREE_DEPTH_MAX) {
				rc = ergon_err_set(err, ERGON_ETOOBIG,
						   "%s: folders nested deeper than %d; is "
						   "ERGON_TARGET_DIR the target/ folder?",
						   full, TREE_DEPTH_MAX);
				break;
			}
			rc = hash_tree(h, root, sub, depth + 1, total, err);
			continue;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		char *data = NULL;
		size_t len = 0;
		rc = ergon_file_read_all(full, TREE_BYTES_MAX, &data, &len, err);
		if (rc)
			break;
		*total += len;
		if (*total > TREE_BYTES_MAX) {
			free(data);
			rc = ergon_err_set(err, ERGON_ETOOBIG,
					   "%s: ergon-target's sources exceed %zu MiB; is "
					   "ERGON_TARGET_DIR the target/ folder?",
					   root, TREE_BYTES_MAX >> 20);
			break;
		}
		char head[PATH_MAX + 32];
		hash_text(h, head, snprintf(head, sizeof head, "%s %zu\n", sub, len), sizeof head);
		crypto_hash_sha256_update(h, (const unsigned char *)data, (unsigned long long)len);
		free(data);
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	return rc;
}

/* ---- one firmware ----------------------------------------------------- */

/* The folders hashed for the objects' keys, in a fixed order: include/,
 * src/, then port/<x> of every file the port names, each once. */
static size_t tree_parts(const struct ergon_fw_build *b, char (*parts)[ERGON_FW_PORT_PATH_MAX],
			 size_t cap)
{
	size_t n = 0;
	snprintf(parts[n++], ERGON_FW_PORT_PATH_MAX, "include");
	snprintf(parts[n++], ERGON_FW_PORT_PATH_MAX, "src");
	const struct ergon_fw_port *p = b->port;
	for (int i = 0; i < p->n_include_dirs + p->n_sources + 2 && n < cap; i++) {
		const char *f = i < p->n_include_dirs ? p->include_dirs[i]
				: i < p->n_include_dirs + p->n_sources
				    ? p->sources[i - p->n_include_dirs]
				: i == p->n_include_dirs + p->n_sources ? b->main_src
									: p->linker_script;
		/* port/<x>: the first two components (a file elsewhere in
		 * the tree is under include/ or src/, hashed already). */
		if (strncmp(f, "port/", 5) != 0)
			continue;
		size_t l = 5 + strcspn(f + 5, "/");
		size_t k = 0;
		while (k < n && !(strlen(parts[k]) == l && strncmp(parts[k], f, l) == 0))
			k++;
		if (k == n)
			snprintf(parts[n++], ERGON_FW_PORT_PATH_MAX, "%.*s", (int)l, f);
	}
	return n;
}

struct unit {
	char src[PATH_MAX];	/* absolute */
	char rel[PATH_MAX];	/* for the record: target/src/x.c, or the file in dir */
	char obj[PATH_MAX];	/* obj-<name>/<flat>.o, relative to dir */
	char obj_abs[PATH_MAX]; /* the same in dir */
	int model;		/* gets b->model_defines */
	int model_data;		/* the generated data: keyed by its own bytes */
	char key[65];		/* the cache key */
	char sha[65];		/* the object's SHA-256 */
	const char *how;	/* "hit", "built" or "off" */
	char log[PATH_MAX];	/* the compiler's output */
	int rc;
	struct ergon_err err;
};

struct compile {
	struct ergon_fw_build *b;
	struct unit *u;
	size_t n;
	const char *cache; /* NULL: no cache */
	char *argv[MAX_ARGS]; /* the flags every unit gets */
	int argc;
};

/* a with prefix old replaced by new (the key must not depend on where the
 * tree or the build folder is: the objects do not). */
static void canon(char *out, size_t cap, const char *a, const char *tdir, const char *dir)
{
	const char *rep[2][2] = {{dir, "@DIR"}, {tdir, "@TARGET"}};
	/* The longer prefix first: one folder may be inside the other. */
	int first = strlen(tdir) > strlen(dir);
	for (int k = 0; k < 2; k++) {
		const char *from = rep[first ^ k][0], *to = rep[first ^ k][1];
		const char *hit = strstr(a, from);
		if (hit) {
			snprintf(out, cap, "%.*s%s%s", (int)(hit - a), a, to, hit + strlen(from));
			return;
		}
	}
	snprintf(out, cap, "%s", a);
}

/* The argv of unit i into argv (NULL-terminated); returns its length. */
static int unit_argv(const struct compile *c, size_t i, const char **argv)
{
	const struct unit *u = &c->u[i];
	int n = 0;
	for (int k = 0; k < c->argc; k++)
		argv[n++] = c->argv[k];
	for (size_t k = 0; u->model && c->b->model_defines && c->b->model_defines[k]; k++)
		argv[n++] = c->b->model_defines[k];
	argv[n++] = "-c";
	argv[n++] = u->src;
	argv[n++] = "-o";
	argv[n++] = u->obj_abs;
	argv[n] = NULL;
	return n;
}

/* The cache key of unit i: everything its object is made from. */
static int unit_key(struct compile *c, size_t i, const char *toolchain, const char *tree,
		    const char *tdir, struct ergon_err *err)
{
	struct unit *u = &c->u[i];
	const char *argv[MAX_ARGS + 8];
	char a[PATH_MAX * 2];
	int n = unit_argv(c, i, argv);
	crypto_hash_sha256_state h;
	crypto_hash_sha256_init(&h);
	static const char tag[] = "ergon-fw-object 1";
	crypto_hash_sha256_update(&h, (const unsigned char *)tag, sizeof tag);
	crypto_hash_sha256_update(&h, (const unsigned char *)toolchain, 65);
	/* The port's descriptor: a changed descriptor is a different build
	 * even where the flags it gives are the same. */
	crypto_hash_sha256_update(&h, (const unsigned char *)c->b->port->sha256, 65);
	for (int k = 0; k < n; k++) {
		/* The maps only take the two folders out of the object; their
		 * order follows which path is longer, the key must not. */
		if (strncmp(argv[k], "-ffile-prefix-map=", 18) == 0 ||
		    strncmp(argv[k], "-fdebug-prefix-map=", 19) == 0)
			continue;
		canon(a, sizeof a, argv[k], tdir, c->b->dir);
		crypto_hash_sha256_update(&h, (const unsigned char *)a, strlen(a) + 1);
	}
	if (!u->model_data) {
		crypto_hash_sha256_update(&h, (const unsigned char *)tree, 65);
	} else {
		/* The data unit and the files it pulls in, by name in the build
		 * folder and content. */
		const char *files[16] = {u->rel};
		int nf = 1;
		for (size_t k = 0; c->b->model_files && c->b->model_files[k] && nf < 16; k++)
			files[nf++] = c->b->model_files[k];
		for (int k = 0; k < nf; k++) {
			char path[PATH_MAX], hex[65];
			int rc = pathf(err, path, sizeof path, "%s/%s", c->b->dir, files[k]);
			if (!rc)
				rc = ergon_fw_sha256_file(path, hex, err);
			if (rc)
				return rc;
			crypto_hash_sha256_update(&h, (const unsigned char *)files[k],
						  strlen(files[k]) + 1);
			crypto_hash_sha256_update(&h, (const unsigned char *)hex, 65);
		}
	}
	unsigned char d[crypto_hash_sha256_BYTES];
	crypto_hash_sha256_final(&h, d);
	hex_of(d, u->key);
	return 0;
}

/* One unit: from the cache when its object is there and intact, else
 * compiled (and stored). Its builders of the same key take turns. */
static int unit_job(void *ctx, size_t i)
{
	struct compile *c = ctx;
	struct unit *u = &c->u[i];
	const char *obj = u->obj_abs;
	const char *argv[MAX_ARGS + 8];
	unit_argv(c, i, argv);
	int found = 0, lock = -1;
	if (c->cache) {
		u->rc = ergon_fw_cache_get(c->cache, u->key, obj, u->sha, &found, &u->err);
		if (!u->rc && !found && ergon_fw_cache_lock(c->cache, u->key, &lock) == 0)
			/* Another command may have built it while we waited. */
			u->rc = ergon_fw_cache_get(c->cache, u->key, obj, u->sha, &found, &u->err);
		if (u->rc || found) {
			u->how = "hit";
			ergon_fw_cache_unlock(lock);
			return u->rc;
		}
	}
	remove(u->log);
	u->rc = ergon_lifecycle_run_tool_in(argv, c->b->dir, u->log, BUILD_TIMEOUT_S, &u->err);
	if (!u->rc)
		u->rc = ergon_fw_sha256_file(obj, u->sha, &u->err);
	if (!u->rc && c->cache)
		ergon_fw_cache_put(c->cache, u->key, obj);
	ergon_fw_cache_unlock(lock);
	u->how = c->cache ? "built" : "off";
	return u->rc;
}

/* The object's file name: the source's path from the tree, '/' -> '_'. */
static void flat_name(char *out, size_t cap, const char *rel)
{
	snprintf(out, cap, "%s", rel);
	char *dot = strrchr(out, '.');
	if (dot)
		*dot = '\0';
	for (char *p = out; *p; p++)
		if (*p == '/')
			*p = '_';
}

static int add_unit(struct compile *c, const char *src, const char *rel, int model,
		    int model_data, struct ergon_err *err)
{
	if (c->n >= UNITS_MAX)
		return ergon_err_set(err, ERGON_ETOOBIG, "more than %d firmware sources",
				     UNITS_MAX);
	struct unit *u = &c->u[c->n++];
	char flat[PATH_MAX];
	flat_name(flat, sizeof flat, strncmp(rel, "target/", 7) == 0 ? rel + 7 : rel);
	int rc = pathf(err, u->src, sizeof u->src, "%s", src);
	if (!rc)
		rc = pathf(err, u->rel, sizeof u->rel, "%s", rel);
	if (!rc)
		rc = pathf(err, u->obj, sizeof u->obj, "obj-%s/%s.o", c->b->name, flat);
	if (!rc)
		rc = pathf(err, u->obj_abs, sizeof u->obj_abs, "%s/obj-%s/%s.o", c->b->dir,
			   c->b->name, flat);
	if (!rc)
		rc = pathf(err, u->log, sizeof u->log, "%s/obj-%s/%s.log", c->b->dir, c->b->name,
			   flat);
	if (rc)
		return rc;
	u->model = model;
	u->model_data = model_data;
	u->how = "off";
	return 0;
}

static json_t *strings_json(char *const *v, int n)
{
	json_t *a = json_array();
	for (int i = 0; a && i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

/* The record of the compile: flags, cache, every unit and its object. */
static json_t *compile_json(const struct compile *c, unsigned jobs, const char *toolchain,
			    const char *cache_note)
{
	json_t *units = json_array();
	for (size_t i = 0; units && i < c->n; i++) {
		const struct unit *u = &c->u[i];
		json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "source", u->rel, "object", u->obj,
				      "object_sha256", u->sha, "cache", u->how);
		if (o && u->model && c->b->model_defines) {
			json_t *d = json_array();
			for (size_t k = 0; c->b->model_defines[k]; k++)
				json_array_append_new(d, json_string(c->b->model_defines[k]));
			json_object_set_new(o, "defines", d);
		}
		json_array_append_new(units, o);
	}
	return json_pack("{s:o, s:I, s:s*, s:s*, s:s, s:o}", "command",
			 strings_json(c->argv, c->argc), "jobs", (json_int_t)jobs, "cache",
			 c->cache, "cache_note", cache_note, "toolchain_sha256", toolchain, "units",
			 units);
}

static int link_fw(struct ergon_fw_build *b, const struct compile *c, const char *tdir,
		   struct ergon_err *err)
{
	char *args[MAX_ARGS + UNITS_MAX] = {0};
	int n = 0, rc = 0;
	args[n++] = strdup(ARM_GCC);
	for (int i = 0; i < b->port->n_cpu_flags; i++)
		args[n++] = strdup(b->port->cpu_flags[i]);
	for (size_t i = 0; i < NFLAGS; i++)
		args[n++] = strdup(flags[i]);
	for (size_t i = 0; i < c->n; i++)
		args[n++] = strdup(c->u[i].obj);
	args[n++] = strdup("-nostdlib");
	args[n++] = strdup("-T");
	if (asprintf(&args[n++], "%s/%s", tdir, b->port->linker_script) < 0)
		args[n - 1] = NULL;
	args[n++] = strdup("-Wl,--gc-sections");
	args[n++] = strdup("-lgcc");
	if (asprintf(&args[n++], "-Wl,-Map=ergon_%s_%s.map", b->port->name, b->name) < 0)
		args[n - 1] = NULL;
	args[n++] = strdup("-o");
	if (asprintf(&args[n++], "ergon_%s_%s.elf", b->port->name, b->name) < 0)
		args[n - 1] = NULL;
	for (int i = 0; i < n; i++)
		if (args[i] == NULL)
			rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	if (!rc) {
		remove(b->log);
		rc = ergon_lifecycle_run_tool_in((const char *const *)args, b->dir, b->log,
						 BUILD_TIMEOUT_S, err);
	}
	if (!rc) {
		b->command = strings_json(args, n);
		if (b->command == NULL)
			rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	}
	for (int i = 0; i < n; i++)
		free(args[i]);
	return rc;
}

int ergon_fw_compile(struct ergon_fw_build *b, struct ergon_err *err)
{
	char *srcs[48] = {0};
	int n_src = 0;
	char inc[PATH_MAX], path[PATH_MAX], tdir[PATH_MAX], toolchain[65], tree[65];
	char cache_dir[PATH_MAX], objdir[PATH_MAX];
	const char *cache_note = NULL;
	char note[ERGON_ERR_MSG_MAX + 160];
	struct compile *c = calloc(1, sizeof *c);
	struct unit *units = calloc(UNITS_MAX, sizeof *units);
	b->command = NULL;
	b->compile = NULL;
	if (!c || !units) {
		free(c);
		free(units);
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	}
	c->b = b;
	c->u = units;
	int rc = 0;
	if (realpath(ergon_fw_target_dir(), tdir) == NULL)
		rc = ergon_err_errno(err, errno,
				     "%s: cannot open ergon-target's sources; set ERGON_TARGET_DIR "
				     "to the target/ folder of the ergon source tree",
				     ergon_fw_target_dir());
	if (!rc)
		rc = ergon_fw_toolchain(b->dir, inc, sizeof inc, b->compiler, sizeof b->compiler,
					toolchain, err);
	if (!rc)
		rc = pathf(err, path, sizeof path, "%s/src", tdir);
	if (!rc)
		rc = ergon_fw_list_sources(path, b->power, srcs, &n_src, 48, err);
	if (!rc)
		rc = pathf(err, objdir, sizeof objdir, "%s/obj-%s", b->dir, b->name);
	if (!rc)
		rc = ergon_mkdir_p(objdir, err);
	if (rc)
		goto out;
	snprintf(b->elf, sizeof b->elf, "%s/ergon_%s_%s.elf", b->dir, b->port->name, b->name);
	snprintf(b->map, sizeof b->map, "%s/ergon_%s_%s.map", b->dir, b->port->name, b->name);
	snprintf(b->log, sizeof b->log, "%s/build-%s.log", b->dir, b->name);

	/* The flags of every unit, as target/CMakeLists.txt: the port's
	 * machine flags first, then ergon's; the tree and this folder mapped
	 * away (the longer path last: GCC tries the maps from the last, and
	 * one folder may be inside the other). */
	int k = 0;
	c->argv[k++] = strdup(ARM_GCC);
	for (int i = 0; i < b->port->n_cpu_flags; i++)
		c->argv[k++] = strdup(b->port->cpu_flags[i]);
	for (size_t i = 0; i < NFLAGS; i++)
		c->argv[k++] = strdup(flags[i]);
	c->argv[k++] = strdup("-isystem");
	c->argv[k++] = strdup(inc);
	if (asprintf(&c->argv[k++], "-I%s/include", tdir) < 0)
		c->argv[k - 1] = NULL;
	for (int i = 0; i < b->port->n_include_dirs; i++)
		if (asprintf(&c->argv[k++], "-I%s/%s", tdir, b->port->include_dirs[i]) < 0)
			c->argv[k - 1] = NULL;
	/* -ffile-prefix-map for the compiler proper, -fdebug-prefix-map also
	 * for the assembler (GCC hands it to `as` for a .S file, whose line
	 * table would name this folder otherwise). */
	int tlong = strlen(tdir) > strlen(b->dir);
	static const char *const maps[] = {"-ffile-prefix-map", "-fdebug-prefix-map"};
	for (int m = 0; m < 2; m++)
		if (asprintf(&c->argv[k++], "%s=%s=%s", maps[m], tlong ? b->dir : tdir,
			     tlong ? "." : "target") < 0 ||
		    asprintf(&c->argv[k++], "%s=%s=%s", maps[m], tlong ? tdir : b->dir,
			     tlong ? "target" : ".") < 0)
			c->argv[k - 1] = NULL;
	for (size_t i = 0; b->defines != NULL && b->defines[i] != NULL && k < MAX_ARGS - 40; i++)
		c->argv[k++] = strdup(b->defines[i]);
	for (int i = 0; i < b->port->n_defines; i++)
		c->argv[k++] = strdup(b->port->defines[i]);
	c->argc = k;
	for (int i = 0; i < k; i++)
		if (c->argv[i] == NULL) {
			rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
			goto out;
		}

	/* The units, in the order of the link line: the sorted target
	 * sources, the port's sources as its descriptor lists them, the
	 * program's main, the model's data. */
	for (int i = 0; i < n_src && !rc; i++) {
		char rel[PATH_MAX];
		rc = pathf(err, rel, sizeof rel, "target/src/%s", strrchr(srcs[i], '/') + 1);
		if (!rc)
			rc = add_unit(c, srcs[i], rel, 0, 0, err);
	}
	for (int i = 0; i <= b->port->n_sources && !rc; i++) {
		const char *f = i < b->port->n_sources ? b->port->sources[i] : b->main_src;
		char src[PATH_MAX], rel[PATH_MAX];
		rc = pathf(err, src, sizeof src, "%s/%s", tdir, f);
		if (!rc)
			rc = pathf(err, rel, sizeof rel, "target/%s", f);
		if (!rc)
			rc = add_unit(c, src, rel, i == b->port->n_sources, 0, err);
	}
	if (b->model_data && !rc) {
		char src[PATH_MAX];
		rc = pathf(err, src, sizeof src, "%s/%s", b->dir, b->model_data);
		if (!rc)
			rc = add_unit(c, src, b->model_data, 0, 1, err);
	}
	if (rc)
		goto out;

	/* The cache (docs/internals/fw_cache.md): keys from the toolchain,
	 * the flags and the sources; without a usable folder the build goes
	 * on uncached and says why. */
	struct ergon_err ce = {0};
	if (b->no_cache) {
	} else if (strchr(b->dir, '=') || strchr(tdir, '=')) {
		/* -ffile-prefix-map=OLD=NEW splits at the first '=': such a path
		 * would stay in the objects, which then depend on the folder. */
		cache_note = "not used: the build folder's or the target tree's path holds "
			     "an '=' (-ffile-prefix-map cannot map it)";
	} else if (ergon_fw_cache_dir(cache_dir, sizeof cache_dir, &ce) == 0 &&
		   ergon_mkdir_p(cache_dir, &ce) == 0) {
		c->cache = cache_dir;
	} else {
		snprintf(note, sizeof note,
			 "not used: %s (set XDG_CACHE_HOME to a folder this user can write, "
			 "or pass --no-cache)",
			 ce.msg);
		cache_note = note;
	}
	if (c->cache) {
		crypto_hash_sha256_state h;
		crypto_hash_sha256_init(&h);
		size_t total = 0;
		/* The runtime, and every folder of target/port/ the port draws
		 * on (its own and any it shares sources with). */
		char parts[2 + 2 * ERGON_FW_PORT_LIST_MAX + 3][ERGON_FW_PORT_PATH_MAX];
		size_t np = tree_parts(b, parts, sizeof parts / sizeof parts[0]);
		for (size_t i = 0; i < np && !rc; i++)
			rc = hash_tree(&h, tdir, parts[i], 0, &total, err);
		unsigned char d[crypto_hash_sha256_BYTES];
		crypto_hash_sha256_final(&h, d);
		hex_of(d, tree);
		for (size_t i = 0; i < c->n && !rc; i++)
			rc = unit_key(c, i, toolchain, tree, tdir, err);
		if (rc)
			goto out;
	}

	unsigned jobs = fw_jobs();
	run_parallel(c->n, jobs, unit_job, c);
	for (size_t i = 0; i < c->n; i++)
		if (c->u[i].rc) {
			rc = c->u[i].rc;
			*err = c->u[i].err;
			snprintf(b->log, sizeof b->log, "%s", c->u[i].log);
			goto out;
		}
	rc = link_fw(b, c, tdir, err);
	if (!rc)
		rc = ergon_fw_sha256_file(b->elf, b->elf_sha256, err);
	if (!rc)
		rc = ergon_fw_sha256_file(b->map, b->map_sha256, err);
	if (!rc) {
		b->compile = compile_json(c, jobs, toolchain, cache_note);
		if (b->compile == NULL)
			rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	}
out:
	if (rc) {
		json_decref(b->command);
		b->command = NULL;
	}
	for (int i = 0; i < c->argc; i++)
		free(c->argv[i]);
	for (int i = 0; i < n_src; i++)
		free(srcs[i]);
	free(units);
	free(c);
	return rc;
}
