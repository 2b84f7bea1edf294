#!/usr/bin/env bash
# ergon run --repeat through the CLI (issue 31): the summary states every
# headline figure's mean, interval, sd and median over the repetitions and
# each repetition's energy per operation; the progress line names the
# repetition on a terminal; the report verifies, and an edit of one
# repetition's figure, of a repeat statistic, or of the version is
# refused; --repeat outside 1..1000 is a usage error. What timing cannot
# change is asserted (test_run_repeat.c checks the figures exactly).
source "$(dirname "$0")/run_lib.sh"
source "$(dirname "$0")/reseal_lib.sh"
E=$ERGON_BIN
R=(--device d --workload builtin:spin --idle-s 0.2 --windows 2 --window-s 0.2 --sample-hz 500)

expect 0 "run --repeat 3" -- "$E" run "${R[@]}" --repeat 3 --out "$TMP/r.json"
contains "$OUT" "repetitions : 3 of 3 complete (each: settle 0 s, its own idle baseline 0.2 s and 2 windows of 0.2 s)" \
  "the summary says what a repetition is"
contains "$OUT" "energy/op above idle" "the energy per operation row"
contains "$OUT" "median" "the median and its interval"
contains "$OUT" "energy/op per repetition (mJ):" "every repetition's value, in the summary's unit"
expect 0 "verify" -- "$E" verify "$TMP/r.json"
python3 - "$TMP/r.json" <<'PY' && ok "the report holds the repetitions, their times and the statistics" || bad "report shape"
import json, sys, statistics
r = json.load(open(sys.argv[1]))
assert r["schema_version"] == 2 and r["repeat"] == {"planned": 3, "completed": 3, "what": r["repeat"]["what"]}
assert len(r["repetitions"]) == 3 and len(r["figures"]["repetitions"]) == 3
for i, rep in enumerate(r["repetitions"]):
    assert rep["index"] == i + 1 and rep["status"] == "complete"
    mt = rep["measurement_time"]
    assert mt["start_utc"].endswith("Z") and mt["end_utc"] >= mt["start_utc"]
    assert mt["end_monotonic_s"] > mt["start_monotonic_s"]
    assert mt["utc_source"] == "CLOCK_REALTIME"
vals = [f["energy_per_op"]["above_idle_j"] for f in r["figures"]["repetitions"]]
st = r["figures"]["repeat"]["figures"]["energy_per_op"]["above_idle_j"]
assert st["values"] == vals and st["n"] == 3
assert abs(st["mean"] - statistics.mean(vals)) <= 1e-12 * abs(st["mean"])
assert abs(st["sd"] - statistics.stdev(vals)) <= 1e-9 * st["sd"]
# t(0.975, 2) = 4.303 (NIST table)
half = (st["ci_hi"] - st["ci_lo"]) / 2
assert abs(half / (st["sd"] / 3 ** 0.5) - 4.303) < 0.0005, half
assert st["median_lo"] == min(vals) and st["median_hi"] == max(vals) and st["median_coverage"] == 0.75
assert r["measurement_time"]["start_utc"] <= r["repetitions"][0]["measurement_time"]["start_utc"]
PY

reseal "$TMP/r.json" "$TMP/e1.json" 'd["figures"]["repetitions"][1]["load"]["mean_power_w"] *= 1.01'
expect 1 "an edited repetition figure is refused" -- "$E" verify "$TMP/e1.json"
contains "$ERR" "figures.repetitions[1].load.mean_power_w" "the field is named"
reseal "$TMP/r.json" "$TMP/e2.json" 'd["figures"]["repeat"]["figures"]["load"]["mean_power_w"]["mean"] *= 0.99'
expect 1 "an edited mean is refused" -- "$E" verify "$TMP/e2.json"
contains "$ERR" "figures.repeat.figures.load.mean_power_w.mean" "the statistic is named"
reseal "$TMP/r.json" "$TMP/e3.json" 'd["schema_version"] = 1'
expect 1 "a repeated report claiming version 1 is refused" -- "$E" verify "$TMP/e3.json"
contains "$ERR" "schema_version" "the version is named"
reseal "$TMP/r.json" "$TMP/e4.json" 'd["repetitions"][2]["series"]["samples"]["power_w"][5] += 1'
expect 1 "an edited sample of repetition 3 is refused" -- "$E" verify "$TMP/e4.json"
contains "$ERR" "repetitions[2]" "the repetition is named"

expect 2 "--repeat 0" -- "$E" run "${R[@]}" --repeat 0 --out "$TMP/x.json"
expect 2 "--repeat 1001" -- "$E" run "${R[@]}" --repeat 1001 --out "$TMP/x.json"
expect 2 "--repeat x" -- "$E" run "${R[@]}" --repeat x --out "$TMP/x.json"
[ ! -e "$TMP/x.json" ] && ok "nothing written on a usage error" || bad "x.json written"
expect 0 "--repeat 1 is one run (version 1)" -- "$E" run "${R[@]}" --repeat 1 --out "$TMP/one.json"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["schema_version"] == 1 and "repetitions" not in r and r["measurement_time"]["end_utc"]' "$TMP/one.json" &&
  ok "a single run has its measurement time" || bad "single run shape"

if command -v script >/dev/null; then
  script -qec "$E run --device tty --workload builtin:spin,iters=20000 --idle-s 0.6 \
    --windows 2 --window-s 0.4 --repeat 2 --out $TMP/tty.json" /dev/null >"$TMP/tty.out" 2>&1
  grep -q "rep 2/2 load   window" "$TMP/tty.out" && ok "the progress line names the repetition" ||
    { bad "no repetition in the progress line"; head -c 600 "$TMP/tty.out"; }
else
  skip_section "TTY progress check: 'script' (bsdutils) is not installed (scripts/bootstrap.sh installs it)"
fi
finish
