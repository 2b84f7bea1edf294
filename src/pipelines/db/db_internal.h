/* Private header of the `ergon db` pipeline: the open database handle. */
#ifndef ERGON_DB_INTERNAL_H
#define ERGON_DB_INTERNAL_H

#include "drivers/db/db_backend.h"
#include "ergon/db.h"

struct ergon_db {
	const struct ergon_db_backend *be;
	void *h;
	int version; /* schema version of the open database */
	char target[ERGON_DB_TARGET_MAX];
	/* Trusted signers (ergon_db_trust_key): with any, ingest requires a
	 * signature by one of them. */
	struct ergon_public_key keys[ERGON_DB_KEYS_MAX];
	int nkeys;
};

/* Schema 4's trend_points: one row per figure of a run that has a device,
 * keyed (name, device, time, report_id) so that `ergon db trend` is one
 * range scan in the order it prints (no join, no sort). The rows copy
 * what runs and figures hold; both are written once per report_id and
 * never updated, except an energy model's device (set once, when its
 * source report arrives: ingest adds its rows then). Filled by the
 * migration from the existing rows and by every ingest, with this SELECT. */
#define ERGON_DB_TREND_COLS_V4 \
	"name, device, time, report_id, board, provenance, integrity, value, u, unit"
#define ERGON_DB_TREND_FILL_V4                                                                  \
	"INSERT INTO trend_points (" ERGON_DB_TREND_COLS_V4 ") SELECT f.name, r.device, r.time,"\
	" r.report_id, r.board, r.provenance, r.integrity, f.value, f.u, f.unit FROM figures f" \
	" JOIN runs r ON r.report_id = f.report_id WHERE r.device IS NOT NULL"
/* Schema 6 adds to each point where its time came from (runs.time_source)
 * and, for a repeated run's mean, the standard error of the mean over its
 * repetitions and their number (figures.sem, figures.repetitions). */
#define ERGON_DB_TREND_COLS ERGON_DB_TREND_COLS_V4 ", time_source, sem, repetitions"
#define ERGON_DB_TREND_FILL                                                                     \
	"INSERT INTO trend_points (" ERGON_DB_TREND_COLS ")"                                    \
	" SELECT f.name, r.device, r.time, r.report_id, r.board, r.provenance, r.integrity,"    \
	" f.value, f.u, f.unit, r.time_source, f.sem, f.repetitions FROM figures f"             \
	" JOIN runs r ON r.report_id = f.report_id WHERE r.device IS NOT NULL"

/* "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" of now (UTC), with NUL. */
void ergon_db_now_utc(char out[32]);

#endif
