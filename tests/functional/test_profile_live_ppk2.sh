#!/usr/bin/env bash
# `ergon profile --power` in external mode with power.driver: ppk2, end to
# end (src/pipelines/profile/profile_live.c -> ergon_live_raw_capture): the jlink
# lifecycle against a fake JLinkExe whose RTT server replays the virtual
# bench's fixed-window power boot (1200 inferences of 1 ms;
# tests/support/live_bench/fake_jlink_bench.sh), and the PPK2 protocol
# simulator program (ergon_ppk2_sim) on a pty as the instrument, unpaced
# (--fast: samples as fast as ergon reads them). The simulator draws the
# firmware's window in device time, counted in samples from the stream's
# first one (--gate-at-start: the simulated target's reset): D0 (the gate)
# is high for stream samples 100,000 .. 219,999 (1.0 s after the reset,
# 1.2 s long), at 30 mA; 4 mA otherwise. The rail is 3.3 V: in case 1
# power.rail_voltage, beside a 1.8 V power.io_voltage (the target's I/O
# level, which power and energy must not use); in the other cases
# power.io_voltage, which stands for the rail when power.rail_voltage is
# not set. For a synthetic instrument the raw live capture
# takes the reset and its 60 ms grace on the samples' clock too
# (profile_live.c packet_clock): stream samples 0 .. 5,998 end before
# 6,000 / 100 kHz = 60 ms and are discarded, sample 5,999 is the first fed.
# Nothing here is paced by or measured against the host's clock, so every
# figure below is exact whatever the load.
# By hand (identity calibration, PPK2 protocol facts: one raw14 step is
# 4 x 1.8 V / 163840 = 4.39453125e-5 V across the range's shunt):
#  30 mA is on range 2 (10.15 ohm): 0.3045 V = 6929.07 steps -> 6929,
#     I_hi = 6929 x 4.39453125e-5 / 10.15 = 0.0299997106 A;
#  4 mA is on range 1 (101.65 ohm): 0.4066 V = 9252.3 steps -> 9252,
#     I_lo = 9252 x 4.39453125e-5 / 101.65 = 0.0039998 A;
#  at the rising edge the range switches 1 -> 2 and the vendor's spike
#     filter (alpha 0.18) gives y_k = 0.18 I_hi + 0.82 y_(k-1) for the 3
#     samples from the switch, y_(-1) = I_lo;
#  energy per inference = 3.3 V x 10 us x (sum of the 120,000 window
#     samples) / 1200 = 9.899758e-5 J, against the simulator's configured
#     truth 0.030 x 3.3 x 1.2 / 1200 = 9.9e-5 J; the stated uncertainty is
#     two 1 ms statistics periods at the peak power over the count,
#     2 x 0.001 x I_hi x 3.3 / 1200 = 1.65e-7 J.
# Then: Ctrl-C (SIGINT) in the middle of the live capture keeps what was
# captured, marked partial, exit 1 (docs/USAGE.md, section 6); an unplug
# inside the window keeps it too, marked, with instrument.disconnected.
. "${ERGON_SOURCE_DIR:?ERGON_SOURCE_DIR not set}/tests/support/live_bench/live_test_head.sh"

# The simulated rail: 4 mA outside the gate, 30 mA inside it.
lvl=(--current-a 0.004 --burst-a 0.030)
ppk2=(--power --set power.driver=ppk2 --set power.io_voltage=3.3)

# --- 1. a gated window end to end ---------------------------------------------
start_sim "${lvl[@]}" --fast --gate-at-start --gate-delay-s 1.0 --gate-s 1.2
"$bin" profile "$tmp/fw" "${board[@]}" --power --set power.driver=ppk2 --set power.io_voltage=1.8 \
	--set power.rail_voltage=3.3 --power-serial "$PORT" --out "$tmp/pp" \
	>"$tmp/out" 2>"$tmp/err.pp"
rc=$?
stop_sim
if [ $rc -eq 0 ]; then ok "ppk2 live profile run (exit 0)"; else
	bad "ppk2 live profile run: exit $rc"
	cat "$tmp/err.pp"
fi
if python3 - "$tmp/pp/summary.json" "ppk2:$PORT" <<'PY'; then
import json, os, sys
sys.path.insert(0, os.environ["ERGON_SOURCE_DIR"] + "/tests/support/live_bench")
from ppk2_hand import RANGE1_OHM, RANGE2_OHM, raw_current, switch_filtered
d = json.load(open(sys.argv[1]))
p = d.get("power") or {}
i_hi, i_lo = raw_current(6929, RANGE2_OHM), raw_current(9252, RANGE1_OHM)
filt = switch_filtered(i_lo, i_hi)
hand = 3.3 * 1e-5 * (sum(filt) + (120000 - 3) * i_hi) / 1200
truth = 0.030 * 3.3 * 1.2 / 1200
u_hand = 2 * 0.001 * i_hi * 3.3 / 1200
e, u = p.get("energy_per_inference_j"), p.get("energy_per_inference_uncertainty_j")
lc, s = p.get("live_capture", {}), p.get("sync", {})
errs = []
if p.get("inference_count") != 1200: errs.append("inference_count %r" % p.get("inference_count"))
if not isinstance(e, float): errs.append("no energy_per_inference_j: %r" % p)
else:
    if abs(e - truth) > u: errs.append("epi %.9g, truth %.9g +- %r" % (e, truth, u))
    # float samples and float 3.3 V: 1e-6 relative.
    if abs(e - hand) > 1e-6 * hand: errs.append("epi %.9g, by hand %.9g" % (e, hand))
if u is None or abs(u - u_hand) > 1e-6 * u_hand: errs.append("uncertainty %r, by hand %g" % (u, u_hand))
if p.get("gated_duration_s") != 1.2: errs.append("gate %r s, not 120000 samples" % p.get("gated_duration_s"))
if lc.get("instrument") != sys.argv[2] or lc.get("stream") != "raw_samples": errs.append("live %r" % lc)
if lc.get("source") != "synthetic": errs.append("a simulator's figures are not measured: %r" % lc.get("source"))
if d.get("provenance", {}).get("kind") != "synthetic": errs.append("provenance %r" % d.get("provenance"))
if lc.get("samples_lost") != 0 or lc.get("end") != "windows_closed": errs.append("live %r" % lc)
# The grace on the samples' clock: samples 0 .. 5998 end before 60 ms.
if lc.get("samples_discarded") != 5999: errs.append("reset grace: %r samples discarded, not 5999" % lc.get("samples_discarded"))
# Fed from stream sample 5,999 up to and including sample 220,000, the
# first low one, where the window closed and feeding stops: 214,002.
fed = lc.get("samples_fed")
if fed != 220000 - 5999 + 1: errs.append("samples_fed %r, by hand 214002" % fed)
w = p.get("whole_capture_window", {})
if w.get("samples") != fed: errs.append("whole window %r samples, fed %r" % (w.get("samples"), fed))
if lc.get("gate_rises") != 1: errs.append("rises %r" % lc.get("gate_rises"))
if lc.get("rail_voltage", {}).get("v") != 3.3 or lc["rail_voltage"].get("from") != "power.rail_voltage": errs.append("rail %r" % lc.get("rail_voltage"))
if "applied" not in lc.get("identity", {}).get("notes", ""): errs.append("identity: spike filter not named")
if not (s.get("gate_only") is True and s.get("lockstep") is False): errs.append("sync %r" % s)
if p.get("integrity") != "valid": errs.append("integrity %r %r" % (p.get("integrity"), [i["code"] for i in d.get("issues", [])]))
if p.get("per_inference_metrics_omitted") is not False: errs.append("per-inference withheld")
if p.get("gate", {}).get("sample_rate_hz") != 100000.0: errs.append("gate %r" % p.get("gate"))
if errs:
    print("\n".join(errs)); sys.exit(1)
PY
	ok "ppk2: energy per inference within its uncertainty of the truth, and equal to the hand figure"
else bad "ppk2: power section"; fi
grep -q "CMD loadfile $tmp/fw/app_power.elf" "$tmp/jlink.calls" && ok "the power build was flashed" ||
	bad "power build not flashed"

# --- 2. Ctrl-C during the live capture ----------------------------------------
# The gate never rises (no window); the simulator sends 50,000 samples and
# pauses, and says once ergon has read every one of them (--drained-file);
# then SIGINT. The wait for that cue is bounded (60 s) but nothing is
# asserted about how long it took.
start_sim "${lvl[@]}" --fast --period-s 0 --samples 50000 --drained-file "$tmp/drained"
"$bin" profile "$tmp/fw" "${board[@]}" "${ppk2[@]}" --power-serial "$PORT" --out "$tmp/int" \
	>"$tmp/out" 2>"$tmp/err.int" &
pid=$!
for _ in $(seq 1 1200); do [ -e "$tmp/drained" ] && break; sleep 0.05; done
[ -e "$tmp/drained" ] || bad "Ctrl-C: ergon never read the simulator's 50,000 samples"
kill -INT $pid
wait $pid
rc=$?
stop_sim
if [ $rc -eq 1 ]; then ok "Ctrl-C: exit 1 (interrupted, as documented)"; else
	bad "Ctrl-C: exit $rc"
	cat "$tmp/err.int"
fi
if python3 - "$tmp/int/summary.json" <<'PY'; then
import json, os, sys
sys.path.insert(0, os.environ["ERGON_SOURCE_DIR"] + "/tests/support/live_bench")
from ppk2_hand import RANGE1_OHM, raw_current
d = json.load(open(sys.argv[1]))
p = d.get("power") or {}
lc = p.get("live_capture", {})
w = p.get("whole_capture_window", {})
errs = []
if d.get("stages", {}).get("power", {}).get("status") != "interrupted": errs.append("stage %r" % d.get("stages", {}).get("power"))
if "profile.interrupted" not in [i["code"] for i in d.get("issues", [])]: errs.append("no profile.interrupted")
if p.get("partial") is not True or "SIGINT" not in p.get("partial_reason", ""): errs.append("not marked partial: %r" % p.get("partial_reason"))
if p.get("energy_per_inference_j") is not None or p.get("per_inference_metrics_omitted") is not True: errs.append("a per-inference figure from an interrupted capture")
if lc.get("end") != "signal": errs.append("live end %r" % lc.get("end"))
n = lc.get("samples_fed", 0)
# All 50,000 were read before SIGINT: 5,999 in the grace, the rest fed.
if lc.get("samples_discarded") != 5999 or n != 50000 - 5999: errs.append("fed %r, discarded %r; want 44001 and 5999" % (n, lc.get("samples_discarded")))
if w.get("samples") != n: errs.append("whole window %r samples, fed %r" % (w.get("samples"), n))
if lc.get("rail_voltage") != {"v": 3.3, "from": "power.io_voltage (power.rail_voltage not set)", "note": lc.get("rail_voltage", {}).get("note")}: errs.append("rail %r" % lc.get("rail_voltage"))
# Kept figures, by hand: n samples of I_lo at 3.3 V.
i_lo = raw_current(9252, RANGE1_OHM)
want = n * 1e-5 * i_lo * 3.3
if not abs(w.get("energy_j", 0) - want) <= 1e-6 * want: errs.append("whole energy %r, by hand %r" % (w.get("energy_j"), want))
if errs:
    print("\n".join(errs)); sys.exit(1)
PY
	ok "Ctrl-C: the captured samples are kept (whole-capture energy by hand), marked partial, no per-inference figure"
else bad "Ctrl-C: summary"; fi

# --- 3. the PPK2 unplugged inside the window ------------------------------------
# Halfway through the window (--unplug-in-gate 0.5): the simulator sends
# stream samples 0 .. 159,999 (1.0 s + 0.6 s), waits until ergon has read
# them, and unplugs.
start_sim "${lvl[@]}" --fast --gate-at-start --gate-delay-s 1.0 --gate-s 1.2 --unplug-in-gate 0.5
"$bin" profile "$tmp/fw" "${board[@]}" "${ppk2[@]}" --power-serial "$PORT" --out "$tmp/up" \
	>"$tmp/out" 2>"$tmp/err.up"
rc=$?
stop_sim
if [ $rc -eq 1 ] && grep -q "disconnected after" "$tmp/err.up"; then
	ok "unplug: exit 1, says the PPK2 disconnected"
else
	bad "unplug: exit $rc"
	cat "$tmp/err.up"
fi
if python3 - "$tmp/up/summary.json" <<'PY'; then
import json, os, sys
sys.path.insert(0, os.environ["ERGON_SOURCE_DIR"] + "/tests/support/live_bench")
from ppk2_hand import RANGE1_OHM, RANGE2_OHM, raw_current, switch_filtered
d = json.load(open(sys.argv[1]))
p = d.get("power") or {}
lc = p.get("live_capture", {})
codes = [i["code"] for i in d.get("issues", [])]
errs = []
if "instrument.disconnected" not in codes: errs.append("no instrument.disconnected in %r" % codes)
if p.get("partial") is not True or p.get("energy_per_inference_j") is not None: errs.append("partial %r epi %r" % (p.get("partial"), p.get("energy_per_inference_j")))
if lc.get("end") != "instrument_failed": errs.append("live end %r" % lc.get("end"))
# Every sample sent before the unplug is kept: 5,999 in the grace, the
# other 154,001 fed (94,001 before the window, its first 60,000).
fed = lc.get("samples_fed", 0)
if fed != 160000 - 5999 or lc.get("samples_discarded") != 5999: errs.append("samples_fed %r, discarded %r: want 154001 and 5999" % (fed, lc.get("samples_discarded")))
w = p.get("whole_capture_window", {})
i_hi, i_lo = raw_current(6929, RANGE2_OHM), raw_current(9252, RANGE1_OHM)
filt = sum(switch_filtered(i_lo, i_hi))
want = 3.3 * 1e-5 * ((100000 - 5999) * i_lo + filt + (60000 - 3) * i_hi)
if not abs(w.get("energy_j", 0) - want) <= 1e-6 * want: errs.append("whole energy %r, by hand %r" % (w.get("energy_j"), want))
if p.get("whole_capture_window", {}).get("samples") != lc.get("samples_fed"): errs.append("whole %r" % p.get("whole_capture_window"))
if p.get("gate", {}).get("unterminated_start_s") is None: errs.append("the open window is not said: %r" % p.get("gate"))
if errs:
    print("\n".join(errs)); sys.exit(1)
PY
	ok "unplug: everything measured kept, marked, the open window said"
else bad "unplug: summary"; fi

# --- 4. the gate never rises: the timeout names the logic level -----------------
# No gate at all; power.duration_s 1 bounds the wait (on the samples' clock
# for the simulator). The message must send the user to the wire and to
# the logic reference (issue 37: it said nothing of Vref or io_voltage).
start_sim "${lvl[@]}" --fast --period-s 0
"$bin" profile "$tmp/fw" "${board[@]}" "${ppk2[@]}" --set power.duration_s=1 --power-serial "$PORT" \
	--out "$tmp/ng" >"$tmp/out" 2>"$tmp/err.ng"
rc=$?
stop_sim
if [ $rc -ne 0 ] && grep -q "no gate window of at least" "$tmp/err.ng" &&
	grep -q "power.io_voltage 3.3 V" "$tmp/err.ng" && grep -q "VCC pin" "$tmp/err.ng" &&
	grep -q "target pin 5 -> instrument D0" "$tmp/err.ng" &&
	grep -q "within 11.0 s of the synthetic instrument's own clock" "$tmp/err.ng"; then
	ok "no gate: exit $rc, the hint names the wire, power.io_voltage, the PPK2's VCC reference and the simulator's clock"
else
	bad "no gate: exit $rc"
	cat "$tmp/err.ng"
fi

if grep -l "Sanitizer" "$tmp"/err.* >/dev/null 2>&1; then bad "sanitizer report"; fi
[ $fails -eq 0 ] || exit 1
