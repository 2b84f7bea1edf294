/* The Joulescope instrument (`--instrument joulescope[:SERIAL]`): ergon's
 * own bridge, bridges/joulescope_bridge.py, run on Python 3 with the
 * vendor's pyjoulescope_driver (docs/USAGE.md "Joulescope"). This file only
 * finds the script and builds its command line; the protocol is the
 * bridge driver's (docs/BRIDGE.md).
 *
 * The script is looked up as $ERGON_JOULESCOPE_BRIDGE, then beside the
 * running ergon (<bindir>/../share/ergon/bridges, so that an installed tree
 * that was moved still finds it), then the configured install folder
 * (ERGON_BRIDGE_INSTALL_DIR), then the source tree's (for a build that is
 * not installed); Python is $ERGON_PYTHON or python3 on PATH. */
#include "drivers/instruments/bridge/bridge_priv.h"
#include "ergon/bridge.h"
#include "ergon/instrument.h"
#include "ergon/parse.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef ERGON_BRIDGE_INSTALL_DIR
#define ERGON_BRIDGE_INSTALL_DIR ""
#endif
#ifndef ERGON_BRIDGE_SOURCE_DIR
#define ERGON_BRIDGE_SOURCE_DIR ""
#endif

#define SCRIPT "joulescope_bridge.py"
#define SCAN_TIMEOUT_S 20.0

static int find_script(char *out, size_t cap, struct ergon_err *err)
{
	const char *env = getenv("ERGON_JOULESCOPE_BRIDGE");
	if (env && env[0]) {
		if (access(env, R_OK) != 0)
			return ergon_err_set(
			    err, ERGON_ENOENT,
			    "joulescope: ERGON_JOULESCOPE_BRIDGE=%s is not a readable "
			    "file; unset it or point it at joulescope_bridge.py",
			    env);
		snprintf(out, cap, "%s", env);
		return 0;
	}
	char exe[512], beside[600] = "";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(beside, sizeof(beside), "%s/../share/ergon/bridges", exe);
		}
	}
	const char *dirs[] = {beside, ERGON_BRIDGE_INSTALL_DIR, ERGON_BRIDGE_SOURCE_DIR};
	for (size_t i = 0; i < 3; i++) {
		if (dirs[i][0] == '\0')
			continue;
		snprintf(out, cap, "%s/%s", dirs[i], SCRIPT);
		if (access(out, R_OK) == 0)
			return 0;
	}
	return ergon_err_set(err, ERGON_ENOENT,
			     "joulescope: the bridge script %s is not installed (looked in '%s' "
			     "and '%s'); reinstall ergon or set ERGON_JOULESCOPE_BRIDGE",
			     SCRIPT, ERGON_BRIDGE_INSTALL_DIR, ERGON_BRIDGE_SOURCE_DIR);
}

/* argv = python3 SCRIPT [words...]; words NULL-terminated. */
static int build_argv(struct ergon_wl_argv *av, const char *const *args, struct ergon_err *err)
{
	char script[512];
	int rc = find_script(script, sizeof(script), err);
	if (rc)
		return rc;
	const char *py = getenv("ERGON_PYTHON");
	const char *words[10] = {py && py[0] ? py : "python3", script};
	size_t nw = 2;
	for (const char *const *a = args; a && *a && nw < 10; a++)
		words[nw++] = *a;
	size_t o = 0;
	av->argc = 0;
	for (size_t i = 0; i < nw; i++) {
		if (words[i] == NULL || words[i][0] == '\0')
			continue;
		size_t l = strlen(words[i]);
		if (o + l + 1 > sizeof(av->buf))
			return ergon_err_set(err, ERGON_ETOOBIG,
					     "joulescope: command line too long");
		memcpy(av->buf + o, words[i], l + 1);
		av->argv[av->argc++] = av->buf + o;
		o += l + 1;
	}
	av->argv[av->argc] = NULL;
	return 0;
}

static int js_open(struct ergon_instrument *inst, const struct ergon_instrument_options *opts,
		   struct ergon_err *err)
{
	static struct ergon_wl_argv av;
	const char *serial = opts->arg && opts->arg[0] ? opts->arg : NULL;
	if (serial &&
	    strspn(serial, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") !=
		strlen(serial))
		return ergon_err_set(err, ERGON_EUSAGE,
				     "--instrument joulescope:%s: a serial number is letters, "
				     "digits, '-' and '_' (see `ergon instruments`)",
				     serial);
	char label[96];
	snprintf(label, sizeof(label), "joulescope%s%.60s", serial ? ":" : "",
		 serial ? serial : "");
	const char *args[8];
	size_t na = 0;
	if (serial)
		args[na++] = "--serial", args[na++] = serial;
	/* The statistics rate is the bridge's to set on the instrument. */
	const char *rate = ergon_options_get(opts, "stats_rate_hz");
	double hz = 0;
	if (rate) {
		int prc = ergon_parse_double(rate, "--instrument-opt stats_rate_hz (joulescope)",
					     &hz, err);
		if (prc)
			return prc;
		if (!(hz >= 1 && hz <= 100000))
			return ergon_err_set(err, ERGON_ERANGE,
					     "--instrument-opt stats_rate_hz=%s (joulescope): give "
					     "1..100000 statistics per second",
					     rate);
		args[na++] = "--stats-rate", args[na++] = rate;
	}
	args[na] = NULL;
	int rc = build_argv(&av, args, err);
	if (rc)
		return rc;
	static const char *const extra[] = {"stats_rate_hz", NULL};
	rc = ergon_bridge_open_argv(inst, &av, label, opts, extra, err);
	if (rc)
		return rc;
	/* The rate asked for, or nothing: a bridge that announces another
	 * would hand the engine packets of a period nobody chose. */
	struct ergon_bridge_caps caps;
	if (rate && (ergon_bridge_caps(inst, &caps) != 0 ||
		     !(fabs(caps.stats_rate_hz - hz) <= 1e-9 * hz))) {
		double got = caps.stats_rate_hz;
		ergon_bridge_drv_close(inst);
		inst->priv = NULL;
		return ergon_err_set(err, ERGON_EDEVICE,
				     "--instrument-opt stats_rate_hz=%s (joulescope): the bridge "
				     "announced %g statistics per second instead; check "
				     "ERGON_JOULESCOPE_BRIDGE (an older bridge ignores the rate)",
				     rate, got);
	}
	snprintf(inst->identity.validated_against, sizeof(inst->identity.validated_against),
		 "a stub pyjoulescope_driver only "
		 "(tests/support/pyjoulescope_stub; never run on a Joulescope)");
	return 0;
}

static int js_scan(const struct ergon_instrument_options *opts, json_t **found,
		   struct ergon_err *err)
{
	(void)opts;
	*found = NULL;
	static struct ergon_wl_argv av;
	static const char *const scan_args[] = {"--scan", NULL};
	int rc = build_argv(&av, scan_args, err);
	if (rc)
		return rc;
	char out[8192];
	int status = 0;
	rc = ergon_bridge_run_once(&av, "joulescope --scan", SCAN_TIMEOUT_S, out, sizeof(out),
				   &status, err);
	if (rc)
		return rc;
	json_error_t je;
	json_t *o = json_loads(out, JSON_DISABLE_EOF_CHECK, &je);
	const char *type = json_string_value(json_object_get(o, "type"));
	if (type && strcmp(type, "error") == 0) {
		rc = ergon_err_set(err, ERGON_ENOENT, "%s",
				   json_string_value(json_object_get(o, "message"))
				       ? json_string_value(json_object_get(o, "message"))
				       : "the bridge reported an error");
		goto done;
	}
	json_t *devs = json_object_get(o, "devices");
	if (type == NULL || strcmp(type, "scan") || !json_is_array(devs) ||
	    !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		rc = ergon_err_set(err, ERGON_EDEVICE,
				   "joulescope: the bridge's --scan answered no device list (%s); "
				   "run `python3 %s --scan` to see why",
				   type ? type : "no JSON", av.argv[1]);
		goto done;
	}
	if (json_array_size(devs) == 0) {
		rc = ergon_err_set(err, ERGON_ENOENT,
				   "joulescope: pyjoulescope_driver found no Joulescope; plug one "
				   "in (and on Linux install the vendor's udev rules)");
		goto done;
	}
	*found = json_array();
	size_t i;
	json_t *d;
	json_array_foreach(devs, i, d)
	{
		const char *path = json_string_value(json_object_get(d, "path"));
		const char *serial = json_string_value(json_object_get(d, "serial"));
		const char *model = json_string_value(json_object_get(d, "model"));
		char id[128];
		snprintf(id, sizeof(id), "joulescope:%.100s", serial ? serial : "?");
		json_array_append_new(*found,
				      json_pack("{s:s, s:s, s:s}", "id", id, "path",
						path ? path : "", "model", model ? model : ""));
	}
done:
	json_decref(o);
	return rc;
}

const struct ergon_instrument_driver ergon_instrument_joulescope = {
    .name = "joulescope",
    .longname = "Joulescope JS220/JS110 through the vendor's pyjoulescope_driver "
		"(joulescope[:SERIAL]; ergon's bridge, validated against a stub only)",
    .scan = js_scan,
    .open = js_open,
    .start = ergon_bridge_drv_start,
    .read = ergon_bridge_drv_read,
    .stop = ergon_bridge_drv_stop,
    .close = ergon_bridge_drv_close,
    .stats = ergon_bridge_drv_stats,
};
