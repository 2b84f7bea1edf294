#!/usr/bin/env bash
# The pyocd and bmp lifecycles (target.probe pyocd[:UID], bmp:DEVICE)
# against fakes: nobody here has the probes, and Debian's python3-pyocd
# (0.13.1) has no `pyocd` subcommand tool and waits for a probe.
#  - pyocd: a fake `pyocd` on PATH records its arguments; its `gdbserver`
#    is tests/support/fake_probe/fake_gdb_rtt.py on the port it was given,
#    a GDB server whose target replays the virtual bench's profile boot
#    through an RTT block (all-stop, then non-stop with FAKE_PYOCD_NONSTOP).
#  - bmp: fake_gdb_rtt.py --bmp on a pty, a Black Magic Probe's GDB port:
#    swdp_scan, vAttach, vFlashErase/Write/Done, vRun. The firmware is an
#    ELF made here by hand (two loadable segments whose bytes include the
#    ones vFlashWrite must escape, and a NOBITS-like segment with no file
#    bytes that must not be flashed); the fake writes what it was flashed.
# The per-layer table of each run must equal the virtual bench's own for
# the same stream (the stream is that run's capture log).
set -u
bin=${ERGON_BIN:?ERGON_BIN not set}
src=${ERGON_SOURCE_DIR:?ERGON_SOURCE_DIR not set}
if ! command -v python3 >/dev/null; then
	echo "FAIL: python3 is needed for the fake GDB servers"
	exit 1
fi
. "$src/tests/support/probe_test_lib.sh"
fake=$src/tests/support/fake_probe/fake_gdb_rtt.py
mkdir -p "$tmp/fw" "$tmp/bin"
"$bin" profile --board sim --out "$tmp/simref" >/dev/null 2>&1 || bad "virtual bench reference run"
stream="$tmp/simref/pmu/capture.log"

# The link statistics of a stage's capture: KEY of summary.json.
link() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
try:
    cap = json.load(open(sys.argv[1]))["stages"][sys.argv[2]]["capture"]
    print(cap["transport"] if sys.argv[3] == "transport" else (cap.get("link") or {}).get(sys.argv[3]))
except (OSError, KeyError, ValueError) as e:
    print("(none: %r)" % e)
PY
}

# --- pyocd ------------------------------------------------------------------
printf 'ELF' >"$tmp/fw/app_profile.elf"
printf 'ELF' >"$tmp/fw/app_power.elf"
cat >"$tmp/bin/pyocd" <<EOF2
#!/usr/bin/env bash
echo "ARGV \$*" >>"$tmp/pyocd.calls"
[ "\$1" = gdbserver ] || exit 0
port=""; while [ \$# -gt 0 ]; do [ "\$1" = --port ] && port=\$2; shift; done
ns=""; [ -n "\${FAKE_PYOCD_NONSTOP:-}" ] && ns=--nonstop
exec python3 "$fake" --port "\$port" --stream "$stream" \$ns
EOF2
chmod +x "$tmp/bin/pyocd"
for mode in halt_per_poll non_stop; do
	rm -f "$tmp/pyocd.calls"
	ns=""
	[ $mode = non_stop ] && ns=1
	FAKE_PYOCD_NONSTOP=$ns PATH="$tmp/bin:$PATH" "$bin" profile "$tmp/fw" --board apollo510_evb \
		--set target.probe=pyocd:0240000034544e45 --out "$tmp/py_$mode" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -eq 0 ] || [ $rc -eq 4 ]; then ok "pyocd ($mode): profile run (exit $rc)"; else
		bad "pyocd ($mode): exit $rc"
		cat "$tmp/err"
	fi
	has "$tmp/pyocd.calls" "^ARGV flash -u 0240000034544e45 $tmp/fw/app_profile.elf$" \
		"pyocd ($mode): flashes the profile build on the probe named by target.probe"
	has "$tmp/pyocd.calls" "^ARGV reset -u 0240000034544e45$" "pyocd ($mode): resets"
	has "$tmp/pyocd.calls" "^ARGV gdbserver -u 0240000034544e45 --port [0-9]+ -O connect_mode=attach$" \
		"pyocd ($mode): starts its gdbserver on a port of its own, attaching"
	t=$(link "$tmp/py_$mode/summary.json" pmu transport)
	case "$t" in rtt:gdb=127.0.0.1:*) ok "pyocd ($mode): RTT read through the gdbserver ($t)" ;;
	*) bad "pyocd ($mode): capture transport '$t'" ;; esac
	m=$(link "$tmp/py_$mode/summary.json" pmu memory_access)
	[ "$m" = $mode ] && ok "pyocd ($mode): the capture says memory_access $m" ||
		bad "pyocd ($mode): memory_access '$m', expected $mode"
	if cmp -s "$tmp/simref/profile_results.csv" "$tmp/py_$mode/profile_results.csv"; then
		ok "pyocd ($mode): per-layer table identical to the virtual bench's"
	else bad "pyocd ($mode): per-layer table differs"; fi
	has "$tmp/py_$mode/summary.json" '"lifecycle": *"pyocd"' "pyocd ($mode): the plan names the lifecycle"
done
# A bad UID is a configuration error naming the key.
PATH="$tmp/bin:$PATH" "$bin" profile "$tmp/fw" --board apollo510_evb \
	--set 'target.probe=pyocd:bad uid' --out "$tmp/py_bad" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "target.probe: 'pyocd:bad uid'" "$tmp/err"; then
	ok "pyocd: a malformed UID is refused (exit $rc), naming the key"
else
	bad "pyocd: malformed UID: exit $rc"
	cat "$tmp/err"
fi
# No pyocd on PATH: the step fails naming the tool.
PATH="/usr/bin:/bin" "$bin" profile "$tmp/fw" --board apollo510_evb --set target.probe=pyocd \
	--out "$tmp/py_none" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "pyocd: not found on PATH" "$tmp/err" "$tmp/py_none/summary.json" 2>/dev/null; then
	ok "pyocd: missing tool named (exit $rc)"
else
	bad "pyocd: missing tool: exit $rc"
	cat "$tmp/err"
fi

# --- bmp --------------------------------------------------------------------
# mkelf OUT MARK: a 32-bit little-endian ARM ELF with three PT_LOAD
# headers: 300 bytes at 0x0 (every byte value 0..255, so '#', '$', '}' and
# '*' need escaping), MARK at 0x8000, and one with no file bytes.
mkelf() {
	python3 - "$1" "$2" <<'PY'
import struct, sys
a = bytes(range(256)) + bytes(range(44))
b = sys.argv[2].encode()
ph_off, n = 52, 3
data_off = ph_off + 32 * n
eh = b"\x7fELF" + bytes([1, 1, 1]) + bytes(9)
eh += struct.pack("<HHIIIIIHHHHHH", 2, 40, 1, 0, ph_off, 0, 0, 52, 32, n, 40, 0, 0)
ph = struct.pack("<8I", 1, data_off, 0, 0, len(a), len(a), 5, 4)
ph += struct.pack("<8I", 1, data_off + len(a), 0x8000, 0x8000, len(b), len(b), 6, 4)
ph += struct.pack("<8I", 1, 0, 0x20000000, 0x20000000, 0, 4096, 6, 4)
open(sys.argv[1], "wb").write(eh + ph + a + b)
PY
}
mkelf "$tmp/fw/app_profile.elf" PROFILE-BUILD
mkelf "$tmp/fw/app_power.elf" POWER-BUILD
python3 "$fake" --pty "$tmp/bmp.link" --bmp --stream "$stream" --calls "$tmp/bmp.calls" \
	--flash-out "$tmp/bmp.flash" 2>"$tmp/bmp.err" &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$tmp/bmp.link" ] && break; sleep 0.05; done
dev=$(cat "$tmp/bmp.link")
"$bin" profile "$tmp/fw" --board apollo510_evb --set "target.probe=bmp:$dev" \
	--out "$tmp/bmp" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ] || [ $rc -eq 4 ]; then ok "bmp: profile run (exit $rc)"; else
	bad "bmp: exit $rc"
	cat "$tmp/err" "$tmp/bmp.err"
fi
has "$tmp/bmp.calls" "^qRcmd,737764705f7363616e$" "bmp: monitor swdp_scan (qRcmd, hex)"
has "$tmp/bmp.calls" "^vAttach;1$" "bmp: vAttach;1"
has "$tmp/bmp.calls" "^vFlashErase:0,12c$" "bmp: erases segment 1 (0x0, 300 bytes)"
has "$tmp/bmp.calls" "^vFlashErase:8000,d$" "bmp: erases segment 2 (0x8000, 13 bytes)"
has "$tmp/bmp.calls" "^vFlashDone$" "bmp: vFlashDone"
has "$tmp/bmp.calls" "^vRun;$" "bmp: resets with vRun"
if grep -q "^vFlashErase:20000000" "$tmp/bmp.calls"; then
	bad "bmp: a segment without file bytes was flashed"
else ok "bmp: the segment without file bytes is not flashed"; fi
# The profile build's bytes (the power stage is off by default), computed
# here, are what the fake holds.
python3 - "$tmp/bmp.flash" <<'PY' && ok "bmp: the flashed bytes are the ELF's segments, escapes undone" || bad "bmp: flashed bytes differ"
import json, sys
got = json.load(open(sys.argv[1]))
want = {"0x00000000": (bytes(range(256)) + bytes(range(44))).hex(), "0x00008000": b"PROFILE-BUILD".hex()}
if got != want:
    print("got", {k: v[:40] for k, v in got.items()}); sys.exit(1)
PY
t=$(link "$tmp/bmp/summary.json" pmu transport)
[ "$t" = "rtt:dev=$dev" ] && ok "bmp: RTT read through the probe's GDB port ($t)" ||
	bad "bmp: capture transport '$t'"
if cmp -s "$tmp/simref/profile_results.csv" "$tmp/bmp/profile_results.csv"; then
	ok "bmp: per-layer table identical to the virtual bench's"
else bad "bmp: per-layer table differs"; fi
# Not an ELF: refused at the flash step, naming the file.
printf 'not an elf' >"$tmp/fw/app_profile.elf"
"$bin" profile "$tmp/fw" --board apollo510_evb --set "target.probe=bmp:$dev" \
	--out "$tmp/bmp_bad" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "app_profile.elf: not an ELF file" "$tmp/err" "$tmp/bmp_bad/summary.json" 2>/dev/null; then
	ok "bmp: a firmware that is not an ELF is refused (exit $rc), naming it"
else
	bad "bmp: not an ELF: exit $rc"
	cat "$tmp/err"
fi
# bmp: needs a device path.
"$bin" profile "$tmp/fw" --board apollo510_evb --set "target.probe=bmp:ttyACM0" \
	--out "$tmp/bmp_dev" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "bmp:/dev/ttyACM0" "$tmp/err"; then
	ok "bmp: a probe that is not a /dev path is refused (exit $rc)"
else
	bad "bmp: not a /dev path: exit $rc"
	cat "$tmp/err"
fi
[ $fails -eq 0 ] && echo "all passed" || echo "$fails failed"
[ $fails -eq 0 ]
