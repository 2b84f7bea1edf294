/* Private header of the replay instrument: the parsed recording. */
#ifndef ERGON_REPLAY_H
#define ERGON_REPLAY_H

#include "ergon/error.h"
#include "ergon/stream.h"

#include <stddef.h>

#define REPLAY_MAX_SAMPLES 50000000

struct replay_data {
	struct ergon_sample *s;
	size_t n;
	int has_power, has_temp;
	int header_provenance; /* enum ergon_provenance, 0 none, -1 unknown word */
};

/* Parse a replay CSV held in memory. Errors name path:line:column. The
 * caller frees d with ergon_replay_data_free, also on failure. */
int ergon_replay_parse(const char *path, const char *text, size_t len, struct replay_data *d,
		       struct ergon_err *err);
void ergon_replay_data_free(struct replay_data *d);

#endif
