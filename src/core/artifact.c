/* The artifact envelope: creation, sealing (report_id), writing, loading. */
#include "ergon/artifact.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "ergon/fileio.h"
#include "ergon/jcs.h"

const char *ergon_provenance_name(int kind)
{
	switch (kind) {
	case ERGON_PROV_MEASURED:
		return "measured";
	case ERGON_PROV_SYNTHETIC:
		return "synthetic";
	case ERGON_PROV_REPLAYED:
		return "replayed";
	default:
		return "unknown";
	}
}

int ergon_provenance_parse(const char *s)
{
	if (s == NULL)
		return 0;
	if (strcmp(s, "measured") == 0)
		return ERGON_PROV_MEASURED;
	if (strcmp(s, "synthetic") == 0)
		return ERGON_PROV_SYNTHETIC;
	if (strcmp(s, "replayed") == 0)
		return ERGON_PROV_REPLAYED;
	return 0;
}

/* First line of a small file with the trailing newline removed. */
static int read_line(const char *path, char *out, size_t cap)
{
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return -1;
	char *r = fgets(out, (int)cap, f);
	fclose(f);
	if (r == NULL)
		return -1;
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

static void cpu_model(char *out, size_t cap)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	out[0] = '\0';
	if (f == NULL)
		return;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "model name", 10) == 0 || strncmp(line, "Model", 5) == 0) {
			char *c = strchr(line, ':');
			if (c) {
				c++;
				while (*c == ' ' || *c == '\t')
					c++;
				c[strcspn(c, "\n")] = '\0';
				snprintf(out, cap, "%s", c);
				break;
			}
		}
	}
	fclose(f);
}

json_t *ergon_conditions_collect(void)
{
	struct utsname u;
	char host[256] = "", cpu[256], gov[64];
	json_t *c = json_object();
	if (c == NULL)
		return NULL;
	if (gethostname(host, sizeof(host) - 1) == 0)
		json_object_set_new(c, "host", json_string(host));
	if (uname(&u) == 0) {
		char k[600];
		snprintf(k, sizeof(k), "%s %s %s", u.sysname, u.release, u.machine);
		json_object_set_new(c, "kernel", json_string(k));
	}
	cpu_model(cpu, sizeof(cpu));
	json_object_set_new(c, "cpu_model", cpu[0] ? json_string(cpu) : json_null());
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	json_object_set_new(c, "cpu_count", json_integer(ncpu > 0 ? ncpu : 0));
	if (read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", gov,
		      sizeof(gov)) == 0)
		json_object_set_new(c, "governor", json_string(gov));
	else
		json_object_set_new(c, "governor", json_null());
	return c;
}

json_t *ergon_artifact_new(const char *schema, int schema_version, int provenance_kind)
{
	json_t *a = json_pack("{s:s, s:i, s:{s:s, s:s}, s:{s:s}, s:[]}", "schema", schema,
			      "schema_version", schema_version, "tool", "name", "ergon", "version",
			      ERGON_VERSION, "provenance", "kind",
			      ergon_provenance_name(provenance_kind), "issues");
	if (a == NULL)
		return NULL;
	json_t *cond = ergon_conditions_collect();
	if (cond)
		json_object_set_new(a, "conditions", cond);
	return a;
}

int ergon_artifact_digest(const json_t *artifact, char id[72], struct ergon_err *err)
{
	if (json_object_get(artifact, "signature") == NULL)
		return ergon_report_digest(artifact, id, err);
	/* The signature signs report_id, so report_id cannot cover it: a
	 * shallow copy without it (members shared, the artifact untouched). */
	json_t *copy = json_copy((json_t *)artifact);
	if (copy == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	json_object_del(copy, "signature");
	int rc = ergon_report_digest(copy, id, err);
	json_decref(copy);
	return rc;
}

int ergon_artifact_seal(json_t *artifact, struct ergon_err *err)
{
	char id[72];
	int rc = ergon_artifact_digest(artifact, id, err);
	if (rc)
		return rc;
	json_object_set_new(artifact, "report_id", json_string(id));
	return 0;
}

int ergon_artifact_serialize(json_t *artifact, const char *path, char **text, size_t *len,
			     struct ergon_err *err)
{
	*text = NULL;
	*len = 0;
	int rc = ergon_artifact_seal(artifact, err);
	if (rc)
		return rc;
	/* 17 significant digits: every double survives the round trip, so the
	 * digest recomputed from the file equals the one computed here. The
	 * text is jansson's (ergon_json_text writes the same bytes, faster);
	 * what ergon_json_text leaves (a string that is not UTF-8, a deeper
	 * value) goes to jansson itself, which decides. */
	char *t = NULL;
	size_t n = 0;
	if (ergon_json_text(artifact, &t, &n, NULL) != 0) {
		t = json_dumps(artifact, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
		if (t == NULL)
			return ergon_err_set(err, ERGON_ENOMEM, "%s: cannot serialise the artifact",
					     path);
		n = strlen(t);
	}
	char *withnl = realloc(t, n + 2);
	if (withnl == NULL) {
		free(t);
		return ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", path);
	}
	withnl[n] = '\n';
	withnl[n + 1] = '\0';
	*text = withnl;
	*len = n + 1;
	return 0;
}

int ergon_artifact_write(json_t *artifact, const char *path, unsigned flags, struct ergon_err *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc = ergon_artifact_serialize(artifact, path, &text, &len, err);
	if (rc)
		return rc;
	rc = ergon_file_write_atomic(path, text, len, flags, err);
	free(text);
	return rc;
}

int ergon_artifact_parse(const char *name, const char *data, size_t len, json_t **out,
			 struct ergon_err *err)
{
	*out = NULL;
	json_error_t je;
	json_t *j = json_loadb(data, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	if (j == NULL)
		return ergon_err_set(err, ERGON_EPARSE,
				     "%s:%d:%d (byte %d): %s; the file is not a valid ergon artifact "
				     "(was it truncated or edited?)",
				     name, je.line, je.column, je.position, je.text);
	if (!json_is_object(j)) {
		json_decref(j);
		return ergon_err_set(err, ERGON_EPARSE, "%s: top level is not a JSON object", name);
	}
	*out = j;
	return 0;
}

int ergon_artifact_load(const char *path, size_t max_len, json_t **out, struct ergon_err *err)
{
	char *data = NULL;
	size_t len = 0;
	*out = NULL;
	int rc = ergon_file_read_all(path, max_len, &data, &len, err);
	if (rc)
		return rc;
	rc = ergon_artifact_parse(path, data, len, out, err);
	free(data);
	return rc;
}

int ergon_artifact_check_digest(const json_t *artifact, struct ergon_err *err)
{
	const char *claimed = json_string_value(json_object_get(artifact, "report_id"));
	if (claimed == NULL)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field report_id: missing or not a string; the artifact was "
				     "never sealed");
	char id[72];
	int rc = ergon_artifact_digest(artifact, id, err);
	if (rc)
		return rc;
	if (strcmp(id, claimed) != 0)
		return ergon_err_set(err, ERGON_EVERIFY,
				     "field report_id: digest mismatch (file says %s, content hashes "
				     "to %s): the report was changed after it was written",
				     claimed, id);
	return 0;
}
