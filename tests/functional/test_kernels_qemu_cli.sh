#!/usr/bin/env bash
# ergon kernels run --board qemu-an547 --impl ref,mve as a user runs it, on
# kws_ref_model's own layers: every case bit-exact on the emulated M55 for
# both implementations, the counts labelled emulated instructions (never
# cycles), identical across two runs (QEMU -icount is deterministic), each
# speedup and the geometric mean recomputed here from samples.csv, the
# firmware's ELF digest checked, the PMU reported unsupported. Needs
# arm-none-eabi-gcc and qemu-system-arm (scripts/bootstrap.sh).
. "$(dirname "$0")/run_lib.sh"
M=${ERGON_SHARED_DIR:?}/fixtures/models
command -v arm-none-eabi-gcc >/dev/null || { bad "arm-none-eabi-gcc missing (scripts/bootstrap.sh)"; finish; }
command -v qemu-system-arm >/dev/null || { bad "qemu-system-arm missing (scripts/bootstrap.sh)"; finish; }

for run in 1 2; do
  expect 0 "kws on qemu-an547, ref and mve (run $run)" -- "$ERGON_BIN" kernels run \
    --board qemu-an547 --from-model "$M/kws_ref_model.tflite" --impl ref,mve \
    --iterations 3 --warmup 1 --out "$TMP/k$run"
done
contains "$OUT" "counts in emulated_instructions" "table says emulated instructions"
contains "$OUT" "geometric mean of mve speedups over 10 cases" "geometric mean over the 10 layers"
contains "$OUT" "not a model latency" "geometric mean is not a model latency"
contains "$OUT" "ergon compare calls a regression only where both sides are valid" "regr legend is a whole sentence"
[ "$(grep -o 'no count is reported' <<<"$OUT" | wc -l)" = 1 ] && ok "the PMU line says 'no count is reported' once" ||
  bad "PMU line: $(grep 'PMU counters' <<<"$OUT")"
cmp -s "$TMP/k1/samples.csv" "$TMP/k2/samples.csv" && ok "every count identical across two runs" ||
  bad "counts differ between two runs: $(diff "$TMP/k1/samples.csv" "$TMP/k2/samples.csv" | head -4)"
[ "$(grep -c ',pass,' "$TMP/k1/samples.csv")" = 60 ] && ok "10 cases x 2 impls x 3 samples, all pass" ||
  bad "pass rows: $(grep -c ',pass,' "$TMP/k1/samples.csv")"
grep -q ',fail,' "$TMP/k1/samples.csv" && bad "a case failed correctness" || ok "no correctness failure"
python3 - "$TMP/k1" <<'PY' && ok "speedups, geometric mean, labels and ELF digest check out" || bad "artifact content"
import csv, hashlib, json, math, sys
d = sys.argv[1]
a = json.load(open(f"{d}/kernels.json"))
assert a["provenance"]["kind"] == "synthetic" and a["provenance"]["clock"] == "emulated"
assert "not cycles" in a["provenance"]["note"]
assert "NOT" in a["timing"]["method"] and "Cortex-M55 cycles" in a["timing"]["method"]
assert a["pmu"]["status"] == "unsupported" and "does not model the PMU" in a["pmu"]["why"]
assert "ARM_PMU_MVE_INST_RETIRED" in a["pmu"]["events"]
b = a["build"]
assert hashlib.sha256(open(b["elf"], "rb").read()).hexdigest() == b["elf_sha256"]
assert hashlib.sha256(open(b["cases_blob"]["path"], "rb").read()).hexdigest() == b["cases_blob"]["sha256"]
assert "-mcpu=cortex-m55" in b["command"] and "-icount" in b["qemu_command"]
# Means from samples.csv (count - overhead), by hand.
s = {}
for r in csv.DictReader(open(f"{d}/samples.csv")):
    assert r["correct"] == "pass"
    s.setdefault((r["case"], r["impl"]), []).append(float(r["count"]) - float(r["overhead"]))
k = a["kernels"]
assert k["unit"] == "emulated_instructions"
ratios = []
for c in k["cases"]:
    im = {x["impl"]: x for x in c["impls"]}
    ref = sum(s[(c["case"], "ref")]) / 3
    mve = sum(s[(c["case"], "mve")]) / 3
    assert abs(im["ref"]["mean"] - ref) <= 1e-9 * ref, (c["case"], im["ref"]["mean"], ref)
    sp = {x["impl"]: x["speedup"] for x in c["speedups"]}
    assert abs(sp["mve"] - ref / mve) <= 1e-9 * (ref / mve), c["case"]
    ratios.append(ref / mve)
assert len(ratios) == 10
g = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
gm = {x["impl"]: x for x in k["geomean"]}
assert gm["mve"]["cases"] == 10
assert abs(gm["mve"]["speedup"] - g) <= 1e-9 * g, (gm["mve"]["speedup"], g)
PY
[ -f "$TMP/k1/firmware/qemu-kernels.log" ] && ok "QEMU's log kept beside the results" || bad "no QEMU log"

expect 1 "mve on the host refused" -- "$ERGON_BIN" kernels run --board host \
  --from-model "$M/kws_ref_model.tflite" --impl mve --out "$TMP/h"
contains "$ERR" "no Helium (MVE)" "says why"

finish
