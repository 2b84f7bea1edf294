#!/usr/bin/env bash
# `ergon parse` of a log cut before `--- HPX_END ---`: once inside a row,
# once at a line boundary, once on standard input. Each time the error
# names the input and the byte where it ends, the outputs are written and
# keep every complete iteration before the cut (values computed by hand
# below), and they are marked: complete false, pmu.incomplete with the byte
# count, validity degraded.
set -euo pipefail
: "${ERGON_BIN:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ergon-parse-cut-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
hdr='"Layer","Op","ARM_PMU_CPU_CYCLES","ARM_PMU_INST_RETIRED","overflow"'
head_part="--- HPX_START ---
--- HPX_PRESET cpu_0 ---
--- HPX_ITER 0 ---
$hdr
0,CONV_2D,100,10,0
1,ADD,40,4,0
--- HPX_ITER 1 ---
$hdr
0,CONV_2D,300,30,0
1,ADD,60,6,0
"
# Cut inside a row of iteration 2: iterations 0 and 1 are complete, the open
# one (2) is dropped. Medians by hand: layer 0 cycles (100 + 300) / 2 = 200,
# instructions (10 + 30) / 2 = 20; layer 1 (40 + 60) / 2 = 50, (4 + 6) / 2 = 5.
printf '%s--- HPX_ITER 2 ---\n%s\n0,CONV_2D,500,50,0\n1,AD' "$head_part" "$hdr" >"$tmp/mid.hpx"
# Cut after the last row of iteration 1, before END: iteration 1 is still the
# open one and is dropped (the reference does the same), iteration 0 stays:
# layer 0 = 100 / 10, layer 1 = 40 / 4.
printf '%s' "$head_part" >"$tmp/edge.hpx"

check() { # LOG OUTDIR STDERR_FILE NAME_IN_MESSAGE MID(0|1) L0C L0I L1C L1I
	python3 - "$@" <<'PY'
import json, os, sys
log, out, errf, name, mid = sys.argv[1:6]
want = list(map(float, sys.argv[6:10]))
size = os.path.getsize(log)
err = open(errf).read()
where = f", inside a line" if mid == "1" else ""
msg = f"{name} is truncated: it ends at byte {size}{where} without '--- HPX_END ---'"
assert msg in err, (msg, err)
if mid == "0":
    assert "inside a line" not in err, err
s = json.load(open(os.path.join(out, "summary.json")))
p = s["profile"]
assert p["complete"] is False, p["complete"]
assert p["validity"] == "degraded", p["validity"]
inc = [i for i in p["issues"] if i["code"] == "pmu.incomplete"]
assert len(inc) == 1, p["issues"]
ctx = inc[0]["context"]
assert ctx["bytes"] == size, (ctx, size)
assert ctx["cut_mid_line"] is (mid == "1"), ctx
assert ctx["open_iteration_dropped"] is True, ctx
assert f"truncated at byte {size}" in inc[0]["message"], inc[0]["message"]
got = []
for L in p["layers"]:
    got += [L["counters"]["ARM_PMU_CPU_CYCLES"], L["counters"]["ARM_PMU_INST_RETIRED"]]
assert got == want, (got, want)
rows = open(os.path.join(out, "profile_results.csv")).read().splitlines()
assert len(rows) == 3, rows  # header + 2 layers
PY
}

rc=0
"$ERGON_BIN" parse "$tmp/mid.hpx" --out "$tmp/o_mid" >/dev/null 2>"$tmp/e_mid" || rc=$?
# Degraded: written, but what followed the cut is missing (exit 4).
[ "$rc" -eq 4 ] || { echo "exit $rc for a degraded (truncated) log, not 4"; cat "$tmp/e_mid"; exit 1; }
check "$tmp/mid.hpx" "$tmp/o_mid" "$tmp/e_mid" "$tmp/mid.hpx" 1 200 20 50 5

rc=0
"$ERGON_BIN" parse "$tmp/edge.hpx" --out "$tmp/o_edge" >/dev/null 2>"$tmp/e_edge" || rc=$?
[ "$rc" -eq 4 ] || { echo "exit $rc for a log cut at a line boundary, not 4"; exit 1; }
check "$tmp/edge.hpx" "$tmp/o_edge" "$tmp/e_edge" "$tmp/edge.hpx" 0 100 10 40 4

rc=0
"$ERGON_BIN" parse - --out "$tmp/o_in" <"$tmp/mid.hpx" >/dev/null 2>"$tmp/e_in" || rc=$?
[ "$rc" -eq 4 ] || { echo "exit $rc for a cut log on standard input, not 4"; exit 1; }
check "$tmp/mid.hpx" "$tmp/o_in" "$tmp/e_in" "standard input" 1 200 20 50 5

# A complete log says nothing of the kind.
printf '%s--- HPX_END ---\n' "$head_part" >"$tmp/full.hpx"
"$ERGON_BIN" parse "$tmp/full.hpx" --out "$tmp/o_full" >/dev/null 2>"$tmp/e_full"
if grep -q "truncated" "$tmp/e_full"; then
	echo "a complete log reported as truncated:"; cat "$tmp/e_full"; exit 1
fi
echo "test_parse_truncated: ok"
