/* `ergon power-on` (include/ergon/power_on.h): the instrument opened as a
 * source meter with the target's power on, held, released. */
#include "ergon/power_on.h"

#include <stddef.h>
#include <time.h>

int ergon_power_on_run(const struct ergon_power_on_opts *o, struct ergon_err *err)
{
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
	while (!(o->stop != NULL && *o->stop) && (o->hold_s <= 0 || held < o->hold_s)) {
		nanosleep(&nap, NULL);
		held += 0.05;
	}
	ergon_instrument_close(inst);
	return 0;
}
