"""A replaying pyjoulescope_driver for bench/bench_js_bridge.py: it delivers
one prepared JS220 statistics value dict (sample ids, times and
accumulators advanced per packet, currents constant) and input blocks of
10,000 samples, as fast as the bridge takes them, so that the chain's
figures (bridge + ergon) do not include the cost of simulating a target
(tests/support/pyjoulescope_stub does that, and costs ~12 us a packet).
Not the vendor's code; what the vendor's driver costs per packet is not
known here (no Joulescope on this machine)."""
import threading

__version__ = "0.0-ergon-replay"
ERGON_STUB = True
PATH = "u/js220/000415"


def _value(spp):
    sig = lambda avg, u: {s: {"value": v, "units": u} for s, v in
                          (("avg", avg), ("std", 0.0), ("min", avg), ("max", avg), ("p2p", 0.0))}
    return {"time": {"samples": {"value": [0, spp], "units": "samples"},
                     "sample_freq": {"value": 1000000, "units": "Hz"},
                     "range": {"value": [0.0, spp * 1e-6], "units": "s"},
                     "delta": {"value": spp * 1e-6, "units": "s"}},
            "signals": {"current": sig(0.002, "A"), "voltage": sig(3.0, "V"),
                        "power": sig(0.006, "W")},
            "accumulators": {"charge": {"value": 0.0, "units": "C"},
                             "energy": {"value": 0.0, "units": "J"}},
            "source": "sensor"}


class Driver:
    def __init__(self):
        self.subs = {}
        self.scnt = 1000
        self.on = False
        self.thread = None
        self.ergon_stub_unpaced = True  # no real-time clock: no lag check

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.on = False

    def device_paths(self, timeout=None):
        return [PATH]

    def open(self, path, mode=None, timeout=None):
        pass

    def close(self, path, timeout=None):
        self.on = False

    def subscribe(self, topic, flags, fn, timeout=None):
        self.subs.setdefault(topic, []).append(fn)

    def _deliver(self, topic, value):
        for fn in self.subs.get(topic, ()):
            fn(topic, value)

    def publish(self, topic, value, timeout=None):
        sub = topic[len(PATH) + 1:]
        if sub == "s/stats/scnt":
            self.scnt = int(value)
        elif sub == "s/stats/ctrl":
            if value and not self.on:
                self.on = True
                self.thread = threading.Thread(target=self.run, daemon=True)
                self.thread.start()
            elif not value and self.on:
                self.on = False
                if self.thread is not threading.current_thread():
                    self.thread.join(1.0)
        return 0

    def run(self):
        spp, sid, k = self.scnt, 1000000, 0
        v = _value(spp)
        ts, tr = v["time"]["samples"], v["time"]["range"]
        q, e = v["accumulators"]["charge"], v["accumulators"]["energy"]
        topic = PATH + "/s/stats/value"
        block = 10000  # input samples per input block
        covered = sid
        zeros = bytes(block // 8)
        while self.on:
            if sid + spp > covered:
                for n in (0, 1):
                    self._deliver(PATH + "/s/gpi/%d/!data" % n,
                                  {"sample_id": covered, "sample_rate": 1000000,
                                   "decimate_factor": 1, "data": zeros})
                covered += block
            ts["value"] = [sid, sid + spp]
            tr["value"] = [sid * 1e-6, (sid + spp) * 1e-6]
            k += 1
            q["value"] = 0.002 * spp * 1e-6 * k
            e["value"] = 0.006 * spp * 1e-6 * k
            self._deliver(topic, v)
            sid += spp
