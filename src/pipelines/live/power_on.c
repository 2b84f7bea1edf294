/* `ergon power-on` (include/ergon/power_on.h): the instrument opened with the
 * target's supply on, held, released. A PPK2 is opened as a source meter
 * with DUT power on; a Joulescope (or any bridge whose hello says it can
 * switch the supply) is opened and its passthrough switched on through the
 * bridge, which is then kept answering while it is held. */
#include "ergon/power_on.h"

#include "ergon/bridge.h"

#include <stddef.h>
#include <string.h>
#include <time.h>

/* 1 when spec names driver `name` ("name" or "name:..."). */
static int spec_is(const char *spec, const char *name)
{
	size_t n = strlen(name);
	return strncmp(spec, name, n) == 0 && (spec[n] == '\0' || spec[n] == ':');
}

static int stopped(const struct ergon_power_on_opts *o, double held_s)
{
	return (o->stop != NULL && *o->stop) || (o->hold_s > 0 && held_s >= o->hold_s);
}

/* A Joulescope: passthrough on, held while the bridge keeps answering. */
static int hold_bridge(const struct ergon_power_on_opts *o, struct ergon_err *err)
{
	if (o->vdd_kv != NULL && o->vdd_kv[0] != '\0')
		return ergon_err_set(err, ERGON_EUSAGE,
				     "--instrument %s: a Joulescope passes through the supply you "
				     "connect to its input and sets no voltage; drop --vdd-mv",
				     o->spec);
	struct ergon_instrument_options opts = {0};
	struct ergon_instrument *inst = NULL;
	int rc = ergon_instrument_open(o->spec, &opts, &inst, err);
	if (rc != 0)
		return rc;
	rc = ergon_bridge_passthrough(inst, 1, err);
	if (rc == 0 && o->on_powered != NULL)
		o->on_powered(o->ctx, &inst->identity);
	double held = 0;
	while (rc == 0 && !stopped(o, held)) {
		/* 50 ms at a time: Ctrl-C is seen at once, and a bridge whose
		 * Joulescope was unplugged fails here with its message. */
		rc = ergon_bridge_idle(inst, 0.05, err);
		held += 0.05;
	}
	if (rc == 0 && o->off_on_exit)
		rc = ergon_bridge_passthrough(inst, 0, err);
	ergon_instrument_close(inst);
	return rc;
}

int ergon_power_on_run(const struct ergon_power_on_opts *o, struct ergon_err *err)
{
	if (spec_is(o->spec, "joulescope") || spec_is(o->spec, "bridge"))
		return hold_bridge(o, err);
	const char *kv[5] = {"mode=source", "dut_power=on",
			     o->off_on_exit ? "off_on_exit=1" : "off_on_exit=0", NULL, NULL};
	if (o->vdd_kv != NULL && o->vdd_kv[0] != '\0')
		kv[3] = o->vdd_kv;
	struct ergon_instrument_options opts = {.kv = kv};
	struct ergon_instrument *inst = NULL;
	int rc = ergon_instrument_open(o->spec, &opts, &inst, err);
	if (rc != 0)
		return rc;
	if (o->on_powered != NULL)
		o->on_powered(o->ctx, &inst->identity);
	struct timespec nap = {0, 50 * 1000 * 1000};
	double held = 0;
	while (!stopped(o, held)) {
		nanosleep(&nap, NULL);
		held += 0.05;
	}
	ergon_instrument_close(inst);
	return 0;
}
