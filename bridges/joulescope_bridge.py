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

Statistics go out as stats_block messages (docs/BRIDGE.md: up to 1000
packets a line, float64 columns in base64), since a JSON line per packet
costs more than the 10 us a packet has at 100000/s; --stats-format line
sends one stats line per packet. A host too slow for the rate is named:
once packets reach this bridge more than LAG_MAX_S behind the sample
clock, or the vendor's queue drops packets (a sample-id gap) after the
host took under 90 % of the rate for DROP_MIN_S (time ergon kept the
writes waiting is not counted), it stops with an error naming
power.stats_rate_hz and a rate the model gives at 80 % of what was taken
(not with the stub unpaced, whose clock is not real).

Validated against ergon's stub pyjoulescope_driver only
(tests/support/pyjoulescope_stub): never run against a real Joulescope.
"""
import argparse
import array
import base64
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
# Statistics go to ergon in stats_block messages (docs/BRIDGE.md): at most
# BLOCK_MAX packets, sent once full or once the first has waited BLOCK_HOLD_S
# (host seconds). One JSON line per packet costs ~18 us of Python here,
# more than the 10 us a packet has at 100000/s (docs/PERFORMANCE.md).
BLOCK_MAX = 1000
BLOCK_HOLD_S = 0.02
# Falling behind: packets that reach this bridge this much later than the
# sample clock says (host seconds, less the time ergon kept its writes
# waiting) mean this host cannot keep up with the rate; the vendor's
# queue would soon drop samples. The bridge stops with an error naming a
# rate it can sustain, before the measurement window is lost.
LAG_MAX_S = 1.0
LAG_EVERY = 64  # packets between two looks at the lag
# A gap in sample ids after at least this long (host seconds) in which the
# host took under 90 % of the rate is the vendor's queue dropping what this
# host did not take.
DROP_MIN_S = 0.2
# (name in the vendor's signals, name in the protocol) in the protocol's order.
SIGNALS = (("current", "i", "a"), ("voltage", "v", "v"), ("power", "p", "w"))
STATS = ("avg", "std", "min", "max")


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
        e = self.edges
        if not e:
            return self.first
        if sid >= e[-1][0]:  # the usual case: past the last edge
            return e[-1][1]
        k = bisect.bisect_right(e, (sid, 2)) - 1
        return self.edges[k][1] if k >= 0 else self.first

    def prune(self, low):
        """Forget edges before the last one at or below low."""
        if low is None or len(self.edges) < 2:
            return
        k = bisect.bisect_right(self.edges, (low, 2)) - 1
        if k > 0:
            self.first = self.edges[k - 1][1]
            del self.edges[:k]


# Host seconds the writes of statistics waited for ergon to read (a full
# pipe): not this bridge falling behind. Set under _out_lock.
_write_wait_s = [0.0]


def send(obj):
    line = json.dumps(obj, allow_nan=False, separators=(",", ":"))
    send_line(line, obj.get("type") == "stats")


def send_line(line, stats):
    """Write one protocol line (without its newline)."""
    with _out_lock:
        t = time.monotonic()
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
        if stats:
            _stats_written[0] = now = time.monotonic()
            _write_wait_s[0] += now - t


def b64_array(code, xs):
    """base64 of xs as a little-endian array of `code` (array module type)."""
    a = array.array(code, xs)
    if sys.byteorder == "big":
        a.byteswap()
    return base64.b64encode(a.tobytes()).decode("ascii")


# A u32 array type: 'I' is 4 bytes on the hosts Python runs on; 'L' else.
U32 = "I" if array.array("I").itemsize == 4 else "L"


def sustainable_rates(model, measured_hz):
    """The largest rate the model gives at or below 80 % of measured_hz
    (20 % headroom), or None."""
    base, n_min = (2e6, 20) if model == "js110" else (1e6, 10)
    ok = [r for r in whole_rates(base, n_min) if r <= 0.8 * measured_hz]
    return ok[-1] if ok else None


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
        # (sample id, count, t_start, t_end, values, host time it arrived)
        self.pending = collections.deque()
        self.tracks = [InputTrack(), InputTrack()]
        self.covered = -1  # sample ids below this: every input stream covers
        self.blocks = args.stats_format == "block"
        # The fields this stream carries (the first packet's): their
        # protocol names and a getter of their values from a value dict.
        self.getter = None
        self.names = ()
        # The block being filled: rows (t_start, t_end, values..., digital).
        self.block = []
        self.block_first = None  # (sample id, count, shape) of its first packet
        self.block_t = 0.0  # host time its first row was added
        # Falling behind: the first packet's host time and sample id.
        self.realtime = not getattr(driver, "ergon_stub_unpaced", False)
        self.lag_t0 = None
        self.lag_n = LAG_EVERY - 1  # the first packet starts the clock
        self.n_recv = 0  # packets since the first
        self.next_sid = -1  # the sample id after the last packet
        self.prev_now = 0.0  # the host time the last packet arrived
        self.lag_s0 = 0
        self.lag_wait0 = 0.0

    # --- callbacks: on the driver's thread --------------------------------
    def on_stats(self, topic, value):
        with self.lock:  # so that no packet follows the ack of stop
            self._on_stats(value)

    def _set_shape(self, value):
        """Take the fields a value dict carries (in protocol order) as this
        stream's, and make their getter: one expression of subscripts
        (compiled once, from this file's own names), since a packet has
        10 us at 100000/s."""
        sig = value["signals"]
        shape, names = [], []
        for name, pre, unit in SIGNALS:
            for stat in STATS:
                if sig.get(name, {}).get(stat, {}).get("value") is not None:
                    shape.append('s["%s"]["%s"]["value"]' % (name, stat))
                    names.append("%s_%s_%s" % (pre, stat, unit))
        acc = value.get("accumulators", {})
        if "charge" in acc and "energy" in acc:
            shape += ['a["charge"]["value"]', 'a["energy"]["value"]']
            names += ["charge_c", "energy_j"]
        self.names = tuple(names)
        self.getter = eval("lambda s, a: (%s,)" % ", ".join(shape), {})

    def _values(self, value):
        """The packet's values in self.names' order (the fields are the first
        packet's; a packet that lacks one of them sets them anew)."""
        try:
            return self.getter(value["signals"], value.get("accumulators"))
        except (KeyError, TypeError):
            self._set_shape(value)
            return self.getter(value["signals"], value.get("accumulators"))

    def _on_stats(self, value):
        if not self.streaming:
            return
        try:
            t = value["time"]
            s0, s1 = t["samples"]["value"]
            freq = t["sample_freq"]["value"]
            t0, t1 = t["range"]["value"]
            if self.getter is None:
                self._set_shape(value)
            vals = self._values(value)
            # Sample ids in the unit the hello announced (base_hz).
            if freq == self.base_hz:
                sid, cnt = int(round(s0)), max(1, int(round(s1 - s0)))
            else:
                k = self.base_hz / freq
                sid, cnt = int(round(s0 * k)), max(1, int(round((s1 - s0) * k)))
            t0, t1 = float(t0), float(t1)
            total = sum(vals, t0 + t1)  # not finite: some value is not
        except (KeyError, TypeError, ValueError, IndexError) as e:
            fatal("joulescope: statistics value of unexpected shape (%s); this bridge "
                  "was written for pyjoulescope_driver's s/stats/value dict" % e, 1)
            return
        if total - total != 0.0 and not all(math.isfinite(x) for x in vals + (t0, t1)):
            # A packet the instrument could not measure: lost, not invented.
            self.emit_block()
            send({"type": "dropped", "sample_id": sid, "count": cnt})
            return
        now = self.last_stats = time.monotonic()
        if self.realtime:
            if sid > self.next_sid >= 0:
                self.check_drop(sid)
            self.n_recv += 1
            self.lag_n += 1
            if self.lag_n >= LAG_EVERY:
                self.lag_n = 0
                self.check_lag(now, sid + cnt)
            self.prev_now = now
        self.next_sid = sid + cnt
        mid = sid + cnt / 2.0
        if not self.pending and mid < self.covered and self.blocks:
            # The usual case: the inputs already cover it, nothing waits.
            a, b = self.tracks
            self.add_row(sid, cnt, t0, t1, vals, a.level_at(mid) | b.level_at(mid) << 1, now)
            return
        self.pending.append((sid, cnt, t0, t1, vals, now))
        self.flush(False)

    def lag(self, now, sid_end):
        """(host seconds, sample-clock seconds) since the first packet, for a
        packet ending at sid_end that arrived at now; the host's less the
        time ergon kept the writes waiting (a reset that pauses its reads is
        not this bridge falling behind). None before the first look."""
        wait = _write_wait_s[0]
        if self.lag_t0 is None:
            self.lag_t0, self.lag_s0, self.lag_wait0 = now, sid_end, wait
            self.n_recv = 0
            return None
        return (now - self.lag_t0 - (wait - self.lag_wait0),
                (sid_end - self.lag_s0) / self.base_hz)

    def check_lag(self, now, sid_end):
        """Stop, naming a rate this host sustains, once packets arrive
        LAG_MAX_S later than the sample clock says."""
        hs = self.lag(now, sid_end)
        if hs is not None and hs[0] - hs[1] > LAG_MAX_S:
            self.behind(hs, "the vendor's queue would drop samples")

    def check_drop(self, sid):
        """A gap in sample ids: the vendor's queue dropped packets. This
        host's doing when it took fewer than 90 % of the rate's packets a
        second (over at least DROP_MIN_S); then stop as check_lag does. A
        gap while keeping up (USB) is left to ergon
        (instrument.bridge_samples_dropped)."""
        hs = self.lag(self.prev_now, self.next_sid) if self.lag_t0 is not None else None
        if hs is not None and hs[0] >= DROP_MIN_S and self.n_recv < 0.9 * self.rate * hs[0]:
            self.behind(hs, "the vendor's queue dropped samples from sample id %d (%d "
                        "samples)" % (self.next_sid, sid - self.next_sid))

    def behind(self, hs, what):
        host_s, sample_s = hs
        measured = self.n_recv / host_s if host_s > 0 else 0.0
        ok = sustainable_rates(self.model, measured)
        self.fail("joulescope: falling behind: at %g statistics packets a second this host "
                  "took %.0f a second over %.1f s (the packets reached the bridge %.2f s "
                  "behind the %s's clock); %s. Lower power.stats_rate_hz (or "
                  "--instrument-opt stats_rate_hz) to %s"
                  % (self.rate, measured, host_s, host_s - sample_s, self.model.upper(), what,
                     "%d or less (the fastest this %s gives at 80 %% of what was taken)"
                     % (ok, self.model.upper()) if ok else "a rate this host sustains"))

    def fail(self, message):
        """Send the packets whose inputs are known, then the error, and exit
        (called with self.lock held or from the main loop)."""
        self.flush(False, emit=True)
        fatal(message, 1)
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
                ends = [t.end for t in self.tracks]
                self.covered = -1 if None in ends else min(ends)
                self.flush(False)

    def flush(self, final, emit=None):
        """Send the packets whose middle sample both input streams cover
        (all of them when final: an input not covered reads as its last
        level); the block goes once full or old, or when emit or final.
        Called with self.lock held."""
        tracks = self.tracks
        while self.pending:
            sid, cnt, t0, t1, vals, now = self.pending[0]
            mid = sid + cnt / 2.0
            if not final and not mid < self.covered:
                break
            dig = 0
            for i, t in enumerate(tracks):
                dig |= t.level_at(mid) << i
            self.pending.popleft()
            if self.blocks:
                self.add_row(sid, cnt, t0, t1, vals, dig, now)
            else:
                self.send_stats_line(sid, cnt, t0, t1, vals, dig)
        if self.block and (final or emit):
            self.emit_block()
        if not self.blocks:
            self.prune()

    def prune(self):
        low = self.pending[0][0] if self.pending else None
        for t in self.tracks:
            t.prune(low)

    def send_stats_line(self, sid, cnt, t0, t1, vals, dig):
        """One packet as one `stats` line (--stats-format line)."""
        msg = {"type": "stats", "sample_id": sid, "sample_count": cnt,
               "t_start_s": t0, "t_end_s": t1}
        for name, x in zip(self.names, vals):
            msg[name] = float(x)
        msg["digital"] = dig
        send(msg)

    def add_row(self, sid, cnt, t0, t1, vals, dig, now):
        """Add a packet (arrived at host time now) to the block; one that
        does not follow on (a gap in sample ids, another count or other
        fields) starts a new block. A block goes once full or once its
        first packet is BLOCK_HOLD_S old."""
        block = self.block
        if block:
            f_sid, f_cnt, f_names = self.block_first
            if (cnt != f_cnt or f_names is not self.names or
                    sid != f_sid + f_cnt * len(block)):
                self.emit_block()
                block = self.block
        if not block:
            self.block_first = (sid, cnt, self.names)
            self.block_t = now
        block.append((t0, t1) + vals + (dig,))
        if len(block) >= BLOCK_MAX or now - self.block_t >= BLOCK_HOLD_S:
            self.emit_block()

    def emit_block(self):
        """Send the block as one stats_block line (docs/BRIDGE.md): float64
        and u32 little-endian arrays in base64. Called with self.lock held."""
        rows = self.block
        if not rows:
            return
        sid, cnt, names = self.block_first
        cols = list(zip(*rows))
        parts = ['{"type":"stats_block","sample_id":%d,"sample_count":%d,"n":%d' %
                 (sid, cnt, len(rows)),
                 ',"t_start_s":"%s","t_end_s":"%s"' % (b64_array("d", cols[0]),
                                                       b64_array("d", cols[1]))]
        for j, name in enumerate(names):
            parts.append(',"%s":"%s"' % (name, b64_array("d", cols[2 + j])))
        parts.append(',"digital":"%s"}' % b64_array(U32, cols[-1]))
        self.block = []
        send_line("".join(parts), True)
        self.prune()

    def oldest_wait_s(self, now):
        return now - self.pending[0][5] if self.pending else 0.0

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
                with self.lock:
                    self.fail("joulescope: the Joulescope %s was unplugged" % self.path)
            now = time.monotonic()
            with self.lock:
                if self.block and now - self.block_t >= BLOCK_HOLD_S:
                    self.emit_block()
            silent = stats_silence_s(self.last_stats) if self.streaming else None
            if silent is not None and silent > 1.0 + 2.0 / self.rate:
                with self.lock:
                    self.fail("joulescope: no statistics from %s for %.1f s (unplugged or "
                              "USB stalled?)" % (self.path, silent))
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
    ap.add_argument("--stats-format", choices=("block", "line"), default="block",
                    help="statistics as stats_block messages (default) or one stats "
                         "line per packet (for an ergon that does not know stats_block)")
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
