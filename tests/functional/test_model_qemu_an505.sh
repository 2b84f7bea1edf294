#!/usr/bin/env bash
# Board ports (docs/internals/ports.md): the second emulated port,
# qemu-an505 (Cortex-M33, target/port/an505/), builds and runs
# kws_ref_model.tflite under QEMU mps2-an505 and its output is the host
# interpreter's, bit for bit (the profile's correctness check, and `ergon
# model infer` compared with the host's output file byte for byte); a
# registered board without a port is refused with how to write one, and
# keeps taking a FIRMWARE_DIR; `ergon config boards` says which boards
# have a port and whether it ever ran.
set -u
: "${ERGON_BIN:?}" "${ERGON_SHARED_DIR:?}"
command -v qemu-system-arm >/dev/null && command -v arm-none-eabi-gcc >/dev/null || {
  echo "FAIL - qemu-system-arm and arm-none-eabi-gcc are required (scripts/bootstrap.sh)"; exit 1; }
TMP=$(mktemp -d /tmp/ergon-an505-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fails=0
ok() { echo "ok   - $*"; }
bad() { echo "FAIL - $*"; fails=$((fails + 1)); }
M=$ERGON_SHARED_DIR/fixtures/models/kws_ref_model.tflite

# 1. profile on the second port: per-layer table, bit-exact with the host.
if "$ERGON_BIN" profile "$M" --board qemu-an505 --out "$TMP/p" >"$TMP/p.out" 2>"$TMP/p.err"; then
  ok "profile --board qemu-an505 ran"
else bad "profile --board qemu-an505 failed: $(tail -5 "$TMP/p.err")"; fi
grep -q "correctness: on-target output vs host interpreter: bit-exact" "$TMP/p.out" &&
  ok "the an505 firmware's output is the host interpreter's" || bad "not bit-exact: $(cat "$TMP/p.out")"
# kws_ref_model has 13 operators (tflite's own listing: `ergon model info`).
nops=$("$ERGON_BIN" model info "$M" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["operators"]))' 2>/dev/null)
rows=$(grep -cE '^  [0-9]+ +[A-Z_0-9]+ ' "$TMP/p.out")
[ -n "$nops" ] && [ "$rows" = "$nops" ] && ok "per-layer table: $rows layers" ||
  bad "per-layer table has $rows rows, the model $nops operators"
python3 - "$TMP/p/summary.json" <<'PY' && ok "summary names the an505 build, its port and QEMU machine" || bad "summary's build record"
import json, sys
s = json.load(open(sys.argv[1]))
b = s["model"]["builds"][0]
assert b["board"] == "qemu-an505", b["board"]
assert b["port"]["port"] == "an505" and b["port"]["validation"]["status"] == "emulated", b["port"]
assert b["port"]["run"] == "mps2-an505"
assert b["kernels"] == "ref"
cmd = b["command"]
assert "-mcpu=cortex-m33" in cmd and not any("cortex-m55" in a for a in cmd), cmd
assert b["elf"].endswith("ergon_an505_profile.elf")
assert s["provenance"]["target"]["soc"] == "Cortex-M33 (QEMU mps2-an505)"
e = s["profile"]["emulated_instruction_count"]
assert "not Cortex-M33 cycles" in e["basis"], e["basis"]
PY
# The build record's placement (fw_memory.c): the an505's regions, not the
# an547's. By hand from target/port/an505/an505.ld: CODE 4 MiB at
# 0x10000000 (to 0x10400000), RAM 2 MiB at 0x38000000 (to 0x38200000); the
# addresses and sizes are arm-none-eabi-nm's.
python3 - "$TMP/p/summary.json" <<'PY' && ok "build record memory: the arena in RAM, the weights in CODE (an505.ld, nm)" || bad "an505 build record memory"
import json, subprocess, sys
b = json.load(open(sys.argv[1]))["model"]["builds"][0]
mem = b["memory"]
syms = {}
for line in subprocess.run(["arm-none-eabi-nm", "-S", b["elf"]], capture_output=True, text=True).stdout.splitlines():
    f = line.split()
    if len(f) == 4: syms[f[3]] = (int(f[0], 16), int(f[1], 16))
arena, weights = syms["arena"], syms["ert_model_data"]
assert mem["mode"] == "default" and mem["define"] is None, mem
assert (mem["arena"]["addr"], mem["arena"]["size"]) == arena, (mem, arena)
assert (mem["weights"]["addr"], mem["weights"]["size"]) == weights, (mem, weights)
assert 0x38000000 <= arena[0] and arena[0] + arena[1] <= 0x38200000, hex(arena[0])
assert 0x10000000 <= weights[0] and weights[0] + weights[1] <= 0x10400000, hex(weights[0])
assert mem["arena"]["region"] == "RAM" and mem["weights"]["region"] == "CODE", mem
PY
# The ELF is a Cortex-M33 image at the AN505's Secure code alias.
elf=$TMP/p/firmware/ergon_an505_profile.elf
readelf -h "$elf" 2>/dev/null | grep -q "Entry point address: *0x100" &&
  ok "entry point in the AN505's code SSRAM (0x10000000)" || bad "entry point: $(readelf -h "$elf" | grep Entry)"

# 2. model infer on the an505 equals the host's output byte for byte.
head -c 490 /dev/urandom >"$TMP/in.bin"
"$ERGON_BIN" model infer "$M" --input "$TMP/in.bin" --out "$TMP/host.bin" >/dev/null 2>&1 &&
  "$ERGON_BIN" model infer "$M" --input "$TMP/in.bin" --board qemu-an505 --out "$TMP/q.bin" >"$TMP/q.out" 2>&1 &&
  cmp -s "$TMP/host.bin" "$TMP/q.bin" && ok "model infer --board qemu-an505 equals the host's output" ||
  bad "model infer on the an505: $(tail -3 "$TMP/q.out")"
# Helium kernels are refused on a core without Helium.
if ERGON_TFL_KERNELS=mve "$ERGON_BIN" model infer "$M" --input "$TMP/in.bin" --board qemu-an505 \
  --out "$TMP/mve.bin" >"$TMP/mve.out" 2>&1; then bad "mve kernels accepted on the Cortex-M33"
else
  grep -q "no Helium" "$TMP/mve.out" && ok "ERGON_TFL_KERNELS=mve refused on the an505" ||
    bad "mve refusal: $(cat "$TMP/mve.out")"
fi

# 3. A registered board without a port: usage exit (2), the board, the way.
"$ERGON_BIN" profile "$M" --board apollo510_evb --out "$TMP/ap" >"$TMP/ap.out" 2>&1
rc=$?
[ $rc = 2 ] && ok "apollo510_evb with a model: exit 2" || bad "apollo510_evb exit $rc"
grep -q "board apollo510_evb has no port in ergon-target" "$TMP/ap.out" &&
  grep -q "docs/internals/ports.md" "$TMP/ap.out" && ok "the refusal names the board and docs/internals/ports.md" ||
  bad "refusal text: $(cat "$TMP/ap.out")"
[ ! -e "$TMP/ap/firmware" ] && ok "nothing built for a board without a port" || bad "a firmware folder was made"
# A FIRMWARE_DIR keeps working for that board (the dry run plans it).
mkdir -p "$TMP/fw" && : >"$TMP/fw/app_profile.axf" && : >"$TMP/fw/app_power.axf"
"$ERGON_BIN" profile "$TMP/fw" --board apollo510_evb --dry-run >"$TMP/dry.out" 2>&1 &&
  grep -q "firmware: profile $TMP/fw/app_profile.axf" "$TMP/dry.out" &&
  ok "FIRMWARE_DIR still accepted for apollo510_evb" || bad "FIRMWARE_DIR dry run: $(tail -5 "$TMP/dry.out")"

# 4. config boards: the port and its validation status per board.
"$ERGON_BIN" config boards >"$TMP/boards.out" 2>&1
grep -E '^qemu-an505 .*an505 \(emulated\)' "$TMP/boards.out" >/dev/null &&
  grep -E '^qemu-an547 .*an547 \(emulated\)' "$TMP/boards.out" >/dev/null &&
  grep -E '^apollo510_evb .* -$' "$TMP/boards.out" >/dev/null &&
  ok "config boards shows each board's port" || bad "config boards: $(cat "$TMP/boards.out")"

[ $fails = 0 ] && echo "all ok" || echo "$fails failed"
exit $((fails > 0))
