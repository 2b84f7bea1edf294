#!/usr/bin/env bash
# Exit codes say one thing in every command that writes an artifact (issue
# 17 item 9): 0 valid (every figure published, warnings allowed, THROTTLED
# included), 4 degraded (written, some figures withheld), 1 invalid or
# refused, 2 usage, 3 I/O or device. One table row per command and code,
# each with an input built so that the outcome is known without asking
# ergon (a gateless recording has no gate window; a log without HPX_END is
# cut; a second rail set without VDD_IN has no total rail). Then: README's
# table, `ergon help exit-codes` and every --help print the same table, and
# profile never shows "stage power: ok" beside a NOT VALID or DEGRADED
# result without the check that decided it (every scenario:
# test_exit_codes_stages.sh).
. "$(dirname "$0")/run_lib.sh"
: "${ERGON_SOURCE_DIR:?}" "${ERGON_BUILD_DIR:?}" "${ERGON_SHARED_DIR:?}"
E=$ERGON_BIN
SIM=$ERGON_BUILD_DIR/ergon_ppk2_sim
PER=(--workload builtin:periodic,burst_ms=0,sleep_ms=2)
SHORTRUN=(--idle-s 0.2 --windows 2 --window-s 0.2)
JLS=$ERGON_SHARED_DIR/fixtures/jls/shared_basic.jls
HPX=$ERGON_SHARED_DIR/fixtures/hpx/legacy.hpx.txt

# --- inputs -----------------------------------------------------------
# Two rails of a fake Jetson hwmon tree, neither the module's total input.
h=$TMP/sys/sys/class/hwmon/hwmon0
mkdir -p "$h"
echo ina3221 >"$h/name"
i=1
for l in VDD_IN VDD_CPU_GPU_CV VDD_SOC; do
  echo "$l" >"$h/in${i}_label"; echo 5000 >"$h/in${i}_input"; echo 400 >"$h/curr${i}_input"
  echo 5000 >"$h/shunt${i}_resistor"; i=$((i + 1))
done
# A raw recording at 1 kHz whose gate (digital bit 0) never rises; one
# whose row 3 is not a number; a recording with a 2 s gate window.
python3 - "$TMP" <<'PY'
import sys
d = sys.argv[1]
with open(d + "/nogate.csv", "w") as f:
    f.write("t_s,current_a,voltage_v,power_w,digital\n")
    for k in range(3000):
        f.write("%.3f,0.010,1.8,0.018,0\n" % (k / 1000))
with open(d + "/bad.csv", "w") as f:
    f.write("t_s,current_a,voltage_v\n0.000,0.01,1.8\n0.001,0.01,1.8\n0.002,x,1.8\n")
PY
# HPX logs: complete, cut before HPX_END, and one that holds no profile.
grep -v -- '--- HPX_END ---' "$HPX" >"$TMP/cut.hpx"
printf 'boot banner\nno profile here\n' >"$TMP/none.hpx"

# --- run --------------------------------------------------------------
expect 0 "run: valid" -- "$E" run --device d --instrument synthetic "${PER[@]}" "${SHORTRUN[@]}" \
  --out "$TMP/run0.json"
# test_run_cli's THROTTLED scenario: 50 % less throughput from 0.3 s on.
expect 0 "run: THROTTLED is a finding, not a fault" -- "$E" run --device d --instrument synthetic \
  --instrument-opt throttle_s=0.3 --instrument-opt drop=0.5 --instrument-opt noise_w=0 \
  "${PER[@]}" --idle-s 0.2 --windows 4 --window-s 0.25 --out "$TMP/thr.json"
contains "$OUT" "sustained   : THROTTLED from t=" "the run says THROTTLED"
# The throttle does not lower the integrity: run.throttled is info, and the
# integrity is what the other issues make it by the worst-severity rule
# (a loaded machine may add run.sampler_gap, a warning).
python3 - "$TMP/thr.json" <<'PY' && ok "run.throttled is info and leaves the integrity alone" ||
import json, sys
d = json.load(open(sys.argv[1]))
sev = [i["severity"] for i in d["issues"] if i["code"] == "run.throttled"]
assert sev == ["info"], sev
rest = {i["severity"] for i in d["issues"] if i["code"] != "run.throttled"}
want = "invalid" if "error" in rest else "degraded" if "warning" in rest else "valid"
assert d["integrity"] == want, (d["integrity"], want, d["issues"])
PY
  bad "run.throttled severity or the integrity it leaves"
expect 4 "run: headline withheld (two rails, no total input)" -- "$E" run --device jet \
  --instrument hwmon:VDD_CPU_GPU_CV,VDD_SOC --sysfs-root "$TMP/sys" "${PER[@]}" "${SHORTRUN[@]}" \
  --out "$TMP/run4.json"
contains "$OUT" "headline    : WITHHELD" "the summary says the headline is withheld"
contains "$ERR" "ergon run: DEGRADED (exit 4): headline figures withheld (run.no_total_rail" \
  "stderr names the verdict and the issue"
expect 1 "run: invalid (no invocation succeeds)" -- "$E" run --device d --instrument synthetic \
  --workload command:false "${SHORTRUN[@]}" --out "$TMP/run1.json"
contains "$ERR" "NOT VALID (exit 1): failed: " "stderr names the failed checks"
contains "$ERR" "run.no_operations" "the failed check is run.no_operations"
[ -f "$TMP/run1.json" ] && ok "the invalid report is kept" || bad "no report for the invalid run"
expect 2 "run: usage" -- "$E" run --device d --bogus
expect 3 "run: I/O (--out in /proc)" -- "$E" run --device d --instrument synthetic "${PER[@]}" \
  "${SHORTRUN[@]}" --out /proc/ergon-exit-codes.json

# --- profile (the virtual bench) -------------------------------------
expect 0 "profile: valid" -- "$E" profile --board sim --power --out "$TMP/p0"
expect 0 "profile: a warning, every figure published (frozen_window_clock)" -- \
  "$E" profile --board sim --sim-scenario frozen_window_clock --out "$TMP/pw"
contains "$OUT" "valid: $TMP/pw/summary.json (integrity degraded)" "valid although integrity is degraded"
expect 4 "profile: per-inference withheld (gate_never_falls)" -- \
  "$E" profile --board sim --sim-scenario gate_never_falls --out "$TMP/p4"
contains "$OUT" "stage power: ok - it ran, but the result is DEGRADED: no qualifying gate window (gate_failure no_gate_fall)" \
  "the power stage line says what was withheld"
# The PMU stage's line carries its own stage's faults only (issue 35): the
# gate is the power stage's.
contains "$OUT" "stage pmu  : ok - its own checks passed; the result is DEGRADED by stage power" \
  "the pmu stage line does not repeat the power stage's fault"
[ "$(grep -c "no qualifying gate window" <<<"$OUT")" = 2 ] && ok "the fault is on stdout twice (power line, verdict line)" ||
  bad "the fault is repeated $(grep -c "no qualifying gate window" <<<"$OUT") times on stdout"
contains "$OUT" "DEGRADED: $TMP/p4/summary.json" "the verdict line says DEGRADED"
expect 1 "profile: a failed check (hfrc_drift)" -- \
  "$E" profile --board sim --sim-scenario hfrc_drift --out "$TMP/p1"
contains "$OUT" "stage power: ok - it ran, but the result is NOT VALID: failed: power.window_observer_mismatch" \
  "stage power: ok names the failed check"
contains "$OUT" "NOT VALID: $TMP/p1/summary.json (integrity invalid): failed: power.window_observer_mismatch" \
  "the NOT VALID line names the failed check"
# Every scenario's stage lines: test_exit_codes_stages.sh.
expect 2 "profile: usage (unknown scenario)" -- "$E" profile --board sim --sim-scenario nope --out "$TMP/pn"
expect 3 "profile: I/O (--out in /proc)" -- "$E" profile --board sim --out /proc/ergon-exit-codes

# --- capture and parse (HPX) -----------------------------------------
hpx() { # CMD LOG OUT: ergon capture (from a file transport) or ergon parse of LOG
  if [ "$1" = capture ]; then "$E" capture --transport "file:$2" --out "$3"; else "$E" parse "$2" --out "$3"; fi
}
for c in capture parse; do
  expect 0 "$c: valid (HPX_END)" -- hpx "$c" "$HPX" "$TMP/$c-0"
  expect 4 "$c: cut before HPX_END" -- hpx "$c" "$TMP/cut.hpx" "$TMP/$c-4"
  contains "$ERR" "DEGRADED (exit 4): the stream ended before HPX_END" "$c says what is missing"
  expect 1 "$c: no profile (pmu.missing)" -- hpx "$c" "$TMP/none.hpx" "$TMP/$c-1"
  contains "$ERR" "failed: pmu.missing" "$c names pmu.missing"
  expect 3 "$c: I/O (no such file)" -- hpx "$c" "$TMP/absent.hpx" "$TMP/$c-3"
done
expect 2 "capture: usage (no --transport)" -- "$E" capture --out "$TMP/c2"
expect 2 "parse: usage" -- "$E" parse "$HPX" --aggregation mode

# --- analyze ----------------------------------------------------------
expect 0 "analyze: valid (one gate window, no facts asked)" -- "$E" analyze --jls "$JLS" --out "$TMP/a0"
expect 4 "analyze: no gate window (whole capture only)" -- "$E" analyze --raw "$TMP/nogate.csv" --out "$TMP/a4"
contains "$ERR" "DEGRADED (exit 4): no qualifying gate window (gate_failure no_gate_rise)" "names the withheld figures"
expect 1 "analyze: a check failed (recording_unusable)" -- "$E" analyze --raw "$TMP/bad.csv" --out "$TMP/a1"
contains "$ERR" "failed: power.recording_unusable" "names the failed check"
expect 2 "analyze: usage (no --out)" -- "$E" analyze --jls "$JLS"
expect 3 "analyze: I/O (no such recording)" -- "$E" analyze --jls "$TMP/absent.jls" --out "$TMP/a3"

# --- record (the PPK2 simulator) --------------------------------------
start_sim() { # ARGS...: sets SIMPID and PORT
  coproc SIMP { exec "$SIM" --fast --current-a 0.004 --burst-a 0.004 --period-s 0 "$@"; }
  SIMPID=$SIMP_PID
  read -r PORT <&"${SIMP[0]}"
}
stop_sim() { kill "$SIMPID" 2>/dev/null; wait "$SIMPID" 2>/dev/null; }
start_sim
expect 0 "record: valid" -- "$E" record --instrument "ppk2:$PORT" --instrument-opt vdd_mv=3000 \
  --duration-s 0.2 --out "$TMP/r0.jls"
stop_sim
start_sim --gap-at 1000:40
expect 4 "record: 40 samples lost (NaN)" -- "$E" record --instrument "ppk2:$PORT" \
  --instrument-opt vdd_mv=3000 --duration-s 0.2 --out "$TMP/r4.jls"
contains "$ERR" "DEGRADED (exit 4): 40 sample(s) lost" "says how many were lost"
stop_sim
start_sim --disconnect-after 5000
expect 1 "record: incomplete (the instrument went away)" -- "$E" record --instrument "ppk2:$PORT" \
  --instrument-opt vdd_mv=3000 --duration-s 0.2 --out "$TMP/r1.jls"
[ -s "$TMP/r1.jls" ] && ok "the incomplete recording is kept" || bad "no file for the incomplete recording"
stop_sim
expect 2 "record: usage" -- "$E" record --instrument ppk2 --durration 1 --out "$TMP/r2.jls"
expect 3 "record: device (not a streaming instrument)" -- "$E" record --instrument synthetic \
  --duration-s 0.2 --out "$TMP/r3.jls"

# --- verify -----------------------------------------------------------
expect 0 "verify: a valid report" -- "$E" verify "$TMP/run0.json"
expect 0 "verify: a degraded report verifies too (verify writes no artifact: 4 is not used)" -- \
  "$E" verify "$TMP/run4.json"
sed 's/"count": \([0-9]\)/"count": 9\1/' "$TMP/run0.json" >"$TMP/edited.json"
expect 1 "verify: an edited report" -- "$E" verify "$TMP/edited.json"
expect 2 "verify: usage (no file)" -- "$E" verify
printf '{"schema": ' >"$TMP/notjson.json"
expect 3 "verify: I/O (not JSON)" -- "$E" verify "$TMP/notjson.json"

# --- one table: README, ergon help exit-codes, every --help, the man pages
expect 0 "ergon help exit-codes" -- "$E" help exit-codes
HELP=$OUT
printf '%s\n' "$OUT" >"$TMP/help.txt"
python3 - "$TMP/help.txt" "$ERGON_SOURCE_DIR/README.md" "$ERGON_SOURCE_DIR/docs/USAGE.md" <<'PY' &&
import re, sys
norm = lambda s: re.sub(r"\s+", " ", s).strip()
help_text = open(sys.argv[1]).read()
# The general block: "  CODE  NAME  meaning" rows up to the first blank line.
block = help_text.split("One meaning in every command that writes an artifact:\n", 1)[1]
block = block.split("\n\n", 1)[0] + "\n"
rows = re.findall(r"^  (\d)  (\w+)\s+(.*?)(?=^  \d  |\Z)", block, re.M | re.S)
want = [(c, n, norm(m)) for c, n, m in rows]
assert [c for c, _, _ in want] == ["0", "4", "1", "2", "3"], want
for doc in sys.argv[2:]:
    sec = open(doc).read().split("## Exit codes", 1)[1]
    got = re.findall(r"^\| (\d) \| (\w+) \| (.*?) \|$", sec, re.M)[:5]
    got = [(c, n, norm(m)) for c, n, m in got]
    assert got == want, (doc, got, want)
PY
  ok "README and USAGE tables = ergon help exit-codes" || bad "a table differs from ergon help exit-codes"
# Every command's --help ends with its exit codes: the five for those that
# write an artifact, the ones that occur for the others (verify writes
# none: no 4), and what each means for it = its block of help exit-codes.
for c in $("$E" __complete commands); do
  "$E" "$c" --help >"$TMP/h" 2>&1
  lines=$(grep -c "^  [0-4]  \(valid\|degraded\|invalid\|usage\|io\) " "$TMP/h")
  want=5
  case $c in run|profile|capture|analyze|record|parse) ;; verify) want=4;; *) want=$lines;; esac
  grep -q "^Exit codes (the same in every command; ergon help exit-codes):" "$TMP/h" &&
    [ "$lines" -ge 2 ] && [ "$lines" = "$want" ] &&
    ok "$c --help ends with its $lines exit codes" || bad "$c --help: exit section missing ($lines lines)"
  # The section is the last thing --help prints.
  last=$(awk '/^Exit codes \(the same/{f=1} f' "$TMP/h" | tail -n +2 | grep -vc "^  [0-4]  \|^               ")
  [ "$last" = 0 ] && ok "$c --help ends with them" || bad "$c --help: $last line(s) after the exit codes"
  awk "/^ergon $c:/{f=1;next} f&&/^\$/{exit} f" <<<"$HELP" >"$TMP/hx"
  diff <(sed -n '/^Exit codes (the same/,$p' "$TMP/h" | tail -n +2) "$TMP/hx" >/dev/null &&
    ok "$c --help = its block of ergon help exit-codes" || bad "$c --help differs from ergon help exit-codes"
done
"$E" --help | grep -q "^  4  degraded " && ok "ergon --help lists exit 4" || bad "ergon --help lacks exit 4"
"$E" __man run | grep -q "degraded" && ok "the man page carries the exit section" || bad "ergon-run(1) lacks it"
finish
