/* The measurement time of an artifact: include/ergon/mtime.h. */
#include "ergon/mtime.h"

#include "ergon/clock.h"

#include <math.h>
#include <stdio.h>
#include <sys/timex.h>
#include <time.h>

int64_t ergon_utc_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void ergon_utc_format(int64_t ns, char out[32])
{
	int64_t sec = ns / 1000000000, rem = ns % 1000000000;
	if (rem < 0) {
		rem += 1000000000;
		sec--;
	}
	time_t t = (time_t)sec;
	struct tm tm;
	if (gmtime_r(&t, &tm) == NULL) {
		snprintf(out, 32, "1970-01-01T00:00:00.000000Z");
		return;
	}
	char base[24];
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, 32, "%.19s.%06ldZ", base, (long)(rem / 1000));
}

/* adjtimex(2) with modes 0 changes nothing and needs no privilege: the
 * status word says whether the kernel considers the clock synchronised
 * (an NTP daemon clears STA_UNSYNC once it disciplines the clock), and
 * maxerror bounds its error in microseconds. */
static void read_sync(struct ergon_mtime *m)
{
	struct timex tx = {0};
	int st = adjtimex(&tx);
	if (st < 0) {
		m->sync = -1;
		m->maxerror_s = NAN;
		return;
	}
	m->sync = (tx.status & STA_UNSYNC) || st == TIME_ERROR ? 0 : 1;
	m->maxerror_s = (double)tx.maxerror * 1e-6;
}

void ergon_mtime_start(struct ergon_mtime *m)
{
	*m = (struct ergon_mtime){.started = 1, .maxerror_s = NAN};
	m->simulated = ergon_clock_simulated();
	m->mono_start_s = ergon_clock_now_s();
	m->utc_start_ns = ergon_utc_now_ns();
	read_sync(m);
}

void ergon_mtime_end(struct ergon_mtime *m)
{
	m->ended = 1;
	m->mono_end_s = ergon_clock_now_s();
	m->utc_end_ns = ergon_utc_now_ns();
}

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *ergon_mtime_json(const struct ergon_mtime *m)
{
	char a[32], b[32];
	ergon_utc_format(m->utc_start_ns, a);
	ergon_utc_format(m->utc_end_ns, b);
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	json_object_set_new(o, "start_utc", m->started ? json_string(a) : json_null());
	json_object_set_new(o, "end_utc", m->ended ? json_string(b) : json_null());
	json_object_set_new(o, "start_monotonic_s",
			    m->started ? json_real(m->mono_start_s) : json_null());
	json_object_set_new(o, "end_monotonic_s",
			    m->ended ? json_real(m->mono_end_s) : json_null());
	json_object_set_new(o, "utc_source", json_string("CLOCK_REALTIME"));
	json_object_set_new(o, "monotonic_source",
			    json_string(m->simulated ? "simulated (a test's clock, ergon/clock.h)"
						     : "CLOCK_MONOTONIC"));
	json_object_set_new(o, "utc_synchronized",
			    m->sync < 0 ? json_null() : json_boolean(m->sync == 1));
	json_object_set_new(o, "utc_maxerror_s", num_or_null(m->maxerror_s));
	if (m->sync == 0)
		json_object_set_new(o, "note",
				    json_string("the kernel reports the system clock as not "
						"synchronised (adjtimex: STA_UNSYNC): the UTC "
						"times are the host's own and may be off"));
	else if (m->sync < 0)
		json_object_set_new(o, "note",
				    json_string("the clock's synchronisation could not be read "
						"(adjtimex failed): the UTC times are the host's "
						"own"));
	return o;
}

json_t *ergon_mtime_unknown_json(const char *why, const char *start_utc, const char *start_source)
{
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	json_object_set_new(o, "start_utc", start_utc ? json_string(start_utc) : json_null());
	json_object_set_new(o, "end_utc", json_null());
	json_object_set_new(o, "start_monotonic_s", json_null());
	json_object_set_new(o, "end_monotonic_s", json_null());
	json_object_set_new(o, "utc_source",
			    start_utc && start_source ? json_string(start_source) : json_null());
	json_object_set_new(o, "monotonic_source", json_null());
	json_object_set_new(o, "utc_synchronized", json_null());
	json_object_set_new(o, "utc_maxerror_s", json_null());
	json_object_set_new(o, "note", json_string(why));
	return o;
}
