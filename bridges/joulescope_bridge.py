#!/usr/bin/env python3
"""ergon's Joulescope bridge (docs/BRIDGE.md, docs/USAGE.md "Joulescope").

ergon runs this script as `--instrument joulescope[:SERIAL]`; it drives a
Joulescope through the vendor's own host library, pyjoulescope_driver
(Apache-2.0, `python3 -m pip install pyjoulescope_driver`), and speaks
ergon's bridge protocol (JSON Lines) on stdin/stdout.

  joulescope_bridge.py --scan              list devices as one JSON line
  joulescope_bridge.py [--serial SERIAL]   run as a bridge

JS220/JS320: on-instrument statistics (s/stats/scnt = 1e6 / rate, a whole
number of samples, 10..1e6: any other rate is refused with the rates it
gives; s/stats/ctrl 1, values on s/stats/value) with the on-instrument charge and
energy accumulators; passthrough is s/i/range/mode auto/off; outputs
s/gpo/+/!set / !clr.

JS110: 2 MHz base rate, s/i/range/select auto/off, outputs through
s/gpo/N/value. Its on-instrument (sensor-side) statistics come at a fixed
2 Hz (s/sstats/value, no standard deviation); at any other rate (2e6 / N
for a whole N of 20..2e6; others are refused) the statistics and the
charge/energy accumulators are computed on the host from the streamed
samples (host-side statistics), so a JS110 cannot give
on-instrument statistics or accumulators at 1 kHz.

Inputs, both models: a packet's `digital` comes from the inputs the
instrument streams beside its samples (s/gpi/0/!data and s/gpi/1/!data,
u1, enabled with s/gpi/N/ctrl; the vendor's driver has streamed them since
0.2.2, on a JS110 since 0.2.7): each input's level at the packet's middle
sample id. So the gate and READY are placed by sample id, on the
instrument's clock, never by when the host happened to look. This assumes
the statistics' and the input streams' sample ids count the same sample
clock (libjsdrv documents both as sample ids of the device). The `gpi`
command (a snapshot) is s/gpi/+/!req -> s/gpi/+/!value on both (on a JS110
from pyjoulescope_driver 1.1.4, which added it).

Validated against ergon's stub pyjoulescope_driver only
(tests/support/pyjoulescope_stub): never run against a real Joulescope.
"""
import argparse
import bisect
import collections
import json
import math
import os
import queue
import sys
import threading
import time

PROTOCOL = 1
VALIDATED = ("ergon's stub pyjoulescope_driver only (tests/support/pyjoulescope_stub); "
             "never run on a real JS220/JS320/JS110")
INSTALL = ("install the vendor's driver with `%s -m pip install pyjoulescope_driver` "
           "(or set ERGON_PYTHON to a Python that has it)" % (sys.executable or "python3"))
MODELS = ("js220", "js320", "js110")

_out_lock = threading.Lock()
# When the last statistics line was written (host seconds), set under
# _out_lock: a write that ergon's slow read blocked (back-pressure, the pipe
# is full) is not a silent device.
_stats_written = [0.0]
# Packets wait at most this long (host seconds) for the input streams.
INPUT_WAIT_S = 2.0


class InputTrack:
    """One input's streamed levels: its edges by sample id (in the hello's
    sample_rate_hz units) and how far the stream has covered."""

    def __init__(self):
        self.edges = []  # [(sample id, level from there on)], ascending
        self.first = 0  # level before the first edge
        self.end = None  # sample ids below this are covered

    def add(self, sid, step, data):
        # A block starting inside the covered span (a resend, or the pad
        # bits of a block whose count was not a multiple of 8): it wins.
        while self.edges and self.edges[-1][0] >= sid:
            self.edges.pop()
        if self.end is None:
            self.first = data[0] & 1 if data else 0
        lvl = self.edges[-1][1] if self.edges else self.first
        i, n = 0, len(data)
        while i < n:
            fill = b"\xff" if lvl else b"\x00"
            j = n - len(data[i:].lstrip(fill))  # the first byte with an edge
            if j >= n:
                break
            byte = data[j]
            for bit in range(8):
                v = (byte >> bit) & 1
                if v != lvl:
                    lvl = v
                    self.edges.append((sid + (8 * j + bit) * step, v))
            i = j + 1
        self.end = sid + 8 * n * step

    def covers(self, sid):
        return self.end is not None and sid < self.end

    def level_at(self, sid):
        k = bisect.bisect_right(self.edges, (sid, 2)) - 1
        return self.edges[k][1] if k >= 0 else self.first

    def prune(self, low):
        """Forget edges before the last one at or below low."""
        if low is None or len(self.edges) < 2:
            return
        k = bisect.bisect_right(self.edges, (low, 2)) - 1
        if k > 0:
            self.first = self.edges[k - 1][1]
            del self.edges[:k]


def send(obj):
    line = json.dumps(obj, allow_nan=False, separators=(",", ":"))
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
        if obj.get("type") == "stats":
            _stats_written[0] = time.monotonic()


def stats_silence_s(last_received):
    """Seconds since statistics last arrived or were written, or None
    while a write is in progress: ergon not reading (a full pipe) blocks
    it, which is back-pressure, not a device that went quiet."""
    if not _out_lock.acquire(blocking=False):
        return None
    try:
        return time.monotonic() - max(last_received, _stats_written[0])
    finally:
        _out_lock.release()


def fatal(message, status=2):
    """Report and exit, from any thread (driver callbacks included)."""
    send({"type": "error", "message": message})
    os._exit(status)


def model_of(path):
    parts = path.split("/")
    return parts[1] if len(parts) >= 3 else ""


def serial_of(path):
    return path.split("/")[-1]


def whole_rates(base_hz, n_min):
    """The whole numbers of statistics per second among base_hz / N, N >= n_min."""
    top = int(base_hz // n_min)
    return [r for r in range(1, top + 1) if int(base_hz) % r == 0]


def rate_refusal(model, rate):
    """None when the model gives `rate` statistics per second; else why not,
    with the rates it gives (short enough for the protocol's 511-byte error
    message). A JS220/JS320 sums a whole number N of its 1,000,000 samples a
    second into a packet (s/stats/scnt = N), so it gives 1e6 / N per second;
    ergon asks for N from 10 (100 kHz) to 1,000,000 (1 Hz). A JS110 gives 2
    per second on the instrument (sensor side), or host-side statistics of a
    whole number N of its 2,000,000 samples a second, N from 20 to
    2,000,000."""
    if model == "js110":
        if rate == 2.0:
            return None
        base, n_min = 2e6, 20
        what = ("a JS110 gives 2/s on the instrument, or host-side 2,000,000 / N per "
                "second for a whole N of 20..2,000,000")
    else:
        base, n_min = 1e6, 10
        what = ("a %s sums a whole number N of its 1,000,000 samples a second per "
                "packet (s/stats/scnt): 1,000,000 / N per second, N = 10..1,000,000"
                % model.upper())
    n = base / rate if rate > 0 else 0.0
    if rate > 0 and n_min - 1e-9 <= n <= base * (1 + 1e-12) and abs(n - round(n)) <= 1e-9 * n:
        return None
    return ("joulescope: stats_rate_hz=%g is not a rate it can give: %s; whole rates: %s Hz"
            % (rate, what, ", ".join(str(r) for r in whole_rates(base, n_min))))


class Bridge:
    def __init__(self, driver, path, args, stub):
        self.stub = stub
        self.d = driver
        self.path = path
        self.model = model_of(path)
        self.js110 = self.model == "js110"
        self.args = args
        self.base_hz = 2e6 if self.js110 else 1e6
        rate = args.stats_rate if args.stats_rate else (2.0 if self.js110 else 1000.0)
        self.sensor_side = (not self.js110) or rate == 2.0
        self.rate = rate
        self.streaming = False
        self.gpi = 0
        self.gpi_event = threading.Event()
        self.gpo = 0
        self.last_stats = time.monotonic()
        self.events = queue.Queue()  # ("cmd", obj) | ("eof", None) | ("removed", path)
        # The statistics carry no inputs: packets wait here until both input
        # streams cover their middle sample id.
        self.lock = threading.Lock()
        self.pending = collections.deque()  # (msg, host time it arrived)
        self.tracks = [InputTrack(), InputTrack()]

    # --- callbacks: on the driver's thread --------------------------------
    def on_stats(self, topic, value):
        with self.lock:  # so that no packet follows the ack of stop
            self._on_stats(value)

    def _on_stats(self, value):
        if not self.streaming:
            return
        try:
            t = value["time"]
            s0, s1 = t["samples"]["value"]
            freq = float(t["sample_freq"]["value"])
            t0, t1 = t["range"]["value"]
            sig = value["signals"]
            # Sample ids in the unit the hello announced (base_hz).
            k = self.base_hz / freq
            msg = {"type": "stats", "sample_id": int(round(s0 * k)),
                   "sample_count": max(1, int(round((s1 - s0) * k))),
                   "t_start_s": float(t0), "t_end_s": float(t1)}
            for name, pre, unit in (("current", "i", "a"), ("voltage", "v", "v"),
                                    ("power", "p", "w")):
                for stat in ("avg", "std", "min", "max"):
                    x = sig.get(name, {}).get(stat, {}).get("value")
                    if x is not None:
                        msg["%s_%s_%s" % (pre, stat, unit)] = float(x)
            acc = value.get("accumulators", {})
            if "charge" in acc and "energy" in acc:
                msg["charge_c"] = float(acc["charge"]["value"])
                msg["energy_j"] = float(acc["energy"]["value"])
        except (KeyError, TypeError, ValueError) as e:
            fatal("joulescope: statistics value of unexpected shape (%s); this bridge "
                  "was written for pyjoulescope_driver's s/stats/value dict" % e, 1)
            return
        finite = [k for k, v in msg.items() if isinstance(v, float) and not math.isfinite(v)]
        if finite:
            # A packet the instrument could not measure: lost, not invented.
            send({"type": "dropped", "sample_id": msg["sample_id"],
                  "count": msg["sample_count"]})
            return
        self.last_stats = time.monotonic()
        self.pending.append((msg, self.last_stats))
        self.flush(False)

    def on_gpi(self, topic, value):
        with self.lock:
            self.gpi = int(value)
        self.gpi_event.set()

    def on_gpi_data(self, topic, value):
        """A block of one input's streamed levels (u1, LSB first)."""
        try:
            n = int(topic.rsplit("/", 2)[-2])
            sid = int(value["sample_id"])
            k = self.base_hz / float(value["sample_rate"])
            step = float(value.get("decimate_factor", 1)) * k
            data = bytes(value["data"])
        except (KeyError, TypeError, ValueError, IndexError) as e:
            fatal("joulescope: input stream value of unexpected shape (%s); this bridge "
                  "was written for pyjoulescope_driver's s/gpi/N/!data dict" % e, 1)
            return
        with self.lock:
            if n < len(self.tracks):
                self.tracks[n].add(sid * k, step, data)
                self.flush(False)

    def flush(self, final):
        """Send the packets whose middle sample both input streams cover
        (all of them when final: an input not covered reads as its last
        level). Called with self.lock held."""
        while self.pending:
            m = self.pending[0][0]
            mid = m["sample_id"] + m["sample_count"] / 2.0
            if not final and not all(t.covers(mid) for t in self.tracks):
                return
            m["digital"] = sum(t.level_at(mid) << i for i, t in enumerate(self.tracks))
            send(m)
            self.pending.popleft()
        low = None
        if self.pending:
            m = self.pending[0][0]
            low = m["sample_id"]
        for t in self.tracks:
            t.prune(low)

    def oldest_wait_s(self, now):
        return now - self.pending[0][1] if self.pending else 0.0

    def on_remove(self, topic, value):
        if value == self.path or (isinstance(value, str) and value.startswith(self.path)):
            self.events.put(("removed", value))

    # --- the device ----------------------------------------------------------
    def pub(self, sub, value):
        self.d.publish(self.path + "/" + sub, value)

    def setup(self):
        self.d.subscribe("@/!remove", "pub", self.on_remove)
        for n in range(len(self.tracks)):
            self.d.subscribe(self.path + "/s/gpi/%d/!data" % n, "pub", self.on_gpi_data)
        self.d.subscribe(self.path + "/s/gpi/+/!value", "pub", self.on_gpi)
        if self.js110:
            self.pub("s/i/range/select", "auto")
            if self.sensor_side:
                self.stats_topic = "s/sstats/value"
            else:
                for sig in ("s/i/ctrl", "s/v/ctrl", "s/p/ctrl"):
                    self.pub(sig, "on")
                self.pub("s/stats/scnt", int(round(2e6 / self.rate)))
                self.stats_topic = "s/stats/value"
        else:
            self.pub("s/i/range/mode", "auto")
            self.pub("s/stats/scnt", int(round(1e6 / self.rate)))
            self.stats_topic = "s/stats/value"
        self.d.subscribe(self.path + "/" + self.stats_topic, "pub", self.on_stats)

    def hello(self):
        notes = ("%s%s; %s stats" % ("SIMULATED by the stub; " if self.stub else "", self.path,
                                      "sensor-side" if self.sensor_side else "host-side"))
        if self.js110 and not self.sensor_side:
            notes += "; JS110: host-side stats and accumulators (on-instrument: 2 Hz only)"
        notes += "; digital = streamed inputs 0-1 at each packet's middle sample id"
        send({"type": "hello", "protocol": PROTOCOL, "vendor": "Jetperch",
              "model": self.model.upper(), "serial": serial_of(self.path),
              "accuracy_pct": 0.0,  # ergon --instrument-opt accuracy_pct=PCT
              "sample_rate_hz": self.base_hz, "stats_rate_hz": self.rate,
              "integrates": "energy+charge",
              "provenance": "synthetic" if self.stub else "measured",
              "clock": "instrument", "streams": ["stats"],
              "inputs": 2, "outputs": 2,
              "passthrough": True, "heartbeat_s": self.args.heartbeat_s,
              "validated_against": VALIDATED, "notes": notes[:250]})

    def set_stats(self, on):
        for n in range(len(self.tracks)):
            self.pub("s/gpi/%d/ctrl" % n, 1 if on else 0)
        if self.js110 and self.sensor_side:
            return  # sensor-side statistics always run
        self.pub("s/stats/ctrl", 1 if on else 0)

    def set_outputs(self, set_mask, clear_mask):
        if self.js110:
            self.gpo = (self.gpo | set_mask) & ~clear_mask
            for bit in range(2):
                if (set_mask | clear_mask) & (1 << bit):
                    self.pub("s/gpo/%d/value" % bit, (self.gpo >> bit) & 1)
            return
        if set_mask:
            self.pub("s/gpo/+/!set", set_mask)
        if clear_mask:
            self.pub("s/gpo/+/!clr", clear_mask)

    def snapshot(self):
        self.gpi_event.clear()
        self.pub("s/gpi/+/!req", 0)
        if not self.gpi_event.wait(1.0):
            raise RuntimeError("no answer on s/gpi/+/!value within 1 s%s" % (
                " (a JS110 answers it from pyjoulescope_driver 1.1.4 on)"
                if self.js110 else ""))
        return self.gpi

    # --- the protocol -----------------------------------------------------------
    def command(self, cmd):
        c, cid = cmd.get("cmd"), cmd.get("id")
        try:
            if c == "start":
                self.streaming = True
                self.last_stats = time.monotonic()
                self.set_stats(True)
            elif c == "stop":
                self.set_stats(False)
                with self.lock:
                    self.streaming = False
                    self.flush(True)
            elif c == "gpo":
                self.set_outputs(int(cmd.get("set", 0)), int(cmd.get("clear", 0)))
            elif c == "gpi":
                send({"type": "gpi", "id": cid, "t_s": time.monotonic(),
                      "value": self.snapshot()})
                return True
            elif c == "passthrough":
                on = bool(cmd.get("on"))
                self.pub("s/i/range/select" if self.js110 else "s/i/range/mode",
                         "auto" if on else "off")
            elif c == "quit":
                send({"type": "ack", "id": cid, "ok": True})
                return False
            else:
                send({"type": "ack", "id": cid, "ok": False, "message": "unknown command"})
                return True
        except Exception as e:  # the device refused or is gone
            send({"type": "ack", "id": cid, "ok": False, "message": str(e)})
            return True
        send({"type": "ack", "id": cid, "ok": True})
        return True

    def run(self):
        def reader():
            for line in sys.stdin:
                try:
                    self.events.put(("cmd", json.loads(line)))
                except ValueError:
                    self.events.put(("bad", line))
            self.events.put(("eof", None))

        threading.Thread(target=reader, daemon=True).start()
        tick = min(self.args.heartbeat_s / 4, 0.05)
        next_hb = time.monotonic()
        while True:
            try:
                kind, obj = self.events.get(timeout=tick)
            except queue.Empty:
                kind, obj = None, None
            if kind == "cmd" and not self.command(obj):
                return 0
            if kind in ("eof", "bad"):
                return 0 if kind == "eof" else 1
            if kind == "removed":
                fatal("joulescope: the Joulescope %s was unplugged" % self.path, 1)
            now = time.monotonic()
            silent = stats_silence_s(self.last_stats) if self.streaming else None
            if silent is not None and silent > 1.0 + 2.0 / self.rate:
                fatal("joulescope: no statistics from %s for %.1f s (unplugged or USB "
                      "stalled?)" % (self.path, silent), 1)
            with self.lock:
                wait = self.oldest_wait_s(now)
            if self.streaming and wait > INPUT_WAIT_S:
                # Never invent a level: without the input streams the
                # packets cannot be gated.
                fatal("joulescope: %s: the input streams s/gpi/0/!data and s/gpi/1/!data "
                      "did not cover a statistics packet within %.0f s; this "
                      "pyjoulescope_driver or firmware does not stream the inputs (update "
                      "both), or the USB link drops them" % (self.path, INPUT_WAIT_S), 1)
            if now >= next_hb:
                next_hb = now + self.args.heartbeat_s / 4
                send({"type": "heartbeat"})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scan", action="store_true", help="list devices and exit")
    ap.add_argument("--serial", default="", help="the device's serial number")
    ap.add_argument("--stats-rate", type=float, default=0.0,
                    help="statistics per second (JS220 default 1000; JS110 default 2)")
    ap.add_argument("--heartbeat-s", type=float, default=2.0)
    args = ap.parse_args()
    try:
        import pyjoulescope_driver
        from pyjoulescope_driver import Driver
    except ImportError as e:
        fatal("joulescope: pyjoulescope_driver is not installed for %s (%s); %s"
              % (sys.executable, e, INSTALL))
    with Driver() as d:
        paths = [p for p in d.device_paths() if model_of(p) in MODELS]
        if args.scan:
            send({"type": "scan", "devices": [
                {"path": p, "serial": serial_of(p), "model": model_of(p).upper()}
                for p in paths]})
            return 0
        if args.serial:
            pick = [p for p in paths if serial_of(p) == args.serial]
            if not pick:
                fatal("joulescope: no Joulescope with serial %s; found: %s" %
                      (args.serial, ", ".join(paths) or "none"))
        else:
            pick = paths
        if not pick:
            fatal("joulescope: no Joulescope found (pyjoulescope_driver saw none); plug "
                  "one in, and on Linux install the vendor's udev rules")
        if len(pick) > 1:
            fatal("joulescope: %d Joulescopes and no serial given: %s; pick one with "
                  "--instrument joulescope:SERIAL" %
                  (len(pick), ", ".join("%s (serial %s)" % (p, serial_of(p)) for p in pick)))
        path = pick[0]
        if args.stats_rate:
            why = rate_refusal(model_of(path), args.stats_rate)
            if why:
                fatal(why)
        try:
            d.open(path)
        except Exception as e:
            fatal("joulescope: cannot open %s: %s" % (path, e), 1)
        # ergon's own test stub simulates a JS220: what it yields was not
        # measured, and the hello must say so.
        stub = bool(getattr(pyjoulescope_driver, "ERGON_STUB", False))
        b = Bridge(d, path, args, stub)
        try:
            b.setup()
        except Exception as e:
            fatal("joulescope: cannot configure %s: %s" % (path, e), 1)
        b.hello()
        status = b.run()
        try:
            d.close(path)
        except Exception:
            pass
        return status


if __name__ == "__main__":
    sys.exit(main())
