#!/usr/bin/env bash
# ergon run --trim-s (the Jetson method's duty-cycle figures) as a user runs
# it, on the fake Orin NX tree (hwmon:VDD_IN) with --repeat 2: the report
# states plan.trim_s, each repetition's figures.duty_cycle and
# figures.repeat.duty_cycle (the formulas on the averages); ergon verify
# recomputes them from the report's own series (a reader that changed one
# would fail); the averaged inputs equal the mean of the repetitions' own
# (checked here in Python); a trim that leaves nothing of a window is
# refused before anything is measured. The figures themselves are worked
# out by hand on a simulated clock in functional/test_hw_jetson_method.
source "$(dirname "$0")/run_lib.sh"
R=$TMP/root
h=$R/sys/class/hwmon/hwmon0
mkdir -p "$h"
echo ina3221 >"$h/name"
for c in 1 2 3; do
  echo 5000 >"$h/in${c}_input"; echo 1000 >"$h/curr${c}_input"
done
echo VDD_IN >"$h/in1_label"; echo VDD_CPU_GPU_CV >"$h/in2_label"; echo VDD_SOC >"$h/in3_label"
expect 0 "run --trim-s 0.1 --repeat 2" -- "$ERGON_BIN" run --device orin --instrument hwmon:VDD_IN \
  --sysfs-root "$R" --workload builtin:spin --idle-s 0.3 --windows 2 --window-s 0.5 --trim-s 0.1 \
  --repeat 2 --sample-hz 200 --out "$TMP/r.json"
expect 0 "verify recomputes the trimmed figures" -- "$ERGON_BIN" verify "$TMP/r.json"
python3 - "$TMP/r.json" <<'PY' && ok "duty_cycle per repetition and over the repeats" || bad "duty_cycle blocks"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["plan"]["trim_s"] == 0.1, r["plan"]
reps = r["figures"]["repetitions"]
assert len(reps) == 2
for i, f in enumerate(reps):
    d = f["duty_cycle"]
    assert "withheld" not in d, d
    # each window (its edges as the session recorded them) less 0.1 s at
    # both ends
    e = r["repetitions"][i]["series"]["window_edges_s"]
    # (a window shorter than 0.2 s keeps nothing and is counted apart)
    kept = sum(e[w + 1] - e[w] - 0.2 for w in range(len(e) - 1) if e[w + 1] - e[w] > 0.2)
    short = sum(1 for w in range(len(e) - 1) if not e[w + 1] - e[w] > 0.2)
    assert d["windows"] == 2 and d["windows_without_kept_part"] == short, (d, e)
    assert d["kept_intervals"] == 2 - short and abs(d["kept_s"] - kept) <= 1e-9, (d, e)
    assert d["formula"] == "saturated" and d["duty_cycle"] == 1, d
    # the fake tree holds VDD_IN at 5 V x 1 A: load and idle 5 W
    assert abs(d["load_power_w"] - 5.0) < 1e-9 and abs(d["idle_power_w"] - 5.0) < 1e-9, d
    assert abs(d["total_j"] - d["load_power_w"] * d["latency_mean_s"]) <= 1e-12 * d["total_j"], d
a = r["figures"]["repeat"]["duty_cycle"]
# the windows that kept nothing, summed over the repetitions, from each
# repetition's recorded edges (not from its block)
short_all = sum(1 for i in range(2)
                for e in [r["repetitions"][i]["series"]["window_edges_s"]]
                for w in range(len(e) - 1) if not e[w + 1] - e[w] > 0.2)
assert a["windows_without_kept_part"] == short_all, (a, short_all)
for k in ("load_power_w", "idle_power_w", "achieved_ops_per_s", "latency_mean_s"):
    m = (reps[0]["duty_cycle"][k] + reps[1]["duty_cycle"][k]) / 2
    assert abs(a[k] - m) <= 1e-12 * abs(m), (k, a[k], m)
assert abs(a["total_j"] - a["load_power_w"] * a["latency_mean_s"]) <= 1e-12 * a["total_j"], a
assert a["n"] == 2 and a["trim_s"] == 0.1, a
PY
expect 2 "--trim-s leaving nothing of a window" -- "$ERGON_BIN" run --device orin --instrument hwmon:VDD_IN \
  --sysfs-root "$R" --workload builtin:spin --idle-s 0.3 --windows 2 --window-s 0.5 --trim-s 0.25 \
  --out "$TMP/x.json"
contains "$ERR" "--trim-s 0.25: each window loses trim_s at both ends" "says why"
[ ! -e "$TMP/x.json" ] && ok "nothing written" || bad "a report was written"
# 0.5 s windows less 0.24 s at both ends keep 0.02 s, under one 5 Hz sample
# period: the block is withheld with the reason and the run is degraded
# (exit 4, docs/USAGE.md "Exit codes"), not valid.
expect 4 "--trim-s keeping fewer than 2 samples of a window" -- "$ERGON_BIN" run --device orin \
  --instrument hwmon:VDD_IN --sysfs-root "$R" --workload builtin:spin --idle-s 0.3 --windows 2 \
  --window-s 0.5 --trim-s 0.24 --sample-hz 5 --out "$TMP/w.json"
contains "$OUT$ERR" "trimmed duty-cycle figures (--trim-s) withheld: a kept part of a window holds fewer than 2 samples" "says which figures and why"
python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['figures']['duty_cycle']; assert d['withheld'].startswith('a kept part'), d" "$TMP/w.json" &&
  ok "figures.duty_cycle withheld in the report" || bad "figures.duty_cycle not withheld"
expect 2 "negative --trim-s" -- "$ERGON_BIN" run --device orin --workload builtin:spin --trim-s -1 --out "$TMP/y.json"
finish
