/* Choosing the database backend from the --db target. */
#include "db_backend.h"

#include <string.h>

const struct ergon_db_backend *ergon_db_backend_for(const char *target)
{
	if (strncmp(target, "postgresql://", 13) == 0 || strncmp(target, "postgres://", 11) == 0)
		return &ergon_db_backend_postgresql;
	return &ergon_db_backend_sqlite;
}
