/* `ergon kernels report`: samples measured elsewhere -> the ergon.kernels
 * artifact, kernels.csv and the terminal table. */
#include "ergon/artifact.h"
#include "ergon/fileio.h"
#include "ergon/jcs.h"
#include "ergon/kernels_run.h"
#include "ergon/mtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ergon_kernels_report(const char *path, const char *baseline, const char *unit,
			 json_t **artifact, struct ergon_err *err)
{
	char *text = NULL;
	size_t len = 0, ov_rows = 0;
	struct ergon_kernels_data *d = NULL;
	json_t *sec = NULL, *art = NULL;
	*artifact = NULL;
	int rc = ergon_file_read_all(path, ERGON_KERNELS_CSV_MAX, &text, &len, err);
	if (rc != 0)
		goto cleanup;
	rc = ergon_kernels_csv_parse(text, len, path, &d, &ov_rows, err);
	if (rc != 0)
		goto cleanup;
	rc = ergon_kernels_summarize(d, baseline, unit, &sec, err);
	if (rc != 0)
		goto cleanup;
	char note[160];
	if (ov_rows > 0)
		snprintf(note, sizeof note,
			 "measured by the harness and subtracted on %zu rows (column overhead)",
			 ov_rows);
	else
		snprintf(note, sizeof note,
			 "not stated in the samples: the counts include the timing read");
	json_object_set_new(sec, "overhead_note", json_string(note));
	json_object_set_new(sec, "overhead_subtracted_rows", json_integer((json_int_t)ov_rows));
	art = ergon_artifact_new(ERGON_KERNELS_SCHEMA, ERGON_KERNELS_VERSION, ERGON_PROV_REPLAYED);
	if (art == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "kernels: out of memory");
		goto cleanup;
	}
	json_t *mt = ergon_mtime_unknown_json(
	    "the samples were measured elsewhere and the samples CSV states no time: when is "
	    "not known",
	    NULL, NULL);
	json_object_set_new(art, "measurement_time", mt ? mt : json_null());
	char hex[65];
	ergon_sha256_hex(text, len, hex);
	json_t *prov = json_object_get(art, "provenance");
	json_object_set_new(prov, "source",
			    json_pack("{s:s, s:s, s:I, s:s}", "form", "samples_csv", "path", path,
				      "bytes", (json_int_t)len, "sha256", hex));
	json_object_set_new(prov, "samples_provenance", json_string("unknown"));
	json_object_set_new(prov, "note",
			    json_string("samples measured elsewhere; ergon computed the "
					"statistics and cannot vouch for the measurement"));
	json_object_set_new(art, "kernels", sec);
	sec = NULL;
	*artifact = art;
	art = NULL;
cleanup:
	json_decref(sec);
	json_decref(art);
	ergon_kernels_data_free(d);
	free(text);
	return rc;
}

int ergon_kernels_write(json_t *artifact, const char *dir, unsigned flags, const char *samples,
			size_t samples_len, char **table, struct ergon_err *err)
{
	char path[4096], samples_path[4096];
	char *csv = NULL;
	size_t len = 0;
	int rc;
	const json_t *sec = json_object_get(artifact, "kernels");
	if (table != NULL)
		*table = NULL;
	if (snprintf(path, sizeof path, "%s/kernels.json", dir) >= (int)sizeof path)
		return ergon_err_set(err, ERGON_ETOOBIG, "--out %s: the path is too long", dir);
	char csv_path[4096], sum_path[4096];
	char *sum = NULL;
	size_t sum_len = 0;
	snprintf(csv_path, sizeof csv_path, "%s/kernels.csv", dir);
	snprintf(sum_path, sizeof sum_path, "%s/case_summary.csv", dir);
	rc = ergon_mkdir_p(dir, err);
	/* Every file or none: check them all before writing the first. */
	if (rc == 0)
		rc = ergon_file_check_writable(path, flags, err);
	if (rc == 0)
		rc = ergon_file_check_writable(csv_path, flags, err);
	if (rc == 0)
		rc = ergon_file_check_writable(sum_path, flags, err);
	snprintf(samples_path, sizeof samples_path, "%s/samples.csv", dir);
	if (rc == 0 && samples != NULL)
		rc = ergon_file_check_writable(samples_path, flags, err);
	/* The samples first: nothing measured is lost if a later write fails. */
	if (rc == 0 && samples != NULL)
		rc = ergon_file_write_atomic(samples_path, samples, samples_len, flags, err);
	if (rc == 0)
		rc = ergon_kernels_csv_render(sec, &csv, &len, err);
	if (rc == 0)
		rc = ergon_kernels_case_summary_render(sec, &sum, &sum_len, err);
	if (rc == 0)
		rc = ergon_artifact_write(artifact, path, flags, err);
	if (rc == 0)
		rc = ergon_file_write_atomic(csv_path, csv, len, flags, err);
	if (rc == 0)
		rc = ergon_file_write_atomic(sum_path, sum, sum_len, flags, err);
	if (rc == 0 && table != NULL)
		rc = ergon_kernels_table_render(sec, table, err);
	free(csv);
	free(sum);
	return rc;
}
