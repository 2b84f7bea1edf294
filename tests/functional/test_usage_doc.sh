#!/usr/bin/env bash
# docs/USAGE.md, walked as a new user would: every command in its code
# blocks is extracted and run here, in order, in a scratch folder (build/ergon
# is the ergon under test), and must exit as the guide says (0, or the
# "# exit N" it states). Commands that need what a test cannot have here are
# not skipped silently: each is matched against the list below and printed
# with the test that covers it. A command in the guide that is neither run
# nor listed fails this test.
. "$(dirname "$0")/run_lib.sh"
: "${ERGON_SOURCE_DIR:?}" "${ERGON_SHARED_DIR:?}"
DOC=$ERGON_SOURCE_DIR/docs/USAGE.md
W=$TMP/walk
mkdir -p "$W/build" "$W/fw"
ln -s "$ERGON_BIN" "$W/build/ergon"
# The firmware the QEMU walk uses is found beside the ergon binary.
bdir=$(dirname "$ERGON_BIN")
[ -d "$bdir/target" ] && ln -s "$bdir/target" "$W/build/target"
# What the guide's reader brings: a firmware folder (contents do not matter
# to --dry-run), a Joulescope recording and the firmware facts.
printf 'ELF' >"$W/fw/app_profile.elf"
printf 'ELF' >"$W/fw/app_power.elf"
cp "$ERGON_SHARED_DIR/fixtures/jls/shared_basic.jls" "$W/capture.jls" 2>/dev/null ||
  bad "shared fixture shared_basic.jls not found under $ERGON_SHARED_DIR"
# The guide's model commands name the shared fixtures as ../shared (from
# the source tree), and feed kws_ref_model an MFCC input (49x10 int8).
ln -s "$ERGON_SHARED_DIR" "$TMP/shared"
head -c 490 /dev/zero >"$W/mfcc.bin"
cat >"$W/facts.json" <<'J'
{"clean_infer_count": 100, "clean_infer_avg_us": 20000, "probe_kind": "infer",
 "terminal": {"version": 1, "status": "ok", "requested_count": 100,
   "completed_count": 100, "elapsed_us": 2000500, "gate_asserted": true,
   "gate_lowered": true, "final_phase": "complete", "error_code": 0}}
J
# Listed, not run here: pattern -> who runs it.
listed() {
  case "$1" in
    "scripts/bootstrap.sh"*) echo "installs Debian packages (root); run by scripts/test.sh and .ci/run";;
    "cmake -S . -B build"*|"cmake --build build"*) echo "the Release build; run by scripts/test.sh (build-release)";;
    "cmake --install build"*) echo "install into a prefix; tests/functional/test_install.sh installs into a temporary one";;
    "man ergon-profile"*) echo "reads the installed page; tests/functional/test_install.sh runs man ergon-run from its prefix";;
    "build/ergon profile fw/ --config ergon.yml --out run1"*) echo "needs an Apollo510 EVB and a J-Link; tests/functional/test_profile_probes.sh runs the jlink/openocd lifecycles against fake vendor tools";;
    "build/ergon run --device host --workload tflite:"*) echo "a 370 s run with the default windows; tests/functional/test_model_cli.sh runs the tflite: workload with short windows";;
    "build/ergon record --instrument ppk2 "*|"build/ergon run --device nrf-dk --instrument ppk2 "*|"build/ergon power-on --instrument ppk2 "*) echo "needs a PPK2; tests/functional/test_ppk2_cli runs record, run and power-on against the PPK2 simulator (test_ppk2_record_cli.sh: record on a terminal)";;
    "build/ergon power-on --instrument joulescope"*|"build/ergon power-on --driver joulescope"*) echo "needs a Joulescope; tests/functional/test_joulescope_bridge runs power-on (both spellings, Ctrl-C, an unplug while held) against the stub pyjoulescope_driver";;
    "build/ergon profile build/fw --board apollo510_evb --power --set power.driver=joulescope"*) echo "needs an Apollo510 EVB, a J-Link and a Joulescope; tests/functional/test_profile_live.sh runs this external power stage end to end against a fake J-Link and a lock-step bridge";;
    "build/ergon profile build/fw --board apollo510_evb --power --set power.driver=ppk2"*) echo "needs an Apollo510 EVB, a J-Link and a PPK2; tests/functional/test_profile_live_ppk2.sh runs this gate-only power stage end to end against a fake J-Link and the PPK2 protocol simulator";;
    "build/ergon profile fw --board apollo510_evb --set target.probe=pyocd"*) echo "needs a CMSIS-DAP probe and pyOCD 0.14+; tests/functional/test_profile_pyocd_bmp.sh runs the pyocd lifecycle against a fake pyocd";;
    "build/ergon capture --transport rtt:gdb="*) echo "needs a GDB server with a target running RTT; tests/functional/test_rtt_gdb_qemu runs it against QEMU's gdbstub (test_rtt_gdb_faults: a fake server)";;
    "build/ergon analyze --jls run.jls "*) echo "analyzes the PPK2 recording above; tests/functional/test_ppk2_cli records from the simulator and analyzes it with --sync-input-index 3";;
    "build/ergon validate --board qemu-an547 --models ../shared/fixtures/models"*) echo "eight QEMU model profiles with firmware builds (minutes); tests/functional/test_validate.sh runs the fixture models, a baseline folder and a db baseline";;
    "build/ergon validate --board sim --power --models ../shared/fixtures/models"*) echo "eight virtual-bench profiles (minutes under ASan on a loaded machine, past this walk's limit); tests/functional/test_validate_boards.sh runs exactly this command and checks its XML and summaries";;
    *) return 1;;
  esac
}
python3 - "$DOC" >"$TMP/cmds" <<'PY'
import sys, re
lines = open(sys.argv[1]).read().split("\n")
out, i = [], 0
while i < len(lines):
    l = lines[i]
    m = re.match(r"^( {4}|       )(\S.*)$", l)
    if m and not re.match(r"^\s*[|#]", l):
        cmd = m.group(2)
        if cmd.startswith(("build/", "scripts/", "cmake ", "man ", "cat > ")):
            # A command continued with a trailing backslash: one command.
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd[:-1].rstrip() + " " + lines[i].strip()
            if cmd.startswith("cat > ") and "<<'" in cmd:
                tag = cmd.split("<<'")[1].rstrip("'")
                body = [cmd]
                i += 1
                while i < len(lines) and lines[i].strip() != tag:
                    body.append(lines[i][4:])
                    i += 1
                body.append(tag)
                cmd = "\n".join(body)
            out.append(cmd)
    i += 1
for c in out:
    print(c.replace("\n", "\x1f"))
PY
n=0
while IFS= read -r line; do
  cmd=${line//$'\x1f'/$'\n'}
  n=$((n + 1))
  want=0
  [[ "$cmd" =~ \#\ exit\ ([0-9]+) ]] && want=${BASH_REMATCH[1]}
  bare=${cmd%%#*}; bare=${bare%"${bare##*[! ]}"}
  if why=$(listed "$bare"); then
    echo "list - $bare: not run here: $why"
    continue
  fi
  if [[ "$bare" == *"qemu-an547"* ]] && ! { command -v qemu-system-arm >/dev/null && [ -e "$W/build/target/an547/ergon_an547_profile.elf" ]; }; then
    bad "$bare: needs qemu-system-arm and the an547 firmware (arm-none-eabi-gcc); scripts/bootstrap.sh installs both"
    continue
  fi
  (cd "$W" && bash -c "$bare") >"$TMP/o" 2>"$TMP/e"
  got=$?
  if [ "$got" = "$want" ]; then ok "$bare (exit $got)"; else
    bad "$bare: exit $got, the guide says $want"; head -5 "$TMP/e"; fi
  grep -q '//' <(grep -v -e '://' -e '^\s*#' "$TMP/o" "$TMP/e") && bad "$bare: a double-slash path in its output"
done <"$TMP/cmds"
[ "$n" -ge 12 ] && ok "$n commands found in USAGE.md" || bad "only $n commands found in USAGE.md"
# What the guide promises about the outputs.
[ -f "$W/sim-run/summary.json" ] && [ -f "$W/sim-run/pmu/capture.log" ] && [ -f "$W/sim-run/power/capture.log" ] &&
  ok "sim-run/ has summary.json and both raw logs" || bad "sim-run outputs missing"
grep -q '"energy_per_inference_j": 9' "$W/sim-run/summary.json" && ok "9.0 uJ per inference, as the guide says" ||
  bad "energy per inference in sim-run/summary.json is not 9.0 uJ"
[ -f "$W/jsrun/summary.json" ] && ok "analyze wrote jsrun/summary.json" || bad "no jsrun/summary.json"
[ ! -e "$W/results" ] && ok "nothing written to results/ (every command passes --out)" || bad "a command wrote results/"
finish
