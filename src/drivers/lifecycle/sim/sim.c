/* Lifecycle of the virtual bench: "flash" selects a scenario, "reset" runs
 * it in-process (ergon_sim_run) and leaves the bytes the target sent in a
 * wire file that the capture pipeline reads like any transport. */
#include "ergon/sim.h"

#include "ergon/fileio.h"
#include "ergon/lifecycle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ergon_lifecycle {
	char work_dir[1024];
	char scenario[64];
	char wire[1100];
	int have_result;
	int have_options;
	struct ergon_sim_options options;
	struct ergon_sim_result res;
};

static int sim_open(const struct ergon_lifecycle_opts *o, struct ergon_lifecycle **out,
		    struct ergon_err *err)
{
	struct ergon_lifecycle *lc = calloc(1, sizeof *lc);
	if (lc == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "virtual bench: out of memory");
	snprintf(lc->work_dir, sizeof lc->work_dir, "%s", o->work_dir);
	if (o->sim_options != NULL) {
		lc->options = *o->sim_options;
		lc->have_options = 1;
	}
	*out = lc;
	return 0;
}

static int sim_flash(struct ergon_lifecycle *lc, const char *image, struct ergon_err *err)
{
	if (strlen(image) >= sizeof lc->scenario)
		return ergon_err_set(err, ERGON_EUSAGE, "--sim-scenario %.40s: name too long",
				     image);
	snprintf(lc->scenario, sizeof lc->scenario, "%s", image);
	return 0;
}

static int sim_reset(struct ergon_lifecycle *lc, struct ergon_err *err)
{
	if (lc->have_result)
		ergon_sim_result_cleanup(&lc->res);
	lc->have_result = 0;
	int rc = ergon_sim_run_opts(lc->scenario, lc->have_options ? &lc->options : NULL,
				    &lc->res, err);
	if (rc)
		return rc;
	lc->have_result = 1;
	snprintf(lc->wire, sizeof lc->wire, "%s/sim_wire.bin", lc->work_dir);
	return ergon_file_write_atomic(lc->wire, lc->res.stream, lc->res.stream_len,
				       ERGON_WRITE_FORCE, err);
}

static int sim_endpoint(struct ergon_lifecycle *lc, char *spec, size_t cap, struct ergon_err *err)
{
	if (!lc->have_result)
		return ergon_err_set(err, ERGON_EUSAGE, "virtual bench: endpoint before reset");
	if ((size_t)snprintf(spec, cap, "file:%s", lc->wire) >= cap)
		return ergon_err_set(err, ERGON_ETOOBIG, "virtual bench: path too long: %s",
				     lc->wire);
	return 0;
}

static int sim_finish(struct ergon_lifecycle *lc, struct ergon_err *err)
{
	(void)err;
	/* The wire file is a copy of what capture.log keeps. */
	if (lc->wire[0])
		remove(lc->wire);
	return 0;
}

static void sim_close(struct ergon_lifecycle *lc)
{
	if (lc == NULL)
		return;
	if (lc->have_result)
		ergon_sim_result_cleanup(&lc->res);
	free(lc);
}

const struct ergon_sim_result *ergon_lifecycle_sim_result(const struct ergon_lifecycle *lc)
{
	return lc != NULL && lc->have_result && lc->res.stream != NULL ? &lc->res : NULL;
}

const struct ergon_lifecycle_driver ergon_lifecycle_sim = {
    .name = "sim",
    .hardware = 0,
    .open = sim_open,
    .flash = sim_flash,
    .reset = sim_reset,
    .endpoint = sim_endpoint,
    .finish = sim_finish,
    .close = sim_close,
};
