/* The ppk2 instrument: glue between a Nordic Power Profiler Kit II on a USB
 * CDC port and ergon's instrument interface. The wire format is in
 * protocol.c; this file finds the device, opens the port, sends commands,
 * and turns decoded samples into the sample stream.
 *
 * Specs: `ppk2` (the only one attached), `ppk2:PORT`, `ppk2:serial=SN`.
 * Options (--instrument-opt): mode=ampere|source, vdd_mv=N (800..5000),
 * dut_power=on|off, off_on_exit=0|1, spike_filter=0|1.
 *
 * Port I/O goes through libserialport for ports it knows (USB devices);
 * pseudo-terminals (the protocol simulator in tests/support/) are driven
 * with termios directly, and a port that is not a USB PPK2 yields samples
 * labelled synthetic, never measured.
 *
 * Timestamps: sample k is t0 + k / 100 kHz on the host monotonic clock,
 * t0 being when the first bytes arrived after AverageStart; k counts
 * dropped samples too, so a counter gap is a gap in time, never filled.
 */
#include "drivers/instruments/ppk2/ppk2.h"
#include "ergon/artifact.h"
#include "ergon/clock.h"
#include "ergon/instrument.h"
#include "ergon/issues.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#ifdef ERGON_HAVE_SERIALPORT
#include <libserialport.h>
#endif

#define META_TIMEOUT_MS 2000
#define READ_TIMEOUT_MS 20
#define GAPS_KEPT 32
/* Words read per call: the session asks for at most its batch. */
#define READ_BYTES_MAX (64u * 1024u)

struct ppk2_port {
	char path[256];
	int fd; /* termios; -1 when libserialport holds the port */
#ifdef ERGON_HAVE_SERIALPORT
	struct sp_port *sp;
#endif
	int usb_ppk2; /* libserialport says VID/PID are the PPK2's */
	char serial[64];
};

struct ppk2 {
	struct ppk2_port port;
	struct ppk2_cal cal;
	struct ppk2_decoder dec;
	int mode;
	int vdd_mv;
	int dut_power; /* -1 leave, 0 off, 1 on */
	int off_on_exit;
	int spike_filter;
	int started;
	int disconnected;
	double t0_s;
	uint64_t samples;
	struct {
		uint64_t at, missing;
		uint64_t from; /* host clock: lost somewhere in [from, at) */
		int host_clock;
	} gaps[GAPS_KEPT];
	struct ppk2_clock_check cc;
	size_t gaps_kept;
	uint8_t *rx;
	struct ppk2_sample *dec_buf;
	size_t dec_cap;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* When a read returned, for the host-clock check: CLOCK_MONOTONIC_RAW,
 * which NTP does not slew (a slew of up to 500 ppm on CLOCK_MONOTONIC is 50
 * samples a second, nearly a block), or the simulated clock a test put in
 * (include/ergon/clock.h). */
static double arrival_s(void)
{
	if (ergon_clock_simulated())
		return ergon_clock_now_s();
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- ports ------------------------------------------------------------ */

static int port_open(struct ppk2_port *p, const char *path, struct ergon_err *err)
{
	memset(p, 0, sizeof(*p));
	p->fd = -1;
	if (strlen(path) >= sizeof(p->path))
		return ergon_err_set(err, ERGON_EUSAGE, "ppk2:%.64s...: port name too long", path);
	snprintf(p->path, sizeof(p->path), "%s", path);
#ifdef ERGON_HAVE_SERIALPORT
	struct sp_port *sp = NULL;
	if (sp_get_port_by_name(path, &sp) == SP_OK) {
		int vid = 0, pid = 0;
		if (sp_get_port_transport(sp) == SP_TRANSPORT_USB &&
		    sp_get_port_usb_vid_pid(sp, &vid, &pid) == SP_OK && vid == (int)PPK2_USB_VID &&
		    pid == (int)PPK2_USB_PID) {
			p->usb_ppk2 = 1;
			const char *sn = sp_get_port_usb_serial(sp);
			snprintf(p->serial, sizeof(p->serial), "%s", sn ? sn : "");
		}
		if (sp_open(sp, SP_MODE_READ_WRITE) != SP_OK) {
			int rc =
			    ergon_err_set(err, ERGON_EIO,
					  "ppk2:%s: cannot open the port: %s (is another "
					  "program, e.g. nRF Connect Power Profiler, using it? "
					  "Is your user in the dialout group?)",
					  path, sp_last_error_message());
			sp_free_port(sp);
			return rc;
		}
		/* USB CDC ignores the baud rate; 8N1 without flow control. */
		(void)sp_set_baudrate(sp, 115200);
		(void)sp_set_bits(sp, 8);
		(void)sp_set_parity(sp, SP_PARITY_NONE);
		(void)sp_set_stopbits(sp, 1);
		(void)sp_set_flowcontrol(sp, SP_FLOWCONTROL_NONE);
		(void)sp_set_dtr(sp, SP_DTR_ON);
		p->sp = sp;
		return 0;
	}
#endif
	int fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return ergon_err_errno(err, errno,
				       "ppk2:%s: cannot open the port (is the PPK2 plugged in? "
				       "`ergon instruments` lists the PPK2s found)",
				       path);
	struct termios tio;
	if (tcgetattr(fd, &tio) != 0) {
		int e = errno;
		close(fd);
		return ergon_err_errno(err, e, "ppk2:%s: not a serial port", path);
	}
	cfmakeraw(&tio);
	tio.c_cflag |= CLOCAL | CREAD;
	if (tcsetattr(fd, TCSANOW, &tio) != 0) {
		int e = errno;
		close(fd);
		return ergon_err_errno(err, e, "ppk2:%s: cannot configure the port", path);
	}
	p->fd = fd;
	return 0;
}

static void port_close(struct ppk2_port *p)
{
#ifdef ERGON_HAVE_SERIALPORT
	if (p->sp) {
		sp_close(p->sp);
		sp_free_port(p->sp);
		p->sp = NULL;
	}
#endif
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
}

static int port_write(struct ppk2_port *p, const uint8_t *b, size_t n, struct ergon_err *err)
{
#ifdef ERGON_HAVE_SERIALPORT
	if (p->sp) {
		if (sp_blocking_write(p->sp, b, n, 1000) != (int)n)
			return ergon_err_set(err, ERGON_EDEVICE,
					     "ppk2:%s: cannot send a command: %s (unplugged?)",
					     p->path, sp_last_error_message());
		return 0;
	}
#endif
	size_t o = 0;
	while (o < n) {
		ssize_t w = write(p->fd, b + o, n - o);
		if (w < 0 && errno == EAGAIN) {
			struct pollfd pf = {.fd = p->fd, .events = POLLOUT};
			if (poll(&pf, 1, 1000) <= 0)
				return ergon_err_set(err, ERGON_ETIMEDOUT,
						     "ppk2:%s: the port does not take commands",
						     p->path);
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return ergon_err_errno(
			    err, errno, "ppk2:%s: cannot send a command (unplugged?)", p->path);
		o += (size_t)w;
	}
	return 0;
}

/* Read up to cap bytes within timeout_ms. 0 with *got (may be 0 on a
 * timeout); ERGON_EDEVICE when the port is gone (unplugged). */
static int port_read(struct ppk2_port *p, uint8_t *b, size_t cap, int timeout_ms, size_t *got)
{
	*got = 0;
#ifdef ERGON_HAVE_SERIALPORT
	if (p->sp) {
		int n = sp_blocking_read_next(p->sp, b, cap, (unsigned)timeout_ms);
		if (n < 0)
			return ERGON_EDEVICE;
		if (n == 0) {
			/* A vanished USB device reads as a timeout; ask the
			 * port whether it is still there. */
			int waiting = sp_input_waiting(p->sp);
			if (waiting < 0)
				return ERGON_EDEVICE;
		}
		*got = (size_t)n;
		return 0;
	}
#endif
	struct pollfd pf = {.fd = p->fd, .events = POLLIN};
	int pr = poll(&pf, 1, timeout_ms);
	if (pr < 0)
		return errno == EINTR ? 0 : ERGON_EDEVICE;
	if (pr == 0)
		return 0;
	ssize_t r = read(p->fd, b, cap);
	if (r > 0) {
		*got = (size_t)r;
		return 0;
	}
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	return ERGON_EDEVICE; /* EOF or EIO: the other end is gone */
}

/* Discard what is queued (a stream from an earlier session) until the
 * port has been quiet for 10 ms, for at most 1 s. */
static void port_drain(struct ppk2_port *p)
{
	uint8_t junk[4096];
	size_t got = 0;
	double until = now_s() + 1.0;
	while (now_s() < until) {
		if (port_read(p, junk, sizeof(junk), 10, &got) != 0 || got == 0)
			break;
	}
}

/* ---- finding devices -------------------------------------------------- */

struct found {
	char path[256];
	char serial[64];
};
#define FOUND_MAX 16

/* ERGON_PPK2_PORTS="PATH[=SERIAL],..." replaces USB enumeration (for the
 * protocol simulator and for ports libserialport cannot see). */
static int list_ports(struct found *f, size_t *n, struct ergon_err *err)
{
	*n = 0;
	const char *env = getenv("ERGON_PPK2_PORTS");
	if (env != NULL) {
		const char *s = env;
		while (*s && *n < FOUND_MAX) {
			size_t l = strcspn(s, ",");
			size_t eq = strcspn(s, "=,");
			size_t pl = eq < l ? eq : l;
			if (pl > 0 && pl < sizeof(f->path)) {
				memcpy(f[*n].path, s, pl);
				f[*n].path[pl] = '\0';
				f[*n].serial[0] = '\0';
				if (eq < l) {
					size_t sl = l - eq - 1;
					if (sl >= sizeof(f->serial))
						sl = sizeof(f->serial) - 1;
					memcpy(f[*n].serial, s + eq + 1, sl);
					f[*n].serial[sl] = '\0';
				}
				(*n)++;
			}
			s += l;
			if (*s == ',')
				s++;
		}
		return 0;
	}
#ifdef ERGON_HAVE_SERIALPORT
	struct sp_port **list = NULL;
	if (sp_list_ports(&list) != SP_OK)
		return ergon_err_set(err, ERGON_EIO, "ppk2: cannot list serial ports: %s",
				     sp_last_error_message());
	for (size_t i = 0; list[i] && *n < FOUND_MAX; i++) {
		int vid = 0, pid = 0;
		if (sp_get_port_transport(list[i]) != SP_TRANSPORT_USB ||
		    sp_get_port_usb_vid_pid(list[i], &vid, &pid) != SP_OK ||
		    vid != (int)PPK2_USB_VID || pid != (int)PPK2_USB_PID)
			continue;
		const char *sn = sp_get_port_usb_serial(list[i]);
		snprintf(f[*n].path, sizeof(f->path), "%s", sp_get_port_name(list[i]));
		snprintf(f[*n].serial, sizeof(f->serial), "%s", sn ? sn : "");
		(*n)++;
	}
	sp_free_port_list(list);
	return 0;
#else
	return ergon_err_set(err, ERGON_ENOTSUP,
			     "ppk2: ergon was built without libserialport, so it cannot look "
			     "for PPK2s; give the port (ppk2:/dev/ttyACM0) or rebuild with "
			     "libserialport-dev installed");
#endif
}

static int ppk2_scan(const struct ergon_instrument_options *opts, json_t **found,
		     struct ergon_err *err)
{
	(void)opts;
	*found = NULL;
	struct found f[FOUND_MAX];
	size_t n = 0;
	int rc = list_ports(f, &n, err);
	if (rc)
		return rc;
	if (n == 0)
		return ergon_err_set(err, ERGON_ENOENT,
				     "no PPK2 found (USB VID 0x1915 PID 0xC00A): plug it in with "
				     "a data USB cable on its USB DATA/POWER port; if it is "
				     "plugged in, check that your user may open /dev/ttyACM* "
				     "(group dialout)");
	*found = json_array();
	for (size_t i = 0; i < n; i++) {
		char id[300];
		snprintf(id, sizeof(id), "ppk2:%.255s", f[i].path);
		json_array_append_new(*found, json_pack("{s:s, s:s, s:s}", "id", id, "serial",
							f[i].serial, "model", "PPK2"));
	}
	return 0;
}

/* Resolve the spec's argument to one port. */
static int pick_port(const char *arg, char *path, size_t cap, char *serial, size_t scap,
		     struct ergon_err *err)
{
	serial[0] = '\0';
	if (arg != NULL && arg[0] != '\0' && strncmp(arg, "serial=", 7) != 0) {
		snprintf(path, cap, "%s", arg);
		return 0;
	}
	struct found f[FOUND_MAX];
	size_t n = 0;
	int rc = list_ports(f, &n, err);
	if (rc)
		return rc;
	const char *want = arg && arg[0] ? arg + 7 : NULL;
	char list[1024] = "";
	size_t lo = 0, match = n;
	int matches = 0;
	for (size_t i = 0; i < n; i++) {
		if (lo + 300 < sizeof(list))
			lo += (size_t)snprintf(list + lo, sizeof(list) - lo,
					       "%sppk2:%.255s (serial %.63s)", lo ? ", " : "",
					       f[i].path, f[i].serial[0] ? f[i].serial : "unknown");
		if (want == NULL || strcmp(f[i].serial, want) == 0) {
			match = i;
			matches++;
		}
	}
	if (want != NULL && matches == 0)
		return ergon_err_set(err, ERGON_ENOENT,
				     "--instrument ppk2:serial=%s: no PPK2 with that serial; "
				     "found: %s",
				     want, n ? list : "none (plug it in; `ergon instruments`)");
	if (n == 0)
		return ergon_err_set(err, ERGON_ENOENT,
				     "--instrument ppk2: no PPK2 found (USB VID 0x1915 PID "
				     "0xC00A); plug it in, or give its port as ppk2:/dev/ttyACM0");
	if (matches > 1)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "--instrument %s: %d PPK2s found, pick one with "
				     "ppk2:serial=SN or ppk2:PORT: %s",
				     want ? arg : "ppk2", matches, list);
	snprintf(path, cap, "%.255s", f[match].path);
	snprintf(serial, scap, "%.63s", f[match].serial);
	return 0;
}

/* ---- commands --------------------------------------------------------- */

static int send_cmd(struct ppk2 *k, const uint8_t *b, size_t n, struct ergon_err *err)
{
	return port_write(&k->port, b, n, err);
}

static int get_metadata(struct ppk2 *k, struct ergon_err *err)
{
	char buf[PPK2_META_MAX + 64];
	size_t len = 0;
	uint8_t cmd = PPK2_CMD_GET_METADATA;
	int rc = send_cmd(k, &cmd, 1, err);
	if (rc)
		return rc;
	double deadline = now_s() + META_TIMEOUT_MS / 1000.0;
	for (;;) {
		rc = ppk2_meta_parse(buf, len, &k->cal, k->port.path, err);
		if (rc <= 0)
			return rc;
		if (now_s() > deadline)
			return ergon_err_set(
			    err, ERGON_ETIMEDOUT,
			    "ppk2:%s: no calibration answer (GetMetadata, %zu bytes "
			    "received in %d ms): this port is not a PPK2, or its "
			    "firmware is not the one nRF Connect Power Profiler "
			    "installs; check the port with `ergon instruments`",
			    k->port.path, len, META_TIMEOUT_MS);
		size_t got = 0;
		size_t room = sizeof(buf) - len;
		if (room == 0)
			return ergon_err_set(err, ERGON_ETOOBIG,
					     "ppk2:%s: the calibration answer exceeds %u bytes; "
					     "this is not a PPK2",
					     k->port.path, PPK2_META_MAX);
		if (port_read(&k->port, (uint8_t *)buf + len, room, 50, &got) != 0)
			return ergon_err_set(err, ERGON_EDEVICE,
					     "ppk2:%s: the port went away while reading the "
					     "calibration (unplugged?)",
					     k->port.path);
		len += got;
	}
}

static int parse_int_opt(const char *name, const char *v, long lo, long hi, long *out,
			 struct ergon_err *err)
{
	long x = 0;
	const char *c = v;
	if (*c == '\0')
		goto bad;
	for (; *c; c++) {
		if (*c < '0' || *c > '9' || x > 1000000)
			goto bad;
		x = x * 10 + (*c - '0');
	}
	if (x < lo || x > hi)
		goto bad;
	*out = x;
	return 0;
bad:
	return ergon_err_set(err, ERGON_EUSAGE,
			     "--instrument-opt %s=%s: expected a whole number %ld..%ld", name, v,
			     lo, hi);
}

static int parse_options(struct ppk2 *k, const struct ergon_instrument_options *opts,
			 struct ergon_err *err)
{
	k->mode = PPK2_MODE_AMPERE;
	k->vdd_mv = 0;
	k->dut_power = -1;
	int spike = 1;
	for (const char *const *kv = opts->kv; kv && *kv; kv++) {
		const char *eq = strchr(*kv, '=');
		size_t kl = eq ? (size_t)(eq - *kv) : strlen(*kv);
		const char *v = eq ? eq + 1 : "";
		long x = 0;
		int rc = 0;
		if (kl == 4 && strncmp(*kv, "mode", 4) == 0) {
			if (strcmp(v, "ampere") == 0)
				k->mode = PPK2_MODE_AMPERE;
			else if (strcmp(v, "source") == 0)
				k->mode = PPK2_MODE_SOURCE;
			else
				return ergon_err_set(err, ERGON_EUSAGE,
						     "--instrument-opt mode=%s: expected ampere "
						     "(the PPK2 in series with your supply) or "
						     "source (the PPK2 powers the target)",
						     v);
		} else if (kl == 6 && strncmp(*kv, "vdd_mv", 6) == 0) {
			rc = parse_int_opt("vdd_mv", v, PPK2_VDD_MIN_MV, PPK2_VDD_MAX_MV, &x, err);
			k->vdd_mv = (int)x;
		} else if (kl == 9 && strncmp(*kv, "dut_power", 9) == 0) {
			if (strcmp(v, "on") == 0)
				k->dut_power = 1;
			else if (strcmp(v, "off") == 0)
				k->dut_power = 0;
			else
				return ergon_err_set(err, ERGON_EUSAGE,
						     "--instrument-opt dut_power=%s: expected on "
						     "or off",
						     v);
		} else if (kl == 11 && strncmp(*kv, "off_on_exit", 11) == 0) {
			rc = parse_int_opt("off_on_exit", v, 0, 1, &x, err);
			k->off_on_exit = (int)x;
		} else if (kl == 12 && strncmp(*kv, "spike_filter", 12) == 0) {
			rc = parse_int_opt("spike_filter", v, 0, 1, &x, err);
			spike = (int)x;
		} else {
			return ergon_err_set(err, ERGON_EUSAGE,
					     "--instrument-opt %s: ppk2 knows mode=ampere|source, "
					     "vdd_mv=800..5000, dut_power=on|off, off_on_exit=0|1, "
					     "spike_filter=0|1",
					     *kv);
		}
		if (rc)
			return rc;
	}
	if (k->vdd_mv == 0)
		return ergon_err_set(
		    err, ERGON_EUSAGE,
		    "--instrument ppk2: give the rail voltage with --instrument-opt vdd_mv=N "
		    "(800..5000 mV): in source mode the PPK2 supplies it; in ampere mode the PPK2 "
		    "does not measure voltage, so power and energy use the voltage you state");
	k->spike_filter = spike;
	return 0;
}

static void fill_identity(struct ergon_instrument *inst, struct ppk2 *k, const char *serial)
{
	struct ergon_instrument_identity *id = &inst->identity;
	snprintf(id->vendor, sizeof(id->vendor), "Nordic Semiconductor");
	snprintf(id->model, sizeof(id->model), "Power Profiler Kit II (PPK2)");
	snprintf(id->serial, sizeof(id->serial), "%s", serial[0] ? serial : k->port.serial);
	/* No rated accuracy is stated here: the figure in Nordic's PPK2 product
	 * specification could not be checked when this driver was written, and
	 * a guessed rating would pass for a datasheet figure. 0 = unrated
	 * (instrument.unrated_accuracy says so on every energy). */
	id->accuracy_pct = 0;
	double vdd_v = k->vdd_mv / 1000.0;
	/* Resolution: one raw14 step on range 0 (the finest), times the rail
	 * voltage. The per-range figures are in the notes. */
	id->resolution_w = ppk2_resolution_a(&k->cal, 0) * vdd_v;
	/* The rating (docs/UNCERTAINTY.md): no Nordic accuracy figure could be
	 * read here, so gain and offset are unknown; the range of a sample is
	 * not kept past the decoder, so one "range" stands for all five with
	 * the coarsest step. The voltage is a setpoint or the user's word. */
	struct ergon_rating *g = &id->rating;
	ergon_rating_init(g, ERGON_RATING_IV);
	g->n_ranges = 1;
	snprintf(g->range[0].name, sizeof(g->range[0].name), "any of 5");
	g->range[0].resolution_a = ppk2_resolution_a(&k->cal, PPK2_RANGES - 1);
	ergon_rated_unknown(&g->range[0].gain_pct,
			    "Nordic states no PPK2 accuracy in the sources available here; give "
			    "--instrument-opt rating.i_gain_pct=PCT");
	ergon_rated_unknown(&g->range[0].offset_a,
			    "Nordic states no PPK2 offset in the sources available here; give "
			    "--instrument-opt rating.i_offset_a=A");
	ergon_rated_unknown(&g->v_gain_pct, "%s",
			    k->mode == PPK2_MODE_SOURCE
				? "the PPK2's source voltage is a setpoint of no stated accuracy"
				: "ampere mode: the voltage is the user's statement, not measured");
	ergon_rated_unknown(&g->v_offset_v, "%s",
			    k->mode == PPK2_MODE_SOURCE
				? "the PPK2's source voltage is a setpoint of no stated accuracy"
				: "ampere mode: the voltage is the user's statement, not measured");
	ergon_rated_unknown(&g->timebase_ppm,
			    "Nordic states no tolerance for the PPK2's 100 kSPS sample clock");
	snprintf(g->range_rule, sizeof(g->range_rule),
		 "not kept: the decoder knows each sample's range, the stream does not");
	g->view_v = vdd_v;
	ergon_rating_build_power_view(g);
	id->resolution_j = 0;
	id->sample_rate_hz = PPK2_SAMPLE_RATE_HZ;
	id->averaging_period_s = 0;
	snprintf(id->integrates, sizeof(id->integrates), "none");
	snprintf(id->clock, sizeof(id->clock), "instrument");
	id->provenance = k->port.usb_ppk2 ? ERGON_PROV_MEASURED : ERGON_PROV_SYNTHETIC;
	id->n_rails = 1;
	id->total_rail = 0;
	snprintf(id->rails[0], sizeof(id->rails[0]), "%s", "VOUT");
	snprintf(id->validated_against, sizeof(id->validated_against),
		 "a protocol simulator only (tests/support/ts_ppk2_sim.c)");
	int o = snprintf(
	    id->notes, sizeof(id->notes),
	    "%s mode at %d mV (%s); 100 kSPS; resolution per range (A, one 14-bit step over "
	    "the shunt): %.3g, %.3g, %.3g, %.3g, %.3g; post-range-switch spike filter %s "
	    "(Nordic's app's rule: averages 0.18 and 0.06 on range 4, 3 samples); validated "
	    "against a protocol simulator only, never run on a PPK2; %s",
	    k->mode == PPK2_MODE_SOURCE ? "source meter" : "ampere meter", k->vdd_mv,
	    k->mode == PPK2_MODE_SOURCE ? "the PPK2's setpoint, not measured"
					: "stated by the user, not measured",
	    ppk2_resolution_a(&k->cal, 0), ppk2_resolution_a(&k->cal, 1),
	    ppk2_resolution_a(&k->cal, 2), ppk2_resolution_a(&k->cal, 3),
	    ppk2_resolution_a(&k->cal, 4), k->spike_filter ? "applied" : "off",
	    k->port.usb_ppk2 ? "USB PPK2" : "port is not a USB PPK2 (a simulator): synthetic");
	(void)o;
}

static void free_ppk2(struct ppk2 *k)
{
	if (k == NULL)
		return;
	port_close(&k->port);
	free(k->rx);
	free(k->dec_buf);
	free(k);
}

static int ppk2_open(struct ergon_instrument *inst, const struct ergon_instrument_options *opts,
		     struct ergon_err *err)
{
	struct ppk2 *k = calloc(1, sizeof(*k));
	char path[256], serial[64];
	int rc;
	if (k == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	k->port.fd = -1;
	k->rx = malloc(READ_BYTES_MAX);
	k->dec_cap = READ_BYTES_MAX / 4 + 1;
	k->dec_buf = malloc(k->dec_cap * sizeof(*k->dec_buf));
	if (k->rx == NULL || k->dec_buf == NULL) {
		rc = ergon_err_set(err, ERGON_ENOMEM, "out of memory");
		goto fail;
	}
	rc = parse_options(k, opts, err);
	if (rc)
		goto fail;
	rc = pick_port(opts->arg, path, sizeof(path), serial, sizeof(serial), err);
	if (rc)
		goto fail;
	rc = port_open(&k->port, path, err);
	if (rc)
		goto fail;
	/* It may still be streaming from an earlier session. */
	uint8_t stop = PPK2_CMD_AVERAGE_STOP;
	rc = send_cmd(k, &stop, 1, err);
	if (rc)
		goto fail;
	port_drain(&k->port);
	rc = get_metadata(k, err);
	if (rc)
		goto fail;
	if (k->cal.defaulted) {
		char which[256];
		ppk2_cal_key_names(k->cal.defaulted, which, sizeof(which));
		ergon_issue_add(inst->issues, "instrument.calibration_defaulted",
				json_pack("{s:s, s:s, s:I, s:I}", "instrument", "ppk2", "keys",
					  which, "ranges_mask", (json_int_t)k->cal.r_defaulted,
					  "keys_mask", (json_int_t)k->cal.defaulted),
				"ppk2:%s: the PPK2 reported %s as missing or -nan (a shunt: 0 or "
				"negative); as Nordic's app does, the defaults stand in for them "
				"(shunts 1031.64, 101.65, 10.15, 0.94, 0.043 ohm; GS = GI = UG = "
				"1; O = S = I = 0), so currents on those ranges carry the "
				"tolerance of an uncalibrated PPK2, not its factory calibration. "
				"Have the PPK2 recalibrated",
				k->port.path, which);
	}
	ppk2_decoder_init(&k->dec, &k->cal, (double)k->vdd_mv);
	k->dec.spike_filter = k->spike_filter;
	ppk2_clock_check_init(&k->cc, PPK2_SAMPLE_RATE_HZ);
	uint8_t mode[2] = {PPK2_CMD_SET_POWER_MODE, (uint8_t)k->mode};
	uint8_t reg[3] = {PPK2_CMD_REGULATOR_SET, (uint8_t)(k->vdd_mv >> 8),
			  (uint8_t)(k->vdd_mv & 0xff)};
	rc = send_cmd(k, mode, 2, err);
	if (rc == 0)
		rc = send_cmd(k, reg, 3, err);
	/* Source mode: the target needs its supply to draw anything. */
	int power = k->dut_power >= 0 ? k->dut_power : (k->mode == PPK2_MODE_SOURCE ? 1 : -1);
	if (rc == 0 && power >= 0) {
		uint8_t dut[2] = {PPK2_CMD_DEVICE_RUNNING_SET, (uint8_t)power};
		rc = send_cmd(k, dut, 2, err);
	}
	if (rc)
		goto fail;
	fill_identity(inst, k, serial);
	inst->priv = k;
	return 0;
fail:
	free_ppk2(k);
	return rc;
}

static int ppk2_start(struct ergon_instrument *inst, struct ergon_err *err)
{
	struct ppk2 *k = inst->priv;
	port_drain(&k->port);
	uint8_t cmd = PPK2_CMD_AVERAGE_START;
	int rc = send_cmd(k, &cmd, 1, err);
	if (rc)
		return rc;
	k->started = 1;
	k->t0_s = 0;
	return 0;
}

static void keep_gap(struct ppk2 *k, uint64_t at, uint64_t missing, int host_clock, uint64_t from)
{
	if (k->gaps_kept < GAPS_KEPT) {
		k->gaps[k->gaps_kept].at = at;
		k->gaps[k->gaps_kept].missing = missing;
		k->gaps[k->gaps_kept].host_clock = host_clock;
		k->gaps[k->gaps_kept].from = from;
		k->gaps_kept++;
	}
}

static void on_gap(void *ctx, uint64_t at, uint64_t missing)
{
	keep_gap(ctx, at, missing, 0, at);
}

static void report_drops(struct ergon_instrument *inst, struct ppk2 *k)
{
	uint64_t counter = k->dec.dropped, clock = k->dec.skipped;
	uint64_t total = counter + clock;
	if (total == 0)
		return;
	json_t *list = json_array();
	for (size_t i = 0; i < k->gaps_kept; i++) {
		json_t *g = json_pack("{s:I, s:f, s:I, s:f, s:s}", "sample_index",
				      (json_int_t)k->gaps[i].at, "t_s",
				      (double)k->gaps[i].at / PPK2_SAMPLE_RATE_HZ, "samples",
				      (json_int_t)k->gaps[i].missing, "duration_s",
				      (double)k->gaps[i].missing / PPK2_SAMPLE_RATE_HZ, "found_by",
				      k->gaps[i].host_clock ? "host_clock" : "sample_counter");
		if (g && k->gaps[i].host_clock)
			json_object_set_new(g, "lost_between_samples",
					    json_pack("[I, I]", (json_int_t)k->gaps[i].from,
						      (json_int_t)k->gaps[i].at));
		json_array_append_new(list, g);
	}
	char clock_note[400] = "";
	if (clock)
		snprintf(clock_note, sizeof(clock_note),
			 "; %" PRIu64 " of them in %" PRIu64 " run(s) of whole 64-sample blocks "
			 "the 6-bit counter cannot show, found from the host's clock (the "
			 "stream fell behind it for good) and placed where found, up to a second "
			 "after the loss (first_gaps gives the span each lies in)",
			 clock, k->cc.losses);
	ergon_issue_add(
	    inst->issues, "instrument.samples_dropped",
	    json_pack("{s:s, s:I, s:I, s:I, s:I, s:f, s:o}", "instrument", "ppk2",
		      "dropped_samples", (json_int_t)total, "counter_dropped_samples",
		      (json_int_t)counter, "host_clock_dropped_samples", (json_int_t)clock, "gaps",
		      (json_int_t)(k->dec.gaps + k->cc.losses), "dropped_s",
		      (double)total / PPK2_SAMPLE_RATE_HZ, "first_gaps", list),
	    "ppk2:%s: %" PRIu64 " samples (%.6f s) were lost in %" PRIu64
	    " gaps, the first at sample %" PRIu64 "%s; they are missing from the stream (NaN in a "
	    "recording), not interpolated. A busy USB hub or host loses PPK2 data: use a direct "
	    "port and a less loaded machine",
	    k->port.path, total, (double)total / PPK2_SAMPLE_RATE_HZ, k->dec.gaps + k->cc.losses,
	    k->gaps_kept ? k->gaps[0].at : 0, clock_note);
}

static int ppk2_read(struct ergon_instrument *inst, struct ergon_sample *buf, size_t cap, size_t *n,
		     struct ergon_err *err)
{
	struct ppk2 *k = inst->priv;
	*n = 0;
	if (!k->started)
		return ergon_err_set(err, ERGON_EUSAGE, "ppk2: read before start");
	if (k->disconnected)
		return ergon_err_set(err, ERGON_EDEVICE,
				     "ppk2:%s: the PPK2 disconnected after %" PRIu64 " samples",
				     k->port.path, k->samples);
	size_t want = cap * 4;
	if (want > READ_BYTES_MAX)
		want = READ_BYTES_MAX;
	want -= k->dec.rem_len;
	size_t got = 0;
	int rc = port_read(&k->port, k->rx, want, READ_TIMEOUT_MS, &got);
	if (rc) {
		k->disconnected = 1;
		report_drops(inst, k);
		ergon_issue_add(inst->issues, "instrument.disconnected",
				json_pack("{s:s, s:I, s:f}", "instrument", "ppk2", "samples",
					  (json_int_t)k->samples, "after_s",
					  (double)k->dec.index / PPK2_SAMPLE_RATE_HZ),
				"ppk2:%s: the PPK2 disconnected after %" PRIu64
				" samples (%.3f s); everything before is kept, the run is "
				"incomplete",
				k->port.path, k->samples,
				(double)k->dec.index / PPK2_SAMPLE_RATE_HZ);
		return ergon_err_set(err, ERGON_EDEVICE,
				     "ppk2:%s: the PPK2 disconnected after %" PRIu64
				     " samples (unplugged, or its USB port reset)",
				     k->port.path, k->samples);
	}
	if (got == 0)
		return 0;
	double t_arrival = arrival_s();
	if (k->t0_s == 0)
		k->t0_s = ergon_clock_now_s();
	size_t used = 0;
	uint64_t first_index = k->dec.index;
	size_t m = ppk2_decode(&k->dec, k->rx, got, k->dec_buf, cap, &used, on_gap, k);
	/* Whole 64-sample blocks the counter cannot show: placed before this
	 * read's samples, where the host's clock proved them lost. */
	uint64_t from = 0;
	uint64_t lost = ppk2_clock_check_feed(&k->cc, t_arrival, k->dec.index, got < want, &from);
	if (lost > 0) {
		for (size_t i = 0; i < m; i++)
			k->dec_buf[i].index += lost;
		ppk2_decoder_skip(&k->dec, lost);
		keep_gap(k, first_index, lost, 1, from);
	}
	double v = k->vdd_mv / 1000.0;
	for (size_t i = 0; i < m; i++) {
		const struct ppk2_sample *s = &k->dec_buf[i];
		struct ergon_sample *o = &buf[i];
		memset(o, 0, sizeof(*o));
		o->t_s = k->t0_s + (double)s->index / PPK2_SAMPLE_RATE_HZ;
		o->current_a = s->current_a;
		o->voltage_v = v;
		o->power_w = (double)s->current_a * v;
		o->digital = s->logic;
		o->fields = ERGON_F_CURRENT | ERGON_F_VOLTAGE | ERGON_F_POWER | ERGON_F_DIGITAL;
	}
	k->samples += m;
	*n = m;
	return 0;
}

static int ppk2_stop(struct ergon_instrument *inst, struct ergon_err *err)
{
	struct ppk2 *k = inst->priv;
	if (!k->started)
		return 0;
	k->started = 0;
	if (!k->disconnected)
		report_drops(inst, k);
	if (k->disconnected)
		return 0;
	uint8_t cmd = PPK2_CMD_AVERAGE_STOP;
	return send_cmd(k, &cmd, 1, err);
}

static void ppk2_close(struct ergon_instrument *inst)
{
	struct ppk2 *k = inst->priv;
	if (k == NULL)
		return;
	if (!k->disconnected) {
		struct ergon_err e = {0};
		if (k->started) {
			uint8_t cmd = PPK2_CMD_AVERAGE_STOP;
			(void)send_cmd(k, &cmd, 1, &e);
		}
		if (k->off_on_exit) {
			uint8_t dut[2] = {PPK2_CMD_DEVICE_RUNNING_SET, 0};
			(void)send_cmd(k, dut, 2, &e);
		}
		/* Let the last commands leave before the port closes. */
		if (k->port.fd >= 0)
			(void)tcdrain(k->port.fd);
	}
	free_ppk2(k);
	inst->priv = NULL;
}

static json_t *ppk2_stats(const struct ergon_instrument *inst)
{
	const struct ppk2 *k = inst->priv;
	if (k == NULL)
		return NULL;
	/* The host-clock check: what it saw, and a step still being
	 * confirmed when the stream ended (a loss in the last second cannot
	 * be told from a late host). */
	json_t *cc =
	    json_pack("{s:I, s:I, s:I, s:I, s:I, s:f}", "draining_reads",
		      (json_int_t)k->cc.draining_reads, "losses", (json_int_t)k->cc.losses,
		      "lost_samples", (json_int_t)k->cc.lost_samples, "inconclusive_steps",
		      (json_int_t)k->cc.inconclusive, "late_host_runs", (json_int_t)k->cc.cancelled,
		      "unconfirmed_step_samples", ppk2_clock_check_pending(&k->cc));
	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:b, s:s, s:o}", "port", k->port.path,
			 "samples", (json_int_t)k->samples, "dropped_samples",
			 (json_int_t)(k->dec.dropped + k->dec.skipped), "gaps",
			 (json_int_t)(k->dec.gaps + k->cc.losses), "spike_filtered_samples",
			 (json_int_t)k->dec.filtered, "bad_range_samples",
			 (json_int_t)k->dec.bad_range, "disconnected", k->disconnected, "backend",
#ifdef ERGON_HAVE_SERIALPORT
			 k->port.sp ? "libserialport" : "termios",
#else
			 "termios",
#endif
			 "host_clock_check", cc);
}

const struct ergon_instrument_driver ergon_instrument_ppk2 = {
    .name = "ppk2",
    .longname = "Nordic Power Profiler Kit II (USB CDC, 100 kSPS, D0-D7)",
    .scan = ppk2_scan,
    .open = ppk2_open,
    .start = ppk2_start,
    .read = ppk2_read,
    .stop = ppk2_stop,
    .close = ppk2_close,
    .stats = ppk2_stats,
};
