/* ergon doctor: what this machine can do, and for each thing it cannot,
 * why and the fix (docs/internals/doctor.md).
 *
 * The checks only look: PATH lookups, sysfs reads, `qemu-system-arm -M help`
 * and `python3 -c 'import pyjoulescope_driver'`; nothing is opened for
 * writing and no device is configured. */
#ifndef ERGON_DOCTOR_H
#define ERGON_DOCTOR_H

#include "ergon/error.h"

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ergon_doctor_options {
	/* Read sysfs (tty, hwmon, powercap) and /dev under this folder
	 * instead of / (tests; also ERGON_SYSFS_ROOT). NULL: /. */
	const char *sysfs_root;
	/* The Python used for bridges; NULL: $ERGON_PYTHON, else python3 on
	 * PATH. */
	const char *python;
};

/* The flows `--for` can ask about. */
#define ERGON_DOCTOR_FLOWS "run", "profile-power", "profile-qemu"

/* Collect every capability. *out (caller frees with json_decref) is
 *   {"schema":"ergon.doctor","schema_version":1,
 *    "capabilities":[{"id","ok","reason","fix"(null when ok), ...}],
 *    "flows":{"<flow>":{"ok","reason","needs":[ids]}}}
 * Returns 0, or ERGON_ENOMEM. */
ERGON_API int ergon_doctor_collect(const struct ergon_doctor_options *o, json_t **out,
				   struct ergon_err *err);

#ifdef __cplusplus
}
#endif

#endif
