#!/usr/bin/env bash
# ergon run on a replayed recording: provenance from the file, never
# assumed measured; even a measured recording is refused by energy-model
# without --allow-replayed (its power was not recorded while this workload
# ran), and without accuracy_pct its ± is unrated.
. "$(dirname "$0")/run_lib.sh"

# 3 s at 1 kHz, 5 V, 0.12 A (0.6 W) then 0.6 A (3 W) after 1 s.
awk 'BEGIN { print "# provenance: measured"; print "t_s,voltage_v,current_a,temperature_c";
  for (i = 0; i < 3000; i++) { t = i / 1000; printf "%.3f,5,%s,%.2f\n", t, (t < 1 ? "0.12" : "0.6"), 40 + t }
}' > "$TMP/rec.csv"
expect 0 "run on a measured recording" -- "$ERGON_BIN" run --device pi --instrument "replay:$TMP/rec.csv" \
  --workload builtin:spin,iters=20000 --idle-s 0.3 --windows 2 --window-s 0.3 --sample-hz 1000 \
  --out "$TMP/rep.json"
contains "$OUT" "instrument  : replay (replayed)" "provenance replayed"
# No accuracy_pct given and none in the file: the ± is printed as unrated
# and a warning makes the report degraded.
contains "$OUT" "above idle ± unrated" "energy/op ± unrated"
contains "$OUT" "0.600 W ± unrated" "idle ± unrated"
grep -q '"recording": "measured"' "$TMP/rep.json" && ok "recording provenance measured" || bad "recording"
expect 0 "verify" -- "$ERGON_BIN" verify "$TMP/rep.json"
grep -q '"instrument.unrated_accuracy"' "$TMP/rep.json" && ok "unrated_accuracy raised" || bad "no unrated issue"
grep -q '"integrity": "degraded"' "$TMP/rep.json" && ok "integrity degraded" || bad "integrity"
expect 1 "energy-model refuses a replayed measured recording" -- "$ERGON_BIN" energy-model "$TMP/rep.json" --action inference
expect 0 "energy-model --allow-replayed" -- "$ERGON_BIN" energy-model "$TMP/rep.json" --action inference --allow-replayed
contains "$OUT" '"source": "replayed — power not recorded during this workload:' "source says replayed"
contains "$OUT" "± unrated" "source says the ± is unrated"
contains "$OUT" '"accuracy_rated": false' "model flags unrated accuracy"

# The same file declared synthetic on the command line: synthetic, refused.
sed 1d "$TMP/rec.csv" > "$TMP/bare.csv"
expect 0 "run with --provenance synthetic" -- "$ERGON_BIN" run --device pi --instrument "replay:$TMP/bare.csv" \
  --provenance synthetic --workload builtin:spin,iters=20000 --idle-s 0.3 --windows 2 --window-s 0.3 \
  --out "$TMP/syn.json"
contains "$OUT" "instrument  : replay (synthetic)" "provenance synthetic"
expect 1 "energy-model refuses it" -- "$ERGON_BIN" energy-model "$TMP/syn.json" --action inference

expect 2 "unknown replay option refused" -- "$ERGON_BIN" run --device pi --instrument "replay:$TMP/rec.csv" \
  --instrument-opt acuracy_pct=1 --workload builtin:spin --idle-s 0.2 --windows 1 --window-s 0.2 --out "$TMP/x.json"
contains "$ERR" "acuracy_pct" "names the unknown option"

# A recording shorter than the run: an instrument failure, never padded.
head -300 "$TMP/rec.csv" > "$TMP/short.csv"
expect 1 "recording ends before the run" -- "$ERGON_BIN" run --device pi --instrument "replay:$TMP/short.csv" \
  --workload builtin:spin,iters=20000 --idle-s 0.2 --windows 4 --window-s 0.3 --out "$TMP/short.json"
grep -q '"status": "instrument_failed"' "$TMP/short.json" && ok "status instrument_failed" || bad "status"
contains "$ERR" "recording ended" "says the recording ended"
finish
