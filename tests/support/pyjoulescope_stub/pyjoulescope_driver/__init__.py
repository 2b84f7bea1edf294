"""A stub of the vendor's pyjoulescope_driver for ergon's tests.

It follows the vendor's public API as far as ergon's Joulescope bridge uses
it (Driver: device_paths, open, close, publish, subscribe, unsubscribe,
finalize, context manager; callbacks fn(topic, value) on another thread;
the statistics value dict of the vendor's binding: time.samples,
time.sample_freq, time.range, signals.{current,voltage,power}.{avg,std,
min,max}, accumulators.{charge,energy}) and simulates a JS220:

- a current waveform at a fixed voltage: idle_a, and active_a while
  INPUT0 (the gate) is high: gate windows of gate_s every period_s from
  first_gate_s; or, with go_gate_delay_s set, one window of gate_s that
  starts go_gate_delay_s after OUTPUT0 (GO) was set (lock-step firmware),
  on the first packet boundary at or after it;
- INPUT1 (the target's state line) high from ready_s;
- OUTPUT0 (GO) through s/gpo/+/!set and !clr;
- the inputs streamed in the sample stream, as the vendor's driver does:
  s/gpi/0/!data and s/gpi/1/!data (u1, 8 samples per byte, little-endian
  bit order) once s/gpi/N/ctrl is on, one block per statistics packet with
  the packet's sample ids; input snapshots s/gpi/+/!req -> s/gpi/+/!value;
- with "layers" set ({"lead_s", "layer_s": [...], "layer_a": [...],
  "inferences"}): layer-marked inferences inside the first gate window, as
  the power firmware with markers draws them: from lead_s after the gate's
  rise, `inferences` back-to-back inferences of the listed layers, the
  current layer_a[j] during layer j (active_a in the rest of the gate),
  and INPUT1 the layer-marker line instead of the state line: it toggles
  at the start of every layer and once after the last inference;
- dropped sample ids: the packets listed in drop_packets never arrive;
- a host too slow for the rate: max_deliver_hz caps how
  many packets a second reach the bridge while the sample clock runs on
  (a vendor's queue filling up), so that the bridge's falling-behind check
  fires however fast the host is; queue_max (packets) then drops the
  oldest packets waiting beyond it, as the vendor's queue would (their
  charge is not in the accumulators: a test of the drop only); with
  "pace" off, max_deliver_hz only slows the delivery (a consumer starved
  of CPU) and the sample clock waits for it;
- an unplug after unplug_after_s: statistics stop, '@/!remove' subscribers
  are called, later publishes raise; or, with unplug_open_s, that long (host
  seconds) after the device was opened, streaming or not (a Joulescope
  pulled out while `ergon power-on` holds its passthrough).

Simulated time is the sample counter (sample id / sample rate since the
statistics started), never the host's clock: the gate, the state line and
the unplug happen at fixed sample ids however loaded the host is, so a
test's expected figures are exact. Only the pacing (how fast packets are
delivered) follows the host's clock, and with "pace": false not even that:
packets are delivered as fast as the consumer takes them (the bridge's
writes block on a full pipe), so no part of a test depends on the host's
clock or load. The Driver then says so (ergon_stub_unpaced), and the
bridge does not compare its sample clock with the host's.

A device path with "/js110/" simulates a JS110 instead: sensor-side
statistics on s/sstats/value at a fixed 2 Hz from open (no standard
deviation), host-side statistics on s/stats/value when s/stats/ctrl is on
(s/stats/scnt counted at 2 MHz), outputs through s/gpo/N/value, current
range through s/i/range/select; inputs streamed and snapshotted as above
(the vendor's driver answers s/gpi/+/!req on a JS110 from its 1.1.4).

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
    "go_gate_delay_s": None,
    "pace": True,
    "unplug_open_s": None,
    "layers": None,
    "max_deliver_hz": None,
    "queue_max": None,
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
        self.gpi_ctrl = 0  # bit N: s/gpi/N/ctrl on
        self.range_mode = "off"
        self.thread = None
        self.unplugged = False
        self.sstats_on = False
        self.js110 = "/js110/" in path
        self.freq = 2000000 if self.js110 else cfg["sample_freq"]
        self.sstats = None  # JS110 sensor-side statistics thread
        self.pos = 0  # samples generated since the statistics started
        self.go_window = None  # [start, end) in samples, from GO

    # The simulated signals, by sample index since the statistics started.
    def gate_intervals(self, a, b):
        """The gate's high intervals that overlap samples [a, b)."""
        c, f = self.cfg, self.freq
        g = int(round(c["gate_s"] * f))
        if c["go_gate_delay_s"] is not None:
            w = self.go_window
            return [w] if w and w[0] < b and w[1] > a else []
        first, per = int(round(c["first_gate_s"] * f)), int(round(c["period_s"] * f))
        out = []
        n = max(0, (a - first) // per) if per > 0 else 0
        while True:
            s0 = first + n * per
            if s0 >= b:
                break
            if s0 + g > a:
                out.append((s0, s0 + g))
            if per <= 0:
                break
            n += 1
        return out

    def layer_plan(self):
        """With "layers": (start sample of the first inference, layer lengths
        in samples, their currents, inferences); None without."""
        ly = self.cfg["layers"]
        if not ly:
            return None
        # Computed once per gate window (it is asked twice a packet).
        key = (self.go_window, self.freq)
        if getattr(self, "_plan_key", None) != key:
            self._plan_key, self._plan = key, self._layer_plan(ly)
        return self._plan

    def _layer_plan(self, ly):
        f = self.freq
        if self.cfg["go_gate_delay_s"] is not None:
            if self.go_window is None:
                return None
            g0 = self.go_window[0]
        else:
            g0 = int(round(self.cfg["first_gate_s"] * f))
        return (g0 + int(round(ly["lead_s"] * f)),
                [int(round(x * f)) for x in ly["layer_s"]], ly["layer_a"], ly["inferences"])

    def marker_intervals(self, a, b):
        """The marker line's high intervals over samples [a, b) (it starts low
        and toggles at each layer's start and after the last inference)."""
        lp = self.layer_plan()
        if lp is None:
            return []
        t0, ls, _, n = lp
        per = sum(ls)
        toggles = []
        for k in range(max(0, (a - t0) // per - 1) if a > t0 else 0, n):
            s0 = t0 + k * per
            if s0 >= b:
                break
            if s0 + per < a:
                continue
            c = s0
            for x in ls:
                toggles.append(c)
                c += x
        end = t0 + n * per
        if a <= end + 1 and end < b:
            toggles.append(end)
        # The level at a: toggles before a, counted arithmetically.
        before = 0
        if a > t0:
            k = min((a - t0) // per, n)
            before = k * len(ls)
            c = t0 + k * per
            if k < n:
                for x in ls:
                    if c < a:
                        before += 1
                    c += x
            elif end < a:
                before += 1
        toggles = [x for x in toggles if a <= x < b]
        out, level, start = [], before % 2, a
        for x in toggles:
            if level:
                out.append((start, x))
            level ^= 1
            start = x
        if level:
            out.append((start, b))
        return out

    def mean_current(self, a, b, high):
        """The mean current over samples [a, b), `high` of them in the gate."""
        c = self.cfg
        base = c["idle_a"] + (c["active_a"] - c["idle_a"]) * high / (b - a)
        lp = self.layer_plan()
        if lp is None:
            return base
        t0, ls, la, n = lp
        per = sum(ls)
        q = 0.0
        k = max(0, (a - t0) // per) if a > t0 else 0
        while k < n and t0 + k * per < b:
            s = t0 + k * per
            for x, cur in zip(ls, la):
                lo, hi = max(s, a), min(s + x, b)
                if hi > lo:  # a layer in place of the gate's active_a
                    q += (cur - c["active_a"]) * (hi - lo)
                s += x
            k += 1
        return base + q / (b - a)

    def level_bits(self, index, a, b):
        """Input `index` over samples [a, b): (bytes packed LSB first, high count)."""
        if index == 1 and self.cfg["layers"]:
            iv = self.marker_intervals(a, b)
        elif index == 1:
            r = int(round(self.cfg["ready_s"] * self.freq))
            iv = [(r, b)] if r < b else []
        else:
            iv = self.gate_intervals(a, b)
        n = b - a
        bits = bytearray((n + 7) // 8)
        high = 0
        for s0, s1 in iv:
            lo, hi = max(s0, a) - a, min(s1, b) - a
            high += max(0, hi - lo)
            j = lo
            while j < hi:  # whole bytes at once where possible
                if j % 8 == 0 and hi - j >= 8:
                    k = (hi - j) // 8
                    bits[j // 8:j // 8 + k] = b"\xff" * k
                    j += 8 * k
                else:
                    bits[j // 8] |= 1 << (j % 8)
                    j += 1
        return bytes(bits), high

    def inputs(self):
        """The inputs at the last generated sample (a snapshot)."""
        k = max(self.pos - 1, 0)
        return (self.level_bits(0, k, k + 1)[1]) | (self.level_bits(1, k, k + 1)[1] << 1)

    def set_go(self, mask):
        was = self.gpo & 1
        self.gpo |= mask
        d = self.cfg["go_gate_delay_s"]
        if d is not None and not was and self.gpo & 1 and self.go_window is None:
            spp = max(1, int(round(self.scnt / 1e6 * self.freq))) if not self.js110 else 1
            start = self.pos + int(round(d * self.freq))
            start = -(-start // spp) * spp  # the next packet boundary
            self.go_window = (start, start + int(round(self.cfg["gate_s"] * self.freq)))

    def run_stats(self, sensor_side=False):
        c = self.cfg
        freq = self.freq
        if self.js110:
            span_s = 0.5 if sensor_side else self.scnt / 2e6
            topic = self.path + ("/s/sstats/value" if sensor_side else "/s/stats/value")
        else:
            span_s = self.scnt / 1e6  # scnt counts at 1 MHz on a JS220
            topic = self.path + "/s/stats/value"
        spp = int(round(span_s * freq))
        k = 0
        charge = energy = 0.0
        t0 = time.monotonic()
        running = (lambda: self.sstats_on) if sensor_side else (lambda: self.ctrl)
        unplug = None if c["unplug_after_s"] is None else int(round(c["unplug_after_s"] * freq))
        paced = c["pace"]
        cap_hz = c["max_deliver_hz"]
        sent = 0
        while running() and not self.unplugged:
            # Unpaced: a batch at a time, as fast as the bridge takes them.
            due = int((time.monotonic() - t0) / span_s) if paced else k + 64
            if cap_hz:
                # k counts the packets made (delivered or dropped), sent
                # those delivered; the oldest beyond queue_max are dropped.
                # Unpaced, the cap only slows the delivery (a host starved
                # of CPU): nothing is dropped, the sample clock waits.
                if paced and c["queue_max"] is not None and due - k > c["queue_max"]:
                    k = due - c["queue_max"]
                due = min(due, k + max(0, int((time.monotonic() - t0) * cap_hz) - sent))
            while k < due and running():
                a, b = k * spp, (k + 1) * spp
                if unplug is not None and a >= unplug:
                    self.unplugged = True
                    self.driver._deliver("@/!remove", self.path)
                    return
                gbits, high = self.level_bits(0, a, b)
                # The packet's mean current: the high fraction at active_a.
                i = self.mean_current(a, b, high)
                v = c["voltage_v"]
                charge += i * span_s
                energy += i * v * span_s
                # The inputs stream with the samples: on a JS110 the
                # host-side statistics' stream when it runs, else the
                # sensor-side one's.
                streams = not (sensor_side and self.ctrl)
                if streams:
                    self.pos = b
                if k not in c["drop_packets"]:
                    sid = c["first_sample_id"] + a
                    for n in (0, 1):
                        if streams and self.gpi_ctrl >> n & 1:
                            bits = gbits if n == 0 else self.level_bits(1, a, b)[0]
                            self.driver._deliver(
                                self.path + "/s/gpi/%d/!data" % n,
                                {"sample_id": sid, "field_id": 4, "index": n,
                                 "sample_rate": freq, "decimate_factor": 1,
                                 "data": bits})
                    value = _stats_value(sid, spp, freq, i, v, charge, energy)
                    sent += 1
                    if sensor_side:
                        for sig in value["signals"].values():
                            del sig["std"]
                    self.driver._deliver(topic, value)
                k += 1
            if paced or (cap_hz and k >= due):
                # Unpaced and uncapped, the GIL's switch interval lets the
                # others run.
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
        # Not the vendor's: the simulated clock does not follow the host's.
        self.ergon_stub_unpaced = not self._cfg["pace"]

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
        if self._cfg["unplug_open_s"] is not None:
            def pull():
                dev.unplugged = True
                self._deliver("@/!remove", dev.path)
            t = threading.Timer(float(self._cfg["unplug_open_s"]), pull)
            t.daemon = True
            t.start()
        if dev.js110:
            dev.sstats_on = True
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
                dev.pos = 0
                dev.thread = threading.Thread(target=dev.run_stats, daemon=True)
                dev.thread.start()
            elif not on and dev.ctrl:
                dev.ctrl = 0
                if dev.thread is not threading.current_thread():
                    dev.thread.join(1.0)
        elif dev.js110 and sub.startswith("s/gpo/") and sub.endswith("/value"):
            bit = int(sub.split("/")[2])
            if value:
                dev.set_go(1 << bit)
            else:
                dev.gpo &= ~(1 << bit)
        elif sub in ("s/gpi/0/ctrl", "s/gpi/1/ctrl"):
            bit = 1 << int(sub.split("/")[2])
            on = value in (1, "on", True)
            dev.gpi_ctrl = (dev.gpi_ctrl | bit) if on else (dev.gpi_ctrl & ~bit)
        elif sub == "s/gpi/+/!req":
            # Answered from another thread, as the vendor's driver does.
            snap = dev.inputs()
            threading.Thread(target=self._deliver,
                             args=(dev.path + "/s/gpi/+/!value", snap), daemon=True).start()
        elif sub == "s/gpo/+/!set":
            dev.set_go(int(value))
        elif sub == "s/gpo/+/!clr":
            dev.gpo &= ~int(value)
        return 0
