#!/usr/bin/env bash
# The key walk (issue 37): every configuration key, taken from the key
# table itself (`ergon config show --json`, one entry per row of
# src/pipelines/config/config.c), is changed from its default on the
# virtual bench (`--board sim --power`), and must either
#   - be refused before any stage with a reason that names the key
#     (exit 2: it cannot act on this board), or
#   - change the dry run's plan, or
#   - change the bench's run: summary.json (without the configuration's
#     own echo and the volatile fields), the streams the bench's firmware
#     printed, or the files written.
# A key that is accepted and changes none of these fails the test: a new
# key is walked with a value derived from its type and range (the
# validator's own error message gives the range or the choices), and
# VALUES below only names a value where a free string needs one.
set -u
. "$(dirname "$0")/run_lib.sh"
python3 - "$ERGON_BIN" "$TMP" <<'PY'
import json, os, re, shutil, subprocess, sys
E, TMP = sys.argv[1], sys.argv[2]
# A fixed window of 1100 inferences (1.1 s, over the 1 s floor) keeps each bench run short (the auto
# window's 5 s of simulated time would cost seconds per key under ASan).
BASE = ["--board", "sim", "--power", "--set", "profiling.window_mode=fixed",
        "--set", "profiling.iterations=1100"]
# Free strings (and names) the type cannot suggest; everything else is
# derived. A value here is what a user would write, not a no-op.
VALUES = {
    "target.board": "sim",  # the walk's board; its change is walked below
    "target.jlink_serial": "000123456",
    "target.usb_port": "/dev/ttyACM0",
    "target.probe": "gdb://127.0.0.1:2331",
    "profiling.pmu_counters.cpu": "memory",
    "power.serial": "ABC123",
    "power.ina228.calibration_id": "walk-calibration",
    "output.dir": "walk-out",
    "power.mode": "internal",
    # The preset that fills the shunt (the Click's only moves the
    # firmware's address and the bench's strap together).
    "power.ina228.board": "adafruit-ina228",
}
# Where a key acts only in one mode of the bench, it is walked there: the
# on-board INA228's keys in internal mode (with the bench's fitted shunt).
# (0.5 Ohm rated for 20 mA, as the bench's INA228 scenarios fit it).
INTERNAL = ["--set", "power.mode=internal", "--set", "power.ina228.shunt_ohms=0.5",
            "--set", "power.ina228.max_current_a=0.02"]
def context(k):
    if k == "power.ina228.board":
        # Internal mode with no shunt set: refused without a preset, run
        # with the one the Adafruit preset fills (0.015 Ohm).
        return BASE + INTERNAL[:2] + INTERNAL[4:]
    if k.startswith("power.ina228.") and k != "power.ina228.shunt_ohms":
        return BASE + INTERNAL
    if k == "target.heartbeat.every_ms":
        # The time heartbeat fills silences: with the operator heartbeat
        # off it is the only one.
        return BASE + ["--set", "target.heartbeat.every_n_ops=0"]
    if k == "power.mode":
        return BASE + INTERNAL[2:]
    if k == "power.ina228.shunt_ohms":
        return BASE + INTERNAL[:2] + INTERNAL[4:]
    return BASE
# Keys the walk still finds accepted and without an effect on the virtual
# bench (issue 37, open): each must be made to act or be refused with a
# reason, then removed from here. The walk fails when one of these starts
# to act (the list must stay true) and when any other key is ignored.
GAPS = {
}

def run(args, cwd=None):
    p = subprocess.run([E] + args, capture_output=True, text=True, cwd=cwd)
    return p.returncode, p.stdout, p.stderr

rc, out, err = run(["config", "show", "--json"] + BASE)
assert rc == 0, err
show = json.loads(out)
keys = show if isinstance(show, dict) and "target.board" in show else show.get("keys", show.get("config"))
names = list(keys.keys())
assert len(names) >= 50, names

def default_of(k):
    return keys[k]["value"]

def probe_error(k, text):
    rc, out, err = run(["config", "show", "--set", "%s=%s" % (k, text)])
    return err

def derive(k):
    """Values other than the one at hand, from the type and the validator:
    for a number, twice it, half of it and one more, in that order (a
    step of one can fall inside the same whole step of the firmware)."""
    if k in VALUES:
        return [VALUES[k]]
    d = default_of(k)
    err = probe_error(k, "999999999999999")
    m = re.search(r"use a value in \[([^,]+), ([^\]]+)\]", err)
    if m and not m.group(1).startswith("0x") and isinstance(d, int) and not isinstance(d, bool):
        lo, hi = float(m.group(1)), float(m.group(2))
        c = [v for v in (d * 2, d // 2, d + 1, d - 1) if lo <= v <= hi and v != d]
        return [str(v) for v in dict.fromkeys(c)]
    return [derive1(k)]

def derive1(k):
    d = default_of(k)
    if isinstance(d, bool):
        return "false" if d else "true"
    err = probe_error(k, "@@walk@@")
    m = re.search(r"use one of ([^;\n]+)", err)
    if m:
        opts = [o.strip().rstrip(".") for o in m.group(1).split(",")]
        for o in opts:
            if o != str(d) and o != "":
                return o
    err = probe_error(k, "999999999999999")
    m = re.search(r"use one of ([0-9, ]+)", err)
    if m:
        for o in m.group(1).split(","):
            if o.strip() != str(d):
                return o.strip()
    m = re.search(r"use a value in \[([^,]+), ([^\]]+)\]", err)
    if m:
        lo, hi = m.group(1), m.group(2)
        if lo.startswith("0x"):
            v = int(d, 16) if isinstance(d, str) else d
            v = v + 1 if v + 1 <= int(hi, 16) else v - 1
            return hex(v)
        lo, hi = float(lo), float(hi)
        if d is None:
            v = lo * 2 if lo > 0 else 1.0
            if v > hi: v = hi
        elif isinstance(d, int):
            v = d + 1 if d + 1 <= hi else d - 1
        else:
            v = d * 1.25 if d * 1.25 <= hi else d * 0.8
        if v == int(v) and (isinstance(d, int) or d is None and float(v).is_integer()):
            return str(int(v))
        return repr(float(v))
    raise SystemExit("FAIL - %s: no value could be derived (default %r): %s" % (k, d, err.strip()))

VOLATILE = {"config", "report_id", "tool", "measurement_time", "capture_start_utc", "conditions",
            "wall_s", "elapsed_s", "host_envelope", "duration_wall_s"}

def norm(o, out_dir):
    if isinstance(o, dict):
        return {k: norm(v, out_dir) for k, v in o.items() if k not in VOLATILE}
    if isinstance(o, list):
        return [norm(v, out_dir) for v in o]
    if isinstance(o, str):
        return o.replace(out_dir, "@OUT")
    return o

def plan_of(args):
    rc, out, err = run(["profile"] + args + ["--dry-run", "--json"])
    if rc != 0:
        return rc, err, None
    return rc, err, json.loads(out)["plan"]

def bench(args, tag):
    cwd = os.path.join(TMP, tag)
    os.makedirs(cwd)
    rc, out, err = run(["profile"] + args, cwd=cwd)
    files, streams, summary = [], {}, None
    for root, dirs, fs in os.walk(cwd):
        for f in fs:
            p = os.path.join(root, f)
            rel = os.path.relpath(p, cwd)
            files.append(rel)
            if f == "summary.json":
                summary = norm(json.load(open(p)), cwd)
            elif f.endswith(".log"):
                streams[rel] = open(p, errors="replace").read().replace(cwd, "@OUT")
    shutil.rmtree(cwd)
    return {"rc": rc, "files": sorted(files), "summary": summary, "streams": streams}

def walk(k, v, ctx, base_plan_k, base_run_k, i):
    """How key k set to v acts (a text starting FAIL when it does not)."""
    args = ctx + ["--set", "%s=%s" % (k, v)]
    rc, err, plan = plan_of(args)
    tag = "%s = %s" % (k, v)
    if rc == 1 and k in err:
        return "refused (the plan), %s: %s" % (tag, err.strip().splitlines()[0][:150])
    if rc == 2:
        if k in err:
            return "refused, %s: %s" % (tag, err.strip().splitlines()[0][:150])
        return "FAIL (exit 2 without naming the key: %s)" % err.strip()[:200]
    if rc != 0:
        return "FAIL (dry run exit %d: %s)" % (rc, err.strip()[:200])
    if plan != base_plan_k:
        return "plan, " + tag
    r = bench(args, "k%d-%s" % (i, k))
    if r["summary"] != base_run_k["summary"]:
        return "run: summary.json, " + tag
    if r["streams"] != base_run_k["streams"]:
        return "run: the firmware's stream, " + tag
    if r["files"] != base_run_k["files"] or r["rc"] != base_run_k["rc"]:
        return "run: files written / exit %d, %s" % (r["rc"], tag)
    return "FAIL (accepted with %s and nothing changed)" % v

_, _, base_plan = plan_of(BASE)
assert base_plan is not None
base_run = bench(BASE, "base")
assert base_run["rc"] == 0 and base_run["summary"] is not None, base_run["rc"]
fails = 0
how = {}
only = os.environ.get("ERGON_WALK_ONLY")  # a regex, to walk a few keys by hand
if only:
    names = [k for k in names if re.search(only, k)]
for k in names:
    if k in ("target.board",):
        # The board is the walk's context; another board's plan differs
        # wholesale (its lifecycle, pins, images).
        rc, err, plan = plan_of(["--board", "qemu-an547"] + BASE[2:])
        how[k] = "plan (another board)" if rc == 0 and plan != base_plan else "FAIL"
        continue
    ctx = context(k)
    if ctx is not BASE:
        base_plan_k = plan_of(ctx)[2]
        base_run_k = bench(ctx, "ctx-" + k)
    else:
        base_plan_k, base_run_k = base_plan, base_run
    for i, v in enumerate(derive(k)):
        how[k] = walk(k, v, ctx, base_plan_k, base_run_k, i)
        if not how[k].startswith("FAIL (accepted"):
            break
for k in names:
    ok = not how[k].startswith("FAIL")
    if k in GAPS:
        if ok:
            how[k] = "FAIL (listed in GAPS but now acts: %s; remove it from GAPS)" % how[k]
        else:
            how[k] = "known gap: " + GAPS[k]
        ok = not how[k].startswith("FAIL")
    fails += not ok
    print("%s - %s: %s" % ("ok  " if ok else "FAIL", k, how[k]))
for k in GAPS:
    if k not in keys:
        fails += 1
        print("FAIL - GAPS names %s, which is not a key" % k)
print("%d keys walked, %d known gaps" % (len(names), sum(1 for k in names if k in GAPS)))
print("%d keys walked, %d failed" % (len(names), fails))
sys.exit(1 if fails else 0)
PY
rc=$?
[ "$rc" = 0 ] || fails=1
finish
