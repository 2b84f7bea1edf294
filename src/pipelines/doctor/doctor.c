/* doctor/: `ergon doctor`: what this machine can run.
 *
 * ergon doctor: probes of this machine (instruments, emulator, toolchain,
 * probes, serial ports, the vendor Python driver), each with a reason and
 * the fix, and which flows they allow. */
#include "ergon/doctor.h"

#include "ergon/instrument.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DOC_PATH_MAX 4096
#define DOC_CHILD_OUT_MAX (256 * 1024)
#define DOC_CHILD_TIMEOUT_MS 10000
#define DOC_TTY_MAX 256

/* PPK2 (Nordic Semiconductor, nRF Connect Power Profiler docs): USB
 * 1915:c00a, a CDC ACM serial port. */
#define PPK2_VID "1915"
#define PPK2_PID "c00a"

/* The first executable NAME in $PATH, into out; 0 when found. */
static int which(const char *name, char out[DOC_PATH_MAX])
{
	if (strchr(name, '/')) {
		snprintf(out, DOC_PATH_MAX, "%s", name);
		return access(out, X_OK) == 0 ? 0 : -1;
	}
	const char *path = getenv("PATH");
	if (path == NULL)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t l = strcspn(path, ":");
		if (l > 0) {
			int n = snprintf(out, DOC_PATH_MAX, "%.*s/%s", (int)l, path, name);
			struct stat st;
			if (n > 0 && n < DOC_PATH_MAX && stat(out, &st) == 0 &&
			    S_ISREG(st.st_mode) && access(out, X_OK) == 0)
				return 0;
		}
		path += l + (path[l] == ':');
	}
	return -1;
}

/* Run argv (argv[0] an absolute path) with stdin from /dev/null and stdout
 * + stderr captured (at most DOC_CHILD_OUT_MAX bytes, NUL-terminated, in
 * *text; caller frees). Returns the exit status, or -1 if it could not run
 * or ran past the timeout (killed). */
static int run_capture(char *const argv[], char **text)
{
	*text = NULL;
	int fds[2];
	if (pipe(fds) != 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, STDIN_FILENO);
		dup2(fds[1], STDOUT_FILENO);
		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		close(fds[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int killed = 0;
	for (;;) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		long ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (ms > DOC_CHILD_TIMEOUT_MS) {
			kill(pid, SIGKILL);
			killed = 1;
			break;
		}
		struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
		int pr = poll(&pfd, 1, 200);
		if (pr < 0 && errno != EINTR)
			break;
		if (pr <= 0)
			continue;
		char chunk[4096];
		ssize_t r = read(fds[0], chunk, sizeof(chunk));
		if (r <= 0)
			break;
		if (buf && len + (size_t)r + 1 > cap && cap < DOC_CHILD_OUT_MAX) {
			size_t ncap = cap * 4 > DOC_CHILD_OUT_MAX ? DOC_CHILD_OUT_MAX : cap * 4;
			char *nb = realloc(buf, ncap);
			if (nb) {
				buf = nb;
				cap = ncap;
			}
		}
		if (buf && len + (size_t)r + 1 <= cap) {
			memcpy(buf + len, chunk, (size_t)r);
			len += (size_t)r;
		}
	}
	close(fds[0]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (buf)
		buf[len] = '\0';
	*text = buf;
	if (killed || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static json_t *cap_new(const char *id, int ok, const char *reason, const char *fix)
{
	return json_pack("{s:s, s:b, s:s, s:s?}", "id", id, "ok", ok, "reason", reason, "fix",
			 ok ? NULL : fix);
}

static void add_tool(json_t *caps, const char *id, const char *exe, const char *what,
		     const char *fix)
{
	char path[DOC_PATH_MAX], reason[DOC_PATH_MAX + 256];
	int found = which(exe, path) == 0;
	if (found)
		snprintf(reason, sizeof(reason), "%s found: %s", exe, path);
	else
		snprintf(reason, sizeof(reason), "%s (%s) is not on PATH", exe, what);
	json_t *c = cap_new(id, found, reason, fix);
	if (found)
		json_object_set_new(c, "path", json_string(path));
	json_array_append_new(caps, c);
}

static void add_qemu(json_t *caps)
{
	char path[DOC_PATH_MAX], reason[DOC_PATH_MAX + 256];
	const char *fix = "sudo apt-get install qemu-system-arm (Debian 12 ships 7.2, which has "
			  "mps3-an547)";
	if (which("qemu-system-arm", path) != 0) {
		json_array_append_new(
		    caps, cap_new("qemu", 0,
				  "qemu-system-arm is not on PATH: `ergon profile --board "
				  "qemu-an547` cannot run",
				  fix));
		return;
	}
	char *argv[] = {path, "-M", "help", NULL};
	char *text = NULL;
	int rc = run_capture(argv, &text);
	int has = rc == 0 && text && strstr(text, "mps3-an547") != NULL;
	if (has)
		snprintf(reason, sizeof(reason), "%s emulates mps3-an547 (Cortex-M55)", path);
	else if (rc != 0)
		snprintf(reason, sizeof(reason), "%s -M help failed (exit %d)", path, rc);
	else
		snprintf(reason, sizeof(reason),
			 "%s does not list the mps3-an547 machine (too old)", path);
	free(text);
	json_t *c = cap_new("qemu", has, reason, fix);
	json_object_set_new(c, "path", json_string(path));
	json_array_append_new(caps, c);
}

static int read_line(const char *path, char *out, size_t cap)
{
	out[0] = '\0';
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return -1;
	if (fgets(out, (int)cap, f) == NULL)
		out[0] = '\0';
	fclose(f);
	out[strcspn(out, "\r\n")] = '\0';
	return 0;
}

/* Serial ports: /sys/class/tty/<name>/device with a USB ancestor carrying
 * idVendor/idProduct (the interface's parent). Adds one capability per
 * port and returns how many PPK2s are usable (readable and writable). */
static int add_serial(json_t *caps, const char *root)
{
	char dir[DOC_PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/sys/class/tty", root);
	DIR *d = opendir(dir);
	int ppk2 = 0, n = 0;
	json_t *ports = json_array();
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)) != NULL && n < DOC_TTY_MAX) {
			if (e->d_name[0] == '.')
				continue;
			char p[DOC_PATH_MAX], real[DOC_PATH_MAX];
			int w = snprintf(p, sizeof(p), "%s/%s/device", dir, e->d_name);
			if (w < 0 || w >= (int)sizeof(p) || realpath(p, real) == NULL)
				continue;
			/* Walk up from the interface to the device with idVendor. */
			char vid[16] = "", pid[16] = "", prod[128] = "", cur[DOC_PATH_MAX];
			snprintf(cur, sizeof(cur), "%s", real);
			for (int up = 0; up < 4 && vid[0] == '\0'; up++) {
				char f[DOC_PATH_MAX + 32];
				snprintf(f, sizeof(f), "%s/idVendor", cur);
				if (read_line(f, vid, sizeof(vid)) == 0) {
					snprintf(f, sizeof(f), "%s/idProduct", cur);
					read_line(f, pid, sizeof(pid));
					snprintf(f, sizeof(f), "%s/product", cur);
					read_line(f, prod, sizeof(prod));
					break;
				}
				char *slash = strrchr(cur, '/');
				if (slash == NULL || slash == cur)
					break;
				*slash = '\0';
			}
			if (vid[0] == '\0')
				continue; /* not a USB serial port (a UART of the SoC) */
			n++;
			char dev[DOC_PATH_MAX];
			snprintf(dev, sizeof(dev), "%s/dev/%s", root, e->d_name);
			int rw = access(dev, R_OK | W_OK) == 0;
			int is_ppk2 = strcmp(vid, PPK2_VID) == 0 && strcmp(pid, PPK2_PID) == 0;
			if (is_ppk2 && rw)
				ppk2++;
			char reason[DOC_PATH_MAX + 256];
			snprintf(reason, sizeof(reason), "/dev/%s: USB %s:%s%s%s%s, %s", e->d_name,
				 vid, pid, prod[0] ? " (" : "", prod, prod[0] ? ")" : "",
				 rw ? "readable and writable"
				    : (access(dev, F_OK) == 0 ? "no read/write permission"
							      : "no device node"));
			char id[300];
			snprintf(id, sizeof(id), "serial:%s", e->d_name);
			json_t *c =
			    cap_new(id, rw, reason,
				    "sudo usermod -aG dialout $USER (then log in again), or a udev "
				    "rule granting the port to your user");
			json_object_set_new(c, "usb_id", json_sprintf("%s:%s", vid, pid));
			if (is_ppk2)
				json_object_set_new(c, "device", json_string("Nordic PPK2"));
			json_array_append_new(ports, c);
		}
		closedir(d);
	}
	if (n == 0)
		json_array_append_new(
		    caps, cap_new("serial", 0, "no USB serial port found (/sys/class/tty)",
				  "connect the instrument or board over USB; `dmesg` shows whether "
				  "the kernel saw it"));
	else
		json_array_extend(caps, ports);
	json_decref(ports);
	return ppk2;
}

static int add_python_driver(json_t *caps, const char *python_opt)
{
	const char *py = python_opt ? python_opt : getenv("ERGON_PYTHON");
	if (py == NULL || *py == '\0')
		py = "python3";
	char path[DOC_PATH_MAX], reason[DOC_PATH_MAX + 512];
	const char *fix = "pip install pyjoulescope_driver (the vendor's package, not in Debian) "
			  "into the Python that ERGON_PYTHON names";
	if (which(py, path) != 0) {
		snprintf(reason, sizeof(reason),
			 "%s not found: the Joulescope bridge needs Python 3 with "
			 "pyjoulescope_driver",
			 py);
		json_array_append_new(caps, cap_new("python.pyjoulescope_driver", 0, reason,
						    "sudo apt-get install python3, or set "
						    "ERGON_PYTHON"));
		return 0;
	}
	char *argv[] = {path, "-c",
			"import pyjoulescope_driver as m; print(getattr(m, '__version__', '?'))",
			NULL};
	char *text = NULL;
	int rc = run_capture(argv, &text);
	int ok = rc == 0;
	/* The first line is the version on success; on failure the last
	 * non-empty line is the exception ("ModuleNotFoundError: ..."). */
	const char *shown = text;
	if (text && ok) {
		text[strcspn(text, "\n")] = '\0';
	} else if (text) {
		size_t l = strlen(text);
		while (l > 0 && (text[l - 1] == '\n' || text[l - 1] == '\r'))
			text[--l] = '\0';
		const char *nl = strrchr(text, '\n');
		shown = nl ? nl + 1 : text;
	}
	if (ok)
		snprintf(reason, sizeof(reason), "%s imports pyjoulescope_driver %s", path,
			 shown ? shown : "?");
	else
		snprintf(reason, sizeof(reason), "%s cannot import pyjoulescope_driver%s%.300s",
			 path, shown && *shown ? ": " : "", shown ? shown : "");
	free(text);
	json_t *c = cap_new("python.pyjoulescope_driver", ok, reason, fix);
	json_object_set_new(c, "python", json_string(path));
	json_array_append_new(caps, c);
	return ok;
}

/* The fix for an instrument whose scan found nothing usable: the module,
 * the package, the group or the udev rule; NULL: the generic pointer. */
static const char *instrument_fix(const char *driver, int code)
{
	static const struct {
		const char *driver, *missing, *denied;
	} fixes[] = {
	    {"hwmon",
	     "load the monitor's kernel driver (e.g. `modprobe ina3221`, or enable it in the "
	     "board's device tree); in a container, bind-mount the host's /sys",
	     "read access to /sys/class/hwmon/*/curr*_input and in*_input: run as a user who "
	     "has it, or a udev rule SUBSYSTEM==\"hwmon\", MODE=\"0444\""},
	    {"rapl",
	     "`modprobe intel_rapl_msr` (Intel; AMD: `modprobe amd_energy` or a kernel with "
	     "RAPL for AMD); in a VM or container RAPL is usually not passed through",
	     "energy_uj is root-only since Linux 5.10: a udev rule SUBSYSTEM==\"powercap\", "
	     "ACTION==\"add\", RUN+=\"/bin/chmod 0444 %S%p/energy_uj\", or run as root"},
	    {"nvml",
	     "install the NVIDIA driver with its NVML library (Debian: `apt install "
	     "nvidia-driver libnvidia-ml1`, from non-free)",
	     "your user needs access to /dev/nvidia*: add it to the video group "
	     "(`sudo usermod -aG video $USER`, then log in again)"},
	    {"joulescope",
	     "`pip install pyjoulescope_driver` (the vendor's package, not in Debian) into the "
	     "Python that ERGON_PYTHON names (default python3), then plug the Joulescope in",
	     "a udev rule for the Joulescope (the vendor's 72-joulescope.rules into "
	     "/etc/udev/rules.d/, then `udevadm control --reload`)"},
	    {"ppk2",
	     "plug the PPK2 into its USB DATA/POWER port with a data cable; `dmesg` shows "
	     "whether the kernel saw it (a /dev/ttyACM* port)",
	     "add your user to the dialout group (`sudo usermod -aG dialout $USER`, then log "
	     "in again)"},
	};
	for (size_t i = 0; i < sizeof fixes / sizeof fixes[0]; i++)
		if (strcmp(driver, fixes[i].driver) == 0)
			return code == ERGON_EACCES ? fixes[i].denied : fixes[i].missing;
	return NULL;
}

/* Instruments through the drivers' own scans; returns how many measuring
 * (not synthetic, not replay) instruments are usable. */
static int add_instruments(json_t *caps, const char *sysfs_root)
{
	struct ergon_instrument_options io = {0};
	io.sysfs_root = sysfs_root;
	size_t n;
	const struct ergon_instrument_driver *const *d = ergon_instrument_drivers(&n);
	int measuring = 0;
	for (size_t i = 0; i < n; i++) {
		char id[96], reason[ERGON_ERR_MSG_MAX + 128];
		snprintf(id, sizeof(id), "instrument:%s", d[i]->name);
		if (d[i]->scan == NULL) {
			snprintf(reason, sizeof(reason), "%s needs no device (%s)", d[i]->name,
				 d[i]->longname);
			json_t *c = cap_new(id, 1, reason, NULL);
			json_object_set_new(c, "measures", json_false());
			json_array_append_new(caps, c);
			continue;
		}
		json_t *found = NULL;
		struct ergon_err e = {0};
		int ok = d[i]->scan(&io, &found, &e) == 0 && found && json_array_size(found) > 0;
		if (ok)
			snprintf(reason, sizeof(reason), "%zu found", json_array_size(found));
		else
			snprintf(reason, sizeof(reason), "%s",
				 e.msg[0] ? e.msg : "no device found");
		const char *fix = instrument_fix(d[i]->name, e.code);
		json_t *c = cap_new(id, ok, reason,
				    fix                       ? fix
				    : e.code == ERGON_EACCES ? "grant read access (udev rule or group), "
							       "or run as a user who has it"
							     : "`ergon instruments` lists what was "
							       "looked for and where");
		json_object_set_new(c, "measures", json_true());
		if (ok) {
			json_object_set_new(c, "found", found);
			measuring++;
		} else {
			json_decref(found);
			json_object_set_new(c, "error", json_string(ergon_strerror_name(e.code)));
		}
		json_array_append_new(caps, c);
	}
	return measuring;
}

static int cap_ok(json_t *caps, const char *id)
{
	size_t i;
	json_t *c;
	json_array_foreach(caps, i, c)
	{
		const char *cid = json_string_value(json_object_get(c, "id"));
		if (cid && strcmp(cid, id) == 0)
			return json_is_true(json_object_get(c, "ok"));
	}
	return 0;
}

int ergon_doctor_collect(const struct ergon_doctor_options *o, json_t **out, struct ergon_err *err)
{
	*out = NULL;
	const char *root = o && o->sysfs_root ? o->sysfs_root : getenv("ERGON_SYSFS_ROOT");
	json_t *caps = json_array();
	json_t *doc = json_pack("{s:s, s:i, s:o}", "schema", "ergon.doctor", "schema_version", 1,
				"capabilities", caps);
	if (doc == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "out of memory");
	int measuring = add_instruments(caps, root);
	add_qemu(caps);
	add_tool(caps, "arm-toolchain", "arm-none-eabi-gcc", "the Arm GNU toolchain",
		 "sudo apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi");
	add_tool(caps, "jlink", "JLinkExe", "SEGGER J-Link Commander",
		 "install the J-Link Software and Documentation Pack from segger.com (not in "
		 "Debian); it puts JLinkExe in /usr/bin");
	add_tool(caps, "openocd", "openocd", "Open On-Chip Debugger",
		 "sudo apt-get install openocd");
	int ppk2 = add_serial(caps, root ? root : "");
	int js = add_python_driver(caps, o ? o->python : NULL);
	int probe = cap_ok(caps, "jlink") || cap_ok(caps, "openocd");

	char why[1024];
	json_t *flows = json_object();
	json_object_set_new(doc, "flows", flows);
	/* run: a measuring instrument (the synthetic one is not a measurement). */
	snprintf(why, sizeof(why), "%s",
		 measuring ? "a measuring instrument is usable (see instrument:*)"
			   : "no measuring instrument is usable (hwmon, rapl, nvml, ...); only "
			     "the synthetic instrument would run, and it measures nothing");
	json_object_set_new(flows, "run",
			    json_pack("{s:b, s:s, s:[s]}", "ok", measuring > 0, "reason", why,
				      "needs", "instrument:* (measuring)"));
	/* profile-power on a real board, external mode: a probe to flash and
	 * reset, and a host instrument with a live stream. */
	if (probe && (js || ppk2))
		snprintf(why, sizeof(why),
			 "a debug probe tool and a power instrument (%s) are "
			 "available",
			 js ? "Joulescope through pyjoulescope_driver" : "PPK2 serial port");
	else
		snprintf(why, sizeof(why), "%s%s%s",
			 probe ? "" : "no debug probe tool (JLinkExe or openocd)",
			 !probe && !(js || ppk2) ? "; " : "",
			 js || ppk2 ? ""
				    : "no power instrument (pyjoulescope_driver for the Joulescope "
				      "bridge, or a PPK2 serial port)");
	json_object_set_new(flows, "profile-power",
			    json_pack("{s:b, s:s, s:[s,s,s,s]}", "ok", probe && (js || ppk2),
				      "reason", why, "needs", "jlink|openocd",
				      "python.pyjoulescope_driver|serial:* (PPK2)", "note",
				      "internal mode (on-board INA228) needs only the probe"));
	int qemu = cap_ok(caps, "qemu"), tc = cap_ok(caps, "arm-toolchain");
	snprintf(why, sizeof(why), "%s",
		 qemu && tc ? "QEMU emulates mps3-an547 and the Arm toolchain builds the firmware"
		 : qemu	    ? "no arm-none-eabi-gcc: the example firmware cannot be built"
		 : tc	    ? "no usable qemu-system-arm"
			    : "neither qemu-system-arm nor arm-none-eabi-gcc");
	json_object_set_new(flows, "profile-qemu",
			    json_pack("{s:b, s:s, s:[s,s]}", "ok", qemu && tc, "reason", why,
				      "needs", "qemu", "arm-toolchain"));
	*out = doc;
	return 0;
}
