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

/* "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" of now (UTC), with NUL. */
void ergon_db_now_utc(char out[32]);

#endif
