#!/usr/bin/env python3
"""A small, complete instrument bridge (docs/BRIDGE.md) for the tests.

It simulates a meter at 3.3 V whose current alternates every 100 packets
between 10 mA (input 0 low) and 20 mA (input 0 high), with statistics
packets at --rate Hz on a base clock of 1 MHz. Packet k covers samples
[k*S, (k+1)*S) with S = 1e6 / rate. Every figure a test asserts is computed
by hand from that description, not from this program's output.

Faults: --garbage-after N, --nan-after N, --stall-after N, --exit-after N,
--huge-line-after N (a 2 MiB line), --stderr-flood BYTES
(with --status S), --error-after N, --gap-at N (--gap-len K packets),
--no-hello, --devices A,B (no --serial: error listing them), --raw (raw
blocks instead of statistics), --block N (statistics as stats_block
messages of up to N packets; a gap, a stop or the last packet sends the
block early), --time-back-at N (packet N starts 0.5 ms before packet N-1
ended), --set-at N --set F=X[,F=X] (packet N's fields F take the values
X, e.g. an impossible i_min_a), --realtime (pace packets to the host clock,
clock host_monotonic), --quit-status S (exit status after quit).

--lockstep simulates a target in lock-step instead: its reset is the
start; input 0 glitches (toggles every 5 packets) for the first 50 ms,
input 1 (READY) is high from 100 ms (never with --no-ready); once output 0
(GO) is set the gate (input 0) rises 20 ms later and stays high for 1.2 s
at 30 mA; 5 mA otherwise. With --realtime, GO's time is the host clock's.
Without it the stream is on its own clock, as fast as the pipe takes it,
and holds after the first READY packet until GO arrives, as if the host
answered within that packet: GO is then at the end of packet 100 (0.101 s
at 1 kHz), the gate is high for exactly packets 121..1320, and nothing
depends on the scheduler.
"""
import argparse
import base64
import json
import os
import select
import struct
import sys
import time

V = 3.3


def current_a(k):
    return 0.020 if (k // 100) % 2 else 0.010


def send(obj, allow_nan=False):
    sys.stdout.write(json.dumps(obj, allow_nan=allow_nan) + "\n")
    sys.stdout.flush()


BLOCK_FIELDS = ("t_start_s", "t_end_s", "i_avg_a", "i_std_a", "i_min_a", "i_max_a", "v_avg_v",
                "p_avg_w", "charge_c", "energy_j")


def send_block(pk):
    """The stats messages in pk as one stats_block (docs/BRIDGE.md): float64
    and u32 little-endian arrays in base64; empties pk."""
    if not pk:
        return
    msg = {"type": "stats_block", "sample_id": pk[0]["sample_id"],
           "sample_count": pk[0]["sample_count"], "n": len(pk)}
    for f in BLOCK_FIELDS:
        msg[f] = base64.b64encode(struct.pack("<%dd" % len(pk), *[p[f] for p in pk])).decode()
    msg["digital"] = base64.b64encode(
        struct.pack("<%dI" % len(pk), *[p["digital"] for p in pk])).decode()
    send(msg)
    del pk[:]


def main():
    ap = argparse.ArgumentParser()
    # --stats-rate: the joulescope driver passes the rate asked for (issue 29).
    ap.add_argument("--rate", "--stats-rate", dest="rate", type=float, default=1000.0)
    ap.add_argument("--packets", type=int, default=-1)
    ap.add_argument("--realtime", action="store_true")
    ap.add_argument("--raw", action="store_true")
    ap.add_argument("--heartbeat", type=float, default=1.0)
    ap.add_argument("--garbage-after", type=int, default=-1)
    ap.add_argument("--nan-after", type=int, default=-1)
    ap.add_argument("--stall-after", type=int, default=-1)
    ap.add_argument("--exit-after", type=int, default=-1)
    ap.add_argument("--status", type=int, default=3)
    ap.add_argument("--error-after", type=int, default=-1)
    ap.add_argument("--gap-at", type=int, default=-1)
    ap.add_argument("--gap-len", type=int, default=5)
    ap.add_argument("--no-hello", action="store_true")
    ap.add_argument("--devices", default="")
    ap.add_argument("--serial", default="")
    ap.add_argument("--quit-status", type=int, default=0)
    ap.add_argument("--huge-line-after", type=int, default=-1)
    ap.add_argument("--lockstep", action="store_true")
    ap.add_argument("--no-ready", action="store_true")
    ap.add_argument("--stderr-flood", type=int, default=0, help="bytes to stderr at start")
    ap.add_argument("--block", type=int, default=0)
    ap.add_argument("--time-back-at", type=int, default=-1)
    ap.add_argument("--set-at", type=int, default=-1)
    ap.add_argument("--set", default="")
    a = ap.parse_args()

    if a.no_hello:
        sys.stderr.write("fake: cannot open the device\n")
        sys.exit(3)
    devices = [d for d in a.devices.split(",") if d]
    if len(devices) > 1 and not a.serial:
        send({"type": "error",
              "message": "%d devices and no serial given: %s; pick one with SERIAL"
              % (len(devices), ", ".join(devices))})
        sys.exit(2)

    if a.stderr_flood:
        chunk = b"x" * 65535 + b"\n"
        for _ in range(a.stderr_flood // len(chunk)):
            os.write(2, chunk)
        os.write(2, b"fake: flood done\n")
    spp = int(round(1e6 / a.rate))  # samples per packet
    send({"type": "hello", "protocol": 1, "vendor": "ergon-tests", "model": "fake-meter",
          "serial": a.serial or "FAKE0001", "accuracy_pct": 0.5, "resolution_a": 1e-9,
          "resolution_w": 3.3e-9, "resolution_j": 1e-12, "sample_rate_hz": 1e6,
          "stats_rate_hz": a.rate, "integrates": "energy+charge", "provenance": "synthetic",
          "clock": "host_monotonic" if a.realtime else "instrument",
          "streams": ["raw"] if a.raw else ["stats"], "inputs": 2, "outputs": 1,
          "passthrough": True, "heartbeat_s": a.heartbeat,
          "validated_against": "nothing: tests/support/bridge_fake.py is a simulator",
          "notes": "test fake"})

    streaming = False
    k = 0  # packets emitted
    sid = 0  # next sample id
    charge = energy = 0.0
    t0 = 0.0
    gpo = 0
    t_go = None  # lock-step: simulated time at which GO was set
    ready_sent = False  # lock-step: a packet with READY went out
    last_hb = time.monotonic()
    stdin = sys.stdin.fileno()
    buf = b""
    pk = []  # --block: the stats waiting to go as one stats_block
    while True:
        r, _, _ = select.select([stdin], [], [], 0.002)
        if r:
            chunk = os.read(stdin, 4096)
            if not chunk:
                sys.exit(a.quit_status)
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                cmd = json.loads(line)
                c, cid = cmd["cmd"], cmd["id"]
                if c == "start":
                    streaming = True
                    t0 = time.monotonic()
                    send({"type": "ack", "id": cid, "ok": True})
                elif c == "stop":
                    streaming = False
                    send_block(pk)
                    send({"type": "ack", "id": cid, "ok": True})
                elif c == "gpo":
                    if cmd.get("set", 0) & 1 and t_go is None:
                        t_go = time.monotonic() - t0 if a.realtime else sid / 1e6
                    gpo |= cmd.get("set", 0)
                    gpo &= ~cmd.get("clear", 0)
                    send({"type": "ack", "id": cid, "ok": True})
                elif c == "gpi":
                    send({"type": "gpi", "id": cid, "value": 1 | (gpo << 1)})
                elif c == "passthrough":
                    send({"type": "ack", "id": cid, "ok": True})
                elif c == "quit":
                    send({"type": "ack", "id": cid, "ok": True})
                    sys.exit(a.quit_status)
                else:
                    send({"type": "ack", "id": cid, "ok": False, "message": "unknown " + c})
        now = time.monotonic()
        if now - last_hb > a.heartbeat / 4:
            send({"type": "heartbeat"})
            last_hb = now
        if not streaming or (a.packets >= 0 and k >= a.packets):
            continue
        # Emit what is due: everything at once, or paced to the clock.
        due = int((now - t0) * a.rate) if a.realtime else k + 50
        while k < due and (a.packets < 0 or k < a.packets):
            if a.lockstep and not a.realtime and ready_sent and t_go is None:
                break  # the target waits for GO; so does its simulated clock
            if k == a.garbage_after:
                sys.stdout.write("this is not json\n")
                sys.stdout.flush()
            if k == a.nan_after:
                send({"type": "stats", "sample_id": sid, "sample_count": spp,
                      "t_start_s": 1.0, "t_end_s": 1.001, "i_avg_a": float("nan")},
                     allow_nan=True)
            if k == a.huge_line_after:
                sys.stdout.write("{\"type\":\"error\",\"message\":\"" + "y" * (2 << 20))
                sys.stdout.flush()
                time.sleep(3600)
            if k == a.stall_after:
                time.sleep(3600)
            if k == a.exit_after:
                sys.stderr.write("fake: exiting with status %d\n" % a.status)
                sys.exit(a.status)
            if k == a.error_after:
                send({"type": "error", "message": "fake: the device was unplugged"})
                sys.exit(1)
            if k == a.gap_at:
                send_block(pk)
                sid += a.gap_len * spp  # these samples never arrive
            i, dig = current_a(k), (k // 100) % 2
            if a.lockstep:
                tm = (k + 0.5) / a.rate
                gate = t_go is not None and t_go + 0.02 <= tm < t_go + 0.02 + 1.2
                glitch = tm < 0.05 and (k // 5) % 2
                dig = (1 if gate or glitch else 0) | ((0 if a.no_ready or tm < 0.1 else 1) << 1)
                ready_sent = ready_sent or bool(dig & 2)
                i = 0.030 if gate else 0.005
            dt = spp / 1e6
            ts = sid / 1e6 + (t0 if a.realtime else 0.0)
            charge += i * dt
            energy += i * V * dt
            if a.raw:
                n = spp
                send({"type": "raw", "sample_id": sid, "t_s": ts, "n": n,
                      "current_a": base64.b64encode(struct.pack("<%df" % n, *([i] * n))).decode(),
                      "voltage_v": base64.b64encode(struct.pack("<%df" % n, *([V] * n))).decode(),
                      "digital": base64.b64encode(bytes([(k // 100) % 2] * n)).decode()})
            else:
                if k == a.time_back_at:
                    ts -= 0.0005
                msg = {"type": "stats", "sample_id": sid, "sample_count": spp,
                       "t_start_s": ts, "t_end_s": ts + dt, "i_avg_a": i, "i_std_a": 0.0,
                       "i_min_a": i, "i_max_a": i, "v_avg_v": V, "p_avg_w": i * V,
                       "charge_c": charge, "energy_j": energy, "digital": dig}
                if k == a.set_at:
                    for kv in a.set.split(","):
                        f, x = kv.split("=")
                        msg[f] = float(x)
                if a.block:
                    pk.append(msg)
                    if len(pk) >= a.block or k + 1 == a.packets:
                        send_block(pk)
                else:
                    send(msg)
            sid += spp
            k += 1
        send_block(pk)  # what is due goes now


if __name__ == "__main__":
    main()
