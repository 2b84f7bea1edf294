/* Which lifecycle driver a configuration runs: target.probe pyocd[:UID]
 * or bmp:DEVICE picks the probe's own lifecycle, else target.lifecycle's
 * (a file of its own, so that the plan, the acceptance checks and the run
 * all ask it without depending on each other). */
#include "profile_internal.h"

#include <string.h>

const char *prof_lifecycle_name(const struct ergon_config *cfg)
{
	const char *p = cfg->target.probe;
	if (strncmp(p, "pyocd", 5) == 0 && (p[5] == '\0' || p[5] == ':'))
		return "pyocd";
	if (strncmp(p, "bmp:", 4) == 0)
		return "bmp";
	return cfg->target.lifecycle == ERGON_LIFECYCLE_QEMU	  ? "qemu"
	       : cfg->target.lifecycle == ERGON_LIFECYCLE_JLINK	  ? "jlink"
	       : cfg->target.lifecycle == ERGON_LIFECYCLE_OPENOCD ? "openocd"
								  : "sim";
}
