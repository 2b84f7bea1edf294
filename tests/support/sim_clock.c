#include "sim_clock.h"

#include "test_support.h"

static double sim_now(void *ctx)
{
	return ((const struct ts_sim_clock *)ctx)->t_s;
}

static void sim_sleep_until(void *ctx, double t_s)
{
	struct ts_sim_clock *s = ctx;
	double before = s->t_s;
	if (t_s > s->t_s)
		s->t_s = t_s;
	if (s->on_advance)
		s->on_advance(s->ctx, before);
}

void ts_sim_clock_install(struct ts_sim_clock *s)
{
	s->clock = (struct ergon_clock){.now_s = sim_now, .sleep_until = sim_sleep_until, .ctx = s};
	ergon_clock_set(&s->clock);
}

void ts_sim_clock_remove(void)
{
	ergon_clock_set(NULL);
}

static int wl_invoke(struct ergon_workload *wl, struct ergon_err *err)
{
	(void)err;
	const double *lat = wl->priv;
	ergon_clock_sleep_until(ergon_clock_now_s() + *lat);
	return 0;
}

const struct ergon_workload_driver ts_sim_workload = {
    .name = "sim", .longname = "fixed simulated latency", .invoke = wl_invoke};

double ts_json_num(const json_t *o, const char *a, const char *b)
{
	const json_t *x = json_object_get(o, a);
	if (b)
		x = json_object_get(x, b);
	if (!json_is_number(x))
		fail_msg("missing number %s.%s", a, b ? b : "");
	return json_number_value(x);
}
