#!/usr/bin/env python3
"""The Joulescope bridge's throughput at high statistics rates, per part
and end to end (docs/PERFORMANCE.md "bridge"), each format against the
other in the same run:

1. the bridge alone: its statistics callback -> the line written (to
   /dev/null), fed prepared vendor value dicts in a loop (the feed loop's
   own cost measured and taken off), CPU microseconds per packet, for
   `--stats-format line` (one json.dumps line per packet) and `block`
   (stats_block, the default);
2. the stub pyjoulescope_driver alone (what it costs to simulate the
   live-layers test's target, tests/support/pyjoulescope_stub), CPU us
   per packet: part of every chain figure with the stub, not of a real
   host;
3. the chain: `ergon record --instrument joulescope` at 100000 packets a
   second for DURATION s of the sample clock, with a replaying driver
   (bench/js_replay: no simulation) and with the stub, unpaced (as fast as
   the chain takes them): packets per wall second, and the CPU of ergon
   and the bridge together per packet.

  bench_js_bridge.py ERGON_BIN [PACKETS] [DURATION_S]   (200000, 3)
ergon's decoding alone is bench/bench_bridge_decode.c."""
import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
BRIDGE = os.path.join(SRC, "bridges", "joulescope_bridge.py")
STUB = os.path.join(SRC, "tests", "support", "pyjoulescope_stub")
REPLAY = os.path.join(HERE, "js_replay")
# The live-layers test's Joulescope (tests/functional/test_profile_live_layers.sh).
LAYERS_STUB = {"pace": False, "voltage_v": 3.0, "idle_a": 0.001, "active_a": 0.002,
               "first_gate_s": 0.2, "gate_s": 1.202, "period_s": 100,
               "layers": {"lead_s": 0.001, "layer_s": [0.0005, 0.00025, 0.00025],
                          "layer_a": [0.006, 0.004, 0.005], "inferences": 1200}}


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class NoDevice:
    def publish(self, *a):
        pass

    def subscribe(self, *a):
        pass


def feed(bridge, n, value):
    """Feed n packets of 10 samples; CPU seconds."""
    ts, tr = value["time"]["samples"], value["time"]["range"]
    q, e = value["accumulators"]["charge"], value["accumulators"]["energy"]
    cb = bridge.on_stats if bridge else (lambda t, x: None)
    t0 = time.process_time()
    for k in range(n):
        sid = 1000000 + 10 * k
        ts["value"] = [sid, sid + 10]
        tr["value"] = [sid * 1e-6, (sid + 10) * 1e-6]
        q["value"] = 2e-8 * k
        e["value"] = 6e-8 * k
        cb("t", value)
    if bridge:
        with bridge.lock:
            bridge.flush(True)
    return time.process_time() - t0


def bridge_alone(n):
    jsb = load(BRIDGE, "joulescope_bridge")
    sys.path.insert(0, STUB)
    stub = load(os.path.join(STUB, "pyjoulescope_driver", "__init__.py"), "stub_driver")
    value = stub._stats_value(1000000, 10, 1000000, 0.002, 3.0, 0.0, 0.0)
    base = feed(None, n, value)
    out = {}
    for fmt in ("line", "block", "line", "block"):
        args = argparse.Namespace(stats_rate=100000.0, heartbeat_s=30.0, stats_format=fmt)
        b = jsb.Bridge(NoDevice(), "u/js220/000415", args, True)
        b.realtime = False
        b.streaming = True
        for t in b.tracks:  # the inputs cover everything, low
            t.add(0, 1.0, b"\x00")
            t.end = 1 << 62
        b.covered = 1 << 62
        saved, sys.stdout = sys.stdout, open(os.devnull, "w")
        try:
            dt = feed(b, n, value)
        finally:
            sys.stdout.close()
            sys.stdout = saved
        out.setdefault(fmt, []).append((dt - base) / n * 1e6)
    print("1. bridge alone (%d packets, CPU): feed loop %.2f us/packet (taken off); line %s "
          "us/packet; block %s us/packet; line/block %.1f" % (
              n, base / n * 1e6, " / ".join("%.2f" % x for x in out["line"]),
              " / ".join("%.2f" % x for x in out["block"]),
              min(out["line"]) / min(out["block"])))


def stub_alone(n):
    os.environ["ERGON_JS_STUB"] = json.dumps(LAYERS_STUB)
    sys.path.insert(0, STUB)
    stub = load(os.path.join(STUB, "pyjoulescope_driver", "__init__.py"), "stub_driver2")
    d = stub.Driver()
    path = "u/js220/000415"
    d.open(path)
    dev = d._open[path]
    got = [0]

    def on_stats(topic, value):
        got[0] += 1
        if got[0] >= n:
            dev.ctrl = 0
    d.subscribe(path + "/s/stats/value", "pub", on_stats)
    for i in (0, 1):
        d.subscribe(path + "/s/gpi/%d/!data" % i, "pub", lambda t, v: None)
        d.publish(path + "/s/gpi/%d/ctrl" % i, 1)
    d.publish(path + "/s/stats/scnt", 10)
    t0 = time.process_time()
    dev.ctrl = 1
    dev.run_stats()
    dt = time.process_time() - t0
    print("2. stub alone (the live-layers target, CPU): %.2f us/packet (%d packets)"
          % (dt / got[0] * 1e6, got[0]))


def chain(ergon, duration_s):
    tmp = tempfile.mkdtemp(prefix="bench_js_bridge.")
    rows = []
    for driver, pp, stub_cfg in (("replay", REPLAY, None), ("stub", STUB, LAYERS_STUB)):
        for fmt in ("line", "block", "line", "block"):
            wrap = os.path.join(tmp, "wrap_%s.py" % fmt)
            with open(wrap, "w") as f:
                f.write("import os, sys\nos.execvp(sys.executable, [sys.executable, %r] + "
                        "sys.argv[1:] + ['--heartbeat-s', '30', '--stats-format', %r])\n"
                        % (BRIDGE, fmt))
            env = dict(os.environ, PYTHONPATH=pp, ERGON_JOULESCOPE_BRIDGE=wrap)
            if stub_cfg:
                env["ERGON_JS_STUB"] = json.dumps(stub_cfg)
            out = os.path.join(tmp, "r.jls")
            if os.path.exists(out):
                os.unlink(out)
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.monotonic()
            p = subprocess.run([ergon, "record", "--instrument", "joulescope",
                                "--instrument-opt", "stats_rate_hz=100000", "--duration-s",
                                str(duration_s), "--out", out], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            wall = time.monotonic() - t0
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            if p.returncode != 0:
                sys.exit("ergon record (%s, %s) failed: %s" % (driver, fmt,
                                                             p.stderr.decode()[-600:]))
            n = duration_s * 100000
            cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
            rows.append((driver, fmt, n / wall, cpu / n * 1e6))
            print("3. chain: %-6s %-5s %7.0f packets/s (wall %.2f s), ergon + bridge CPU "
                  "%.2f us/packet" % (driver, fmt, n / wall, wall, cpu / n * 1e6))
            sys.stdout.flush()
    for driver in ("replay", "stub"):
        line = max(r[2] for r in rows if r[0] == driver and r[1] == "line")
        block = max(r[2] for r in rows if r[0] == driver and r[1] == "block")
        print("   %s: block/line throughput %.2f (best of two each)" % (driver, block / line))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ergon")
    ap.add_argument("packets", nargs="?", type=int, default=200000)
    ap.add_argument("duration_s", nargs="?", type=int, default=3)
    a = ap.parse_args()
    print("host: %s; load average %s" % (os.uname().machine,
                                           open("/proc/loadavg").read().split()[:3]))
    bridge_alone(a.packets)
    stub_alone(a.packets // 2)
    chain(a.ergon, a.duration_s)
    print("load average after: %s" % open("/proc/loadavg").read().split()[:3])


if __name__ == "__main__":
    main()
