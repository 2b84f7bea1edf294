#!/usr/bin/env bash
# `ergon instruments` through the CLI: the truth on this machine (computed
# here independently from what /sys and the loader offer), and the listing
# of fake Jetson Orin NX, INA228 and RAPL trees and of the stub NVML.
set -euo pipefail
: "${ERGON_BIN:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d /tmp/ergon-test-hwinst-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# --- this machine, no overrides ---------------------------------------
unset ERGON_SYSFS_ROOT ERGON_NVML_LIB
out=$("$ERGON_BIN" instruments --json)
usable() { # driver -> true/false as ergon says
  python3 -c 'import json,sys; d={r["driver"]:r for r in json.load(sys.stdin)}; print(str(d[sys.argv[1]]["usable"]).lower())' "$1" <<<"$out"
}
has_ina=false
for n in /sys/class/hwmon/hwmon*/name; do
  [ -r "$n" ] && grep -qxE 'ina3221|ina219|ina226|ina230|ina231|ina238|ina228' "$n" && has_ina=true
done
has_rapl=false
for e in /sys/class/powercap/intel-rapl:*/energy_uj; do [ -r "$e" ] && cat "$e" >/dev/null 2>&1 && has_rapl=true; done
has_nvml=false
ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml.so.1 ' && has_nvml=true
[ "$(usable hwmon)" = "$has_ina" ] || fail "hwmon usable=$(usable hwmon), expected $has_ina"
[ "$(usable rapl)" = "$has_rapl" ] || fail "rapl usable=$(usable rapl), expected $has_rapl"
# With a library present NVML may still fail (no GPU): only the absent case is certain.
if [ "$has_nvml" = false ]; then
  [ "$(usable nvml)" = false ] || fail "nvml usable without libnvidia-ml.so.1"
fi
text=$("$ERGON_BIN" instruments)
if [ "$has_ina" = false ]; then
  grep -q '^hwmon - ' <<<"$(sed -n '/^Not usable/,$p' <<<"$text")" || fail "hwmon not listed as unusable"
fi

# --- an empty sysfs root and no NVML: every reason is given -----------
mkdir -p "$tmp/empty"
out=$(ERGON_NVML_LIB=/nonexistent/libnvidia-ml.so.1 "$ERGON_BIN" instruments --sysfs-root "$tmp/empty")
grep -q "$tmp/empty/sys/class/hwmon: no hwmon class" <<<"$out" || fail "hwmon reason: $out"
grep -q "intel_rapl_msr" <<<"$out" || fail "rapl fix missing: $out"
grep -q "Install the NVIDIA driver" <<<"$out" || fail "nvml fix missing: $out"

# --- fake trees: Orin NX ina3221, an INA228, a RAPL package, stub NVML -
r="$tmp/fake"
h="$r/sys/class/hwmon/hwmon0"
mkdir -p "$h" "$r/sys/class/hwmon/hwmon1" "$r/sys/class/powercap/intel-rapl:0"
echo ina3221 >"$h/name"
i=1
for l in VDD_IN VDD_CPU_GPU_CV VDD_SOC; do
  echo "$l" >"$h/in${i}_label"; echo 5000 >"$h/in${i}_input"; echo 400 >"$h/curr${i}_input"
  echo 5000 >"$h/shunt${i}_resistor"; i=$((i + 1))
done
h1="$r/sys/class/hwmon/hwmon1"
echo ina228 >"$h1/name"; echo 12000 >"$h1/in1_input"; echo 100 >"$h1/curr1_input"
echo 1200000 >"$h1/power1_input"; echo 5 >"$h1/energy1_input"
echo package-0 >"$r/sys/class/powercap/intel-rapl:0/name"
echo 123 >"$r/sys/class/powercap/intel-rapl:0/energy_uj"
echo 262143328850 >"$r/sys/class/powercap/intel-rapl:0/max_energy_range_uj"
out=$(ERGON_NVML_LIB="$ERGON_NVML_STUB" ERGON_SYSFS_ROOT="$r" "$ERGON_BIN" instruments --json)
python3 - "$out" <<'PY' || fail "fake-tree listing: $out"
import json, sys
rows = {r["driver"]: r for r in json.loads(sys.argv[1])}
ids = [f["id"] for f in rows["hwmon"]["found"]]
assert ids == ["hwmon:VDD_IN", "hwmon:VDD_CPU_GPU_CV", "hwmon:VDD_SOC", "hwmon:ina228@hwmon1"], ids
f = rows["hwmon"]["found"]
assert f[0]["total_input"] is True and f[1]["total_input"] is False
assert f[0]["accuracy_pct"] == 0.25 and f[0]["shunt_ohm"] == 0.005
assert f[3]["integrates_energy"] is True and f[3]["accuracy_pct"] == 0.05
assert [x["id"] for x in rows["rapl"]["found"]] == ["rapl:package-0"]
assert rows["nvml"]["usable"] and rows["nvml"]["found"][0]["model"] == "NVIDIA H200"
assert rows["nvml"]["found"][0]["reads"] == "energy counter (mJ)"
PY
# Unknown argument is a usage error (exit 2).
set +e
"$ERGON_BIN" instruments --bogus 2>/dev/null; rc=$?
set -e
[ $rc -eq 2 ] || fail "usage exit $rc"
echo "ok"
