/* Transport table and dispatch: a new transport is a folder plus one line
 * here. */
#include "ergon/transport.h"

#include <string.h>

extern const struct ergon_transport_driver ergon_transport_file;
extern const struct ergon_transport_driver ergon_transport_serial;
extern const struct ergon_transport_driver ergon_transport_tcp;
extern const struct ergon_transport_driver ergon_transport_unix;
extern const struct ergon_transport_driver ergon_transport_swo;
extern const struct ergon_transport_driver ergon_transport_rtt;

static const struct ergon_transport_driver *const drivers[] = {
    &ergon_transport_file, &ergon_transport_serial, &ergon_transport_tcp,
    &ergon_transport_unix, &ergon_transport_swo,    &ergon_transport_rtt,
};

int ergon_transport_open(const char *spec, struct ergon_transport **out, struct ergon_err *err)
{
	*out = NULL;
	if (strcmp(spec, "-") == 0) {
		int rc = ergon_transport_file.open("-", out, err);
		if (!rc)
			(*out)->drv = &ergon_transport_file;
		return rc;
	}
	const char *colon = strchr(spec, ':');
	size_t n = colon ? (size_t)(colon - spec) : 0;
	for (size_t i = 0; colon && i < sizeof(drivers) / sizeof(drivers[0]); i++) {
		if (strlen(drivers[i]->name) == n && memcmp(drivers[i]->name, spec, n) == 0) {
			int rc = drivers[i]->open(colon + 1, out, err);
			if (!rc)
				(*out)->drv = drivers[i];
			return rc;
		}
	}
	return ergon_err_set(err, ERGON_EUSAGE,
			     "transport '%s': unknown; use file:PATH, -, serial:DEV[,BAUD], "
			     "tcp:HOST:PORT, unix:PATH, swo:SOURCE or rtt:gdb=HOST:PORT",
			     spec);
}

int ergon_transport_read(struct ergon_transport *t, void *buf, size_t cap, int timeout_ms,
			 size_t *got, struct ergon_err *err)
{
	*got = 0;
	return t->drv->read(t, buf, cap, timeout_ms, got, err);
}

json_t *ergon_transport_stats(const struct ergon_transport *t)
{
	return t->drv->stats ? t->drv->stats(t) : NULL;
}

bool ergon_transport_lossy(const struct ergon_transport *t)
{
	return t->drv->lossy ? t->drv->lossy(t) : false;
}

void ergon_transport_close(struct ergon_transport *t)
{
	if (t)
		t->drv->close(t);
}

bool ergon_transport_has_raw(const struct ergon_transport *t)
{
	return t->drv->set_raw_sink != NULL;
}

int ergon_transport_set_raw_sink(struct ergon_transport *t, int fd)
{
	return t->drv->set_raw_sink ? t->drv->set_raw_sink(t, fd) : ERGON_ENOTSUP;
}
