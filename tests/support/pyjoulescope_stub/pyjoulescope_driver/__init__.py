"""A stub of the vendor's pyjoulescope_driver for ergon's tests.

It follows the vendor's public API as far as ergon's Joulescope bridge uses
it (Driver: device_paths, open, close, publish, subscribe, unsubscribe,
finalize, context manager; callbacks fn(topic, value) on another thread;
the statistics value dict of the vendor's binding: time.samples,
time.sample_freq, time.range, signals.{current,voltage,power}.{avg,std,
min,max}, accumulators.{charge,energy}) and simulates a JS220:

- a current waveform at a fixed voltage: idle_a, and active_a while
  INPUT0 (the gate) is high: gate windows of gate_s every period_s from
  first_gate_s;
- INPUT1 (the target's state line) high from ready_s;
- OUTPUT0 (GO) through s/gpo/+/!set and !clr;
- dropped sample ids: the packets listed in drop_packets never arrive;
- an unplug after unplug_after_s: statistics stop, '@/!remove' subscribers
  are called, later publishes raise.

A device path with "/js110/" simulates a JS110 instead: sensor-side
statistics on s/sstats/value at a fixed 2 Hz from open (no standard
deviation), host-side statistics on s/stats/value when s/stats/ctrl is on
(s/stats/scnt counted at 2 MHz), outputs through s/gpo/N/value, current
range through s/i/range/select; no input snapshots.

Configuration: the JSON object in $ERGON_JS_STUB (inline JSON or @path).
Every publish is appended to $ERGON_JS_STUB_LOG (one JSON line each) when
set, so that tests can check what the bridge asked for. Nothing here is
the vendor's code; it is written from the API facts listed above.
"""
import json
import os
import threading
import time

__version__ = "0.0-ergon-stub"
ERGON_STUB = True

_DEFAULTS = {
    "devices": ["u/js220/000415"],
    "voltage_v": 3.3,
    "idle_a": 0.005,
    "active_a": 0.030,
    "first_gate_s": 0.3,
    "gate_s": 0.6,
    "period_s": 1.0,
    "ready_s": 0.1,
    "drop_packets": [],
    "unplug_after_s": None,
    "sample_freq": 1000000,
    "first_sample_id": 1000000,
}


def _config():
    raw = os.environ.get("ERGON_JS_STUB", "")
    cfg = dict(_DEFAULTS)
    if raw.startswith("@"):
        with open(raw[1:]) as f:
            raw = f.read()
    if raw:
        cfg.update(json.loads(raw))
    return cfg


class _Device:
    def __init__(self, driver, path, cfg):
        self.driver = driver
        self.path = path
        self.cfg = cfg
        self.scnt = 1000
        self.ctrl = 0
        self.gpo = 0
        self.range_mode = "off"
        self.t0 = None  # host time of simulated t = 0 (stats start)
        self.thread = None
        self.unplugged = False
        self.sstats_on = False
        self.js110 = "/js110/" in path
        self.sstats = None  # JS110 sensor-side statistics thread

    # The simulated signals at simulated time t (seconds since stats on).
    def gate(self, t):
        c = self.cfg
        if t < c["first_gate_s"]:
            return 0
        return 1 if (t - c["first_gate_s"]) % c["period_s"] < c["gate_s"] else 0

    def inputs(self, t):
        return self.gate(t) | ((1 if t >= self.cfg["ready_s"] else 0) << 1)

    def sim_t(self):
        return 0.0 if self.t0 is None else time.monotonic() - self.t0

    def run_stats(self, sensor_side=False):
        c = self.cfg
        if self.js110:
            freq = 2000000
            span_s = 0.5 if sensor_side else self.scnt / 2e6
            topic = self.path + ("/s/sstats/value" if sensor_side else "/s/stats/value")
        else:
            freq = c["sample_freq"]
            span_s = self.scnt / 1e6  # scnt counts at 1 MHz on a JS220
            topic = self.path + "/s/stats/value"
        spp = int(round(span_s * freq))
        k = 0
        charge = energy = 0.0
        t0 = time.monotonic()
        running = (lambda: self.sstats_on) if sensor_side else (lambda: self.ctrl)
        while running() and not self.unplugged:
            if c["unplug_after_s"] is not None and self.sim_t() >= c["unplug_after_s"]:
                self.unplugged = True
                self.driver._deliver("@/!remove", self.path)
                return
            due = int((time.monotonic() - t0) / span_s)
            while k < due and running():
                t_mid = (k + 0.5) * span_s
                i = c["active_a"] if self.gate(t_mid) else c["idle_a"]
                v = c["voltage_v"]
                charge += i * span_s
                energy += i * v * span_s
                if k not in c["drop_packets"]:
                    sid = c["first_sample_id"] + k * spp
                    value = _stats_value(sid, spp, freq, i, v, charge, energy)
                    if sensor_side:
                        for sig in value["signals"].values():
                            del sig["std"]
                    self.driver._deliver(topic, value)
                k += 1
            time.sleep(0.005)


def _sig(avg, units):
    return {"avg": {"value": avg, "units": units}, "std": {"value": 0.0, "units": units},
            "min": {"value": avg, "units": units}, "max": {"value": avg, "units": units},
            "p2p": {"value": 0.0, "units": units}}


def _stats_value(sid, spp, freq, i, v, charge, energy):
    t_start = sid / freq
    return {
        "time": {
            "samples": {"value": [sid, sid + spp], "units": "samples"},
            "sample_freq": {"value": freq, "units": "Hz"},
            "range": {"value": [t_start, t_start + spp / freq], "units": "s"},
            "delta": {"value": spp / freq, "units": "s"},
        },
        "signals": {"current": _sig(i, "A"), "voltage": _sig(v, "V"),
                    "power": _sig(i * v, "W")},
        "accumulators": {"charge": {"value": charge, "units": "C"},
                         "energy": {"value": energy, "units": "J"}},
        "source": "sensor",
    }


class Driver:
    """The subset of the vendor's Driver that ergon's bridge uses."""

    def __init__(self):
        self._cfg = _config()
        self._subs = {}  # topic -> [fn]
        self._lock = threading.Lock()
        self._open = {}
        self._log = os.environ.get("ERGON_JS_STUB_LOG")
        self.log_level = "off"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.finalize()

    def finalize(self):
        for dev in list(self._open.values()):
            dev.ctrl = 0
            dev.sstats_on = False
            if dev.thread:
                dev.thread.join(1.0)
        self._open = {}

    def device_paths(self, timeout=None):
        return list(self._cfg["devices"])

    def open(self, device_prefix, mode=None, timeout=None):
        if device_prefix not in self._cfg["devices"]:
            raise RuntimeError("device not found: " + device_prefix)
        dev = _Device(self, device_prefix, self._cfg)
        self._open[device_prefix] = dev
        if dev.js110:
            dev.sstats_on = True
            dev.t0 = time.monotonic()
            dev.sstats = threading.Thread(target=dev.run_stats, args=(True,), daemon=True)
            dev.sstats.start()

    def close(self, device_prefix, timeout=None):
        dev = self._open.pop(device_prefix, None)
        if dev:
            dev.ctrl = 0
            dev.sstats_on = False

    def subscribe(self, topic, flags, fn, timeout=None):
        with self._lock:
            self._subs.setdefault(topic, []).append(fn)

    def unsubscribe(self, topic, fn, timeout=None):
        with self._lock:
            if fn in self._subs.get(topic, []):
                self._subs[topic].remove(fn)

    def _deliver(self, topic, value):
        with self._lock:
            fns = list(self._subs.get(topic, []))
        for fn in fns:
            fn(topic, value)

    def _record(self, topic, value):
        if self._log:
            with open(self._log, "a") as f:
                f.write(json.dumps({"topic": topic, "value": value}) + "\n")

    def publish(self, topic, value, timeout=None):
        dev = None
        for path, d in self._open.items():
            if topic.startswith(path + "/"):
                dev, sub = d, topic[len(path) + 1:]
        if dev is None:
            raise RuntimeError("publish to a device that is not open: " + topic)
        if dev.unplugged:
            raise RuntimeError("device removed: " + dev.path)
        self._record(topic, value)
        if sub in ("s/i/range/mode", "s/i/range/select"):
            if (sub == "s/i/range/select") != dev.js110:
                raise RuntimeError("topic not supported by this model: " + topic)
            dev.range_mode = value
        elif sub == "s/stats/scnt":
            dev.scnt = int(value)
        elif sub == "s/stats/ctrl":
            on = value in (1, "on", True)
            if on and not dev.ctrl:
                dev.ctrl = 1
                dev.t0 = time.monotonic()
                dev.thread = threading.Thread(target=dev.run_stats, daemon=True)
                dev.thread.start()
            elif not on and dev.ctrl:
                dev.ctrl = 0
                if dev.thread is not threading.current_thread():
                    dev.thread.join(1.0)
        elif dev.js110 and sub.startswith("s/gpo/") and sub.endswith("/value"):
            bit = int(sub.split("/")[2])
            dev.gpo = (dev.gpo & ~(1 << bit)) | ((1 if value else 0) << bit)
        elif dev.js110 and sub.startswith("s/gpi/"):
            raise RuntimeError("topic not supported by this model: " + topic)
        elif sub == "s/gpi/+/!req":
            # Answered from another thread, as the vendor's driver does.
            snap = dev.inputs(dev.sim_t())
            threading.Thread(target=self._deliver,
                             args=(dev.path + "/s/gpi/+/!value", snap), daemon=True).start()
        elif sub == "s/gpo/+/!set":
            dev.gpo |= int(value)
        elif sub == "s/gpo/+/!clr":
            dev.gpo &= ~int(value)
        return 0
