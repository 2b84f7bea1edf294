#!/usr/bin/env bash
# `ergon ina228 plan` end to end with the issue's worked examples, worked
# by hand from the datasheet (SHUNT_CAL = 25000 x R x Imax, x4 on the fine
# range; the fine range when R x Imax <= 40.96 mV).
set -euo pipefail
: "${ERGON_BIN:?}"
out=$("$ERGON_BIN" ina228 plan --shunt-ohms 0.5 --max-current-a 0.02 --rail-v 1.8)
# 10 mV burden = 0.56 % of 1.8 V (0.6 % rounded); 250 x 4 = 1000.
grep -qx 'burden_mv 10.0000' <<<"$out"
grep -qx 'burden_percent_of_rail 0.56' <<<"$out"
grep -qx 'adcrange 1 (+-40.96 mV)' <<<"$out"
grep -qx 'shunt_cal 1000' <<<"$out"
out=$("$ERGON_BIN" ina228 plan --shunt-ohms 0.015 --max-current-a 0.02)
grep -qx 'burden_mv 0.3000' <<<"$out"   # 300 uV
grep -qx 'shunt_cal 30' <<<"$out"       # 7.5 x 4
out=$("$ERGON_BIN" ina228 plan --shunt-ohms 0.82 --max-current-a 0.05)
grep -qx 'burden_mv 41.0000' <<<"$out"  # over 40.96 mV: wide range
grep -qx 'adcrange 0 (+-163.84 mV)' <<<"$out"
grep -qx 'shunt_cal 1025' <<<"$out"     # 1250 x 0.82
# Refusals name the input and the fix, with the usage/range exit code 2.
set +e
err=$("$ERGON_BIN" ina228 plan --shunt-ohms 10 --max-current-a 0.02 2>&1); rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "expected exit 2, got $rc: $err" >&2; exit 1; }
grep -q -- '--shunt-ohms 10' <<<"$err"
grep -q 'smaller shunt' <<<"$err"
set +e
err=$("$ERGON_BIN" ina228 plan --shunt-ohms abc --max-current-a 0.02 2>&1); rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "expected exit 2, got $rc" >&2; exit 1; }
grep -q "abc" <<<"$err"
echo ok
