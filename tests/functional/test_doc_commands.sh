#!/usr/bin/env bash
# Every command README.md and docs/USAGE.md show, run as written (issue 35),
# as a new user would: each `ergon ...` / `build/ergon ...` command of their
# code blocks (a `\` continues it; `$ ` transcripts too) and of their inline
# code spans that give arguments is extracted and run here, in order, in a
# scratch folder per document (`ergon` on PATH and build/ergon are the ergon
# under test), and must
#   - exit as the document says (0, or the "exit N" its comment states), and
#   - print no warning it does not expect: a command expected to exit 0 may
#     not warn ("ergon CMD: warning: ...", a run summary's "warning CODE",
#     "integrity : degraded", DEGRADED / NOT VALID), except run.sampler_gap
#     alone: the sampler thread was not scheduled for 10 sample periods,
#     which says how loaded the test machine is, not whether the command is
#     right (it is printed as a note with the load average).
# What the test changes, and only that:
#   - durations: every `ergon run` that measures gets --idle-s 0.3
#     --windows 2 --window-s 0.5 appended (the last value of an option
#     wins: the documented flags, shortened; a README run is 6 x 60 s);
#   - placeholders: the files the documents assume the reader has (a model,
#     a recording, firmware facts, a CSV, a shapes file, a meter bridge...)
#     are made or linked here from ../shared fixtures before the walk;
#   - `[--opt VALUE]` (an optional part) is run both without and with it;
#     a trailing `&` (detached) is run in the foreground.
# Commands that need what a test cannot have here (hardware, root, a long
# build) are not skipped silently: each is matched against the list below
# and printed with the test that covers it. A command in a document that is
# neither run nor listed fails this test.
. "$(dirname "$0")/run_lib.sh"
: "${ERGON_SOURCE_DIR:?}" "${ERGON_SHARED_DIR:?}"
F=$ERGON_SHARED_DIR/fixtures
export XDG_DATA_HOME=$TMP/xdg XDG_CACHE_HOME=${XDG_CACHE_HOME:-$TMP/cache}
mkdir -p "$TMP/bin" && ln -s "$ERGON_BIN" "$TMP/bin/ergon"
export PATH=$TMP/bin:$PATH
bdir=$(dirname "$ERGON_BIN")

# setup DIR: what both documents' readers bring, in DIR.
setup() {
  local W=$1
  mkdir -p "$W/build" "$W/fw" "$W/models"
  ln -s "$ERGON_BIN" "$W/build/ergon"
  # The firmware the QEMU walk uses is found beside the ergon binary.
  [ -d "$bdir/target" ] && ln -s "$bdir/target" "$W/build/target"
  # A firmware folder (its contents do not matter to --dry-run).
  printf 'ELF' >"$W/fw/app_profile.elf"
  printf 'ELF' >"$W/fw/app_power.elf"
  # Recordings, HPX logs, models (by the names the documents use).
  cp "$F/jls/shared_basic.jls" "$W/capture.jls" || bad "shared fixture shared_basic.jls not found under $F"
  cp "$F/jls/shared_basic.jls" "$W/cap.jls"
  cp "$F/jls/shared_basic.jls" "$W/before.jls"
  cp "$F/jls/shared_basic.jls" "$W/after.jls"
  # Another recording than the one a summary was made from (one byte more).
  cp "$F/jls/shared_basic.jls" "$W/other.jls" && printf 'x' >>"$W/other.jls"
  cp "$F/hpx/legacy.hpx.txt" "$W/capture.log"
  for m in vww_96_int8 kws_ref_model; do ln -s "$F/models/$m.tflite" "$W/$m.tflite"; done
  ln -s "$F/models/kws_ref_model.tflite" "$W/models/kws_ref_model.tflite"
  # The model's input: an MFCC (49x10 int8).
  head -c 490 /dev/zero >"$W/mfcc.bin"
  cp "$W/mfcc.bin" "$W/in.bin"
  cat >"$W/facts.json" <<'J'
{"clean_infer_count": 100, "clean_infer_avg_us": 20000, "probe_kind": "infer",
 "terminal": {"version": 1, "status": "ok", "requested_count": 100,
   "completed_count": 100, "elapsed_us": 2000500, "gate_asserted": true,
   "gate_lowered": true, "final_phase": "complete", "error_code": 0}}
J
  # A recorded power CSV for replay: 5 V, 0.2 A through the (shortened)
  # idle baseline of 0.3 s, 0.5 A under load.
  python3 -c "
print('t_s,voltage_v,current_a')
for i in range(8000): print('%.4f,5.0,%.4f' % (i * 0.001, 0.2 if i < 300 else 0.5))" >"$W/bench.csv"
  # A command workload (./infer), a pipe harness and a meter bridge.
  printf '#!/bin/sh\nexit 0\n' >"$W/infer" && chmod +x "$W/infer"
  printf 'import os, sys\nos.execvp(sys.executable, [sys.executable, "%s", "--realtime"] + sys.argv[1:])\n' \
    "$ERGON_SOURCE_DIR/tests/support/bridge_fake.py" >"$W/my_meter.py"
  printf 'fc first accum=33 units=5\nconv second in=9x9x4 out_c=8 filter=3x3 stride=1x1 pad=same\n' >"$W/my_shapes.txt"
  printf 'target:\n  board: sim\n' >"$W/ergon.yml"
  # Kernel samples "measured elsewhere" (a host run's, by the names used).
  (cd "$W" && "$ERGON_BIN" kernels run --board host --shapes my_shapes.txt --iterations 5 --out ks >/dev/null 2>&1) &&
    cp "$W/ks/samples.csv" "$W/samples.csv" && cp "$W/ks/samples.csv" "$W/board_samples.csv" ||
    bad "setup: kernels run for the samples placeholders failed"
}
# Placeholders that are outputs of commands a document does not show
# (README: two repeated runs to compare, any report to digest, kernel
# samples measured elsewhere).
setup_outputs() {
  local W=$1
  (cd "$W" && {
    for x in base new; do
      # work_s: each invocation's duration is the synthetic scenario's, not
      # this host's (as scripts/demo.sh): the two compare as the same.
      ergon run --device dut --instrument-opt work_s=0.01 --workload builtin:spin,iters=1000 \
        --idle-s 0.3 --windows 2 --window-s 0.3 --repeat 3 --out $x.json --quiet >/dev/null 2>&1 ||
        bad "setup: run $x.json failed"
    done
    cp base.json report.json
  })
}
# Listed, not run here: pattern -> who runs it.
listed() {
  case "$1" in
    "scripts/bootstrap.sh"*) echo "installs Debian packages (root); run by scripts/test.sh and .ci/run";;
    "scripts/demo.sh"*) echo "the demo; scripts/test.sh and scripts/fresh-check.sh run it, test_demo_deterministic its pieces";;
    "scripts/test.sh"*) echo "the whole suite; this test is part of it";;
    "cmake -S . -B build"*|"cmake --build build"*) echo "the Release build; run by scripts/test.sh (build-release)";;
    "cmake --install build"*) echo "install into a prefix; tests/functional/test_install.sh installs into a temporary one";;
    "man ergon-"*) echo "reads the installed page; tests/functional/test_install.sh runs man ergon-run from its prefix";;
    *"profile fw/ --config ergon.yml --out run1"*) echo "needs an Apollo510 EVB and a J-Link; tests/functional/test_profile_probes.sh runs the jlink/openocd lifecycles against fake vendor tools";;
    *"record --instrument ppk2 "*|*"run --device nrf-dk --instrument ppk2 "*|*"power-on --instrument ppk2 "*) echo "needs a PPK2; tests/functional/test_ppk2_cli runs record, run and power-on against the PPK2 simulator (test_ppk2_record_cli.sh: record on a terminal)";;
    *"analyze --jls run.jls "*) echo "analyzes the PPK2 recording above; tests/functional/test_ppk2_cli records from the simulator and analyzes it with --sync-input-index 3";;
    *"analyze --jls marked.jls --marker-input-index "*) echo "needs a recording of a marked run from a PPK2 (markers on D1); tests/functional/test_analyze_layers records one from the PPK2 simulator with ergon record and runs analyze --marker-input-index 1 --layers (with and without --facts) on it";;
    *"power-on --instrument joulescope"*|*"power-on --driver joulescope"*) echo "needs a Joulescope; tests/functional/test_joulescope_bridge runs power-on (both spellings, Ctrl-C, an unplug while held) against the stub pyjoulescope_driver";;
    *"run --device board --instrument joulescope "*|*"run --device myboard --instrument joulescope:"*) echo "needs a Joulescope; tests/functional/test_run_bridge.sh runs ergon run --instrument joulescope on the stub pyjoulescope_driver";;
    *"--power --set power.driver=joulescope"*) echo "needs an Apollo510 EVB, a J-Link and a Joulescope; tests/functional/test_profile_live.sh runs this external power stage end to end against a fake J-Link and a lock-step bridge";;
    *"--power --layer-energy --set power.driver=ppk2"*) echo "needs an Apollo510 EVB, a J-Link, a PPK2 and a power build with layer markers; tests/functional/test_profile_live_layers.sh runs this power stage with the marker line end to end against a fake J-Link and the PPK2 protocol simulator";;
    *"--power --layer-energy --set power.driver=joulescope --set power.lockstep=false"*) echo "needs an Apollo510 EVB, a J-Link, a JS220 and a power build with layer markers; tests/functional/test_profile_live_layers.sh runs this power stage with the marker line end to end against a fake J-Link and the shipped Joulescope bridge on the stub pyjoulescope_driver";;
    *"--power --set power.driver=ppk2"*) echo "needs an Apollo510 EVB, a J-Link and a PPK2; tests/functional/test_profile_live_ppk2.sh runs this gate-only power stage end to end against a fake J-Link and the PPK2 protocol simulator";;
    *"profile fw --board apollo510_evb --set target.probe=pyocd"*) echo "needs a CMSIS-DAP probe and pyOCD 0.14+; tests/functional/test_profile_pyocd_bmp.sh runs the pyocd lifecycle against a fake pyocd";;
    *"capture --transport rtt:gdb="*) echo "needs a GDB server with a target running RTT; tests/functional/test_rtt_gdb_qemu runs it against QEMU's gdbstub (test_rtt_gdb_faults: a fake server)";;
    *"capture --transport serial:"*) echo "needs a board on a serial port; tests/functional/test_profile_probes.sh captures HPX from a pty as the serial port, test_hpx_capture_stdin.sh the same stream from a file";;
    *"run --device orin --instrument hwmon:VDD_IN --workload command:./infer"*) echo "needs a Jetson's INA3221 and a workload; tests/functional/test_run_trim runs --trim-s with --repeat on a fake Orin NX tree, test_hw_jetson_method works its figures out by hand";;
    *"--instrument hwmon:VDD_IN,VDD_CPU_GPU_CV,VDD_SOC"*) echo "needs a Jetson's INA3221 rails; tests/functional/test_rails_cli runs these three rails on fake Jetson hwmon trees, test_hw_instruments.sh lists them";;
    *"validate --board qemu-an547 --models"*) echo "a QEMU model profile with a firmware build per model (minutes); tests/functional/test_validate.sh runs the fixture models, a baseline folder and a db baseline";;
    *"validate --board sim --power --models ../shared/fixtures/models"*) echo "eight virtual-bench profiles (minutes under ASan on a loaded machine); tests/functional/test_validate_boards.sh runs exactly this command and checks its XML and summaries";;
    *"view day.jls --serve"*) echo "serves until Ctrl-C; tests/functional/test_view_serve runs --serve, its token, tiles and stop";;
    "python3 -m pip install"*) echo "installs the vendor's Joulescope driver (network)";;
    *) return 1;;
  esac
}

# extract DOC: one command a line (newlines inside as \x1f): LINE<TAB>CMD.
extract() {
  python3 - "$1" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
starts = ("build/ergon ", "ergon ", "scripts/", "cmake ", "man ", "cat > ", "python3 -m pip", "mkdir -p ")
out, i, fence = [], 0, False
while i < len(lines):
    l = lines[i]
    if l.lstrip().startswith("```"):
        fence = not fence
    m = re.match(r"^( {4}| {7})(\$ )?(\S.*)$", l)
    if m and (m.group(1) == "    " or not re.match(r"^ {4}\S", l)):
        cmd = m.group(3)
        if cmd.startswith(starts) and not re.match(r"^ergon [a-z-]+: ", cmd):
            n = i + 1
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
            out.append((n, cmd))
    elif not l.startswith("#"):
        # Inline code spans that are commands with arguments (not a bare
        # command name, not a pattern with "...", not a heading's).
        for s in re.findall(r"`((?:build/)?ergon [^`]+)`", l):
            words = s.split()
            k = 2 if words[0].endswith("ergon") else 1
            if len(words) > k and "..." not in s and "…" not in s and not re.search(r"[A-Z]{3,}", s):
                out.append((i + 1, s))
    i += 1
for n, c in out:
    print("%d\t%s" % (n, c.replace("\n", "\x1f")))
PY
}

# warnings OUTFILE ERRFILE: the warning lines, one a line.
warnings() {
  grep -hE "^ergon [a-z-]+: (warning|error):|^ +(warning|error) +[a-z0-9_]+\.[a-z0-9_.]+:|^integrity +: (degraded|invalid)|(^|: )(DEGRADED|NOT VALID)\b" "$1" "$2"
}

# expected CMD WARNINGS STDOUT: the warnings of a command expected to exit
# 0 are all ones this machine or the emulator explains (say which, return
# 0), or not (return 1). Explained: run.sampler_gap (the sampler thread was
# not scheduled for 10 sample periods: the host's load); run.release_overrun
# of a builtin:periodic workload whose burst + sleep fits its period (the
# host started an invocation late; work that cannot fit, as the README's
# old 30 Hz example's 50 ms per 33 ms, is not explained);
# pmu.cycle_counter_missing on qemu-an547 and qemu-an505 (QEMU implements no
# DWT CYCCNT: docs/internals/target.md, docs/internals/ports.md).
expected() {
  python3 - "$1" "$2" "$3" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import re, sys
cmd, warn, out, load = sys.argv[1], sys.argv[2], open(sys.argv[3]).read(), sys.argv[4]
why = []
for l in warn.splitlines():
    if re.match(r"^integrity +: degraded|(^|: )DEGRADED\b", l):
        continue
    m = re.search(r"\b(warning)[: ]+([a-z0-9_]+\.[a-z0-9_.]+):(.*)", l)
    code = m.group(2) if m else None
    if code == "run.sampler_gap":
        why.append("run.sampler_gap (the host's load: %s)" % load)
    elif code == "run.release_overrun":
        p = re.search(r"builtin:periodic,burst_ms=(\d+),sleep_ms=(\d+) .*--release-hz (\d+)", cmd)
        if not (p and int(p.group(1)) + int(p.group(2)) < 1000 / int(p.group(3))):
            sys.exit(1)
        why.append("run.release_overrun: the work (%s + %s ms) fits the %.1f ms period, the host started it late (load %s)"
                   % (p.group(1), p.group(2), 1000 / int(p.group(3)), load))
    elif code == "pmu.cycle_counter_missing" and re.search(r"qemu-an5(47|05)\b", cmd):
        why.append("pmu.cycle_counter_missing (QEMU has no cycle counter)")
    else:
        sys.exit(1)
print("; ".join(sorted(set(why))) + ": not counted")
PY
}

# walk DOC DIR: run every command of DOC in DIR.
walk() {
  local doc=$1 W=$2 n=0 line cmd want bare why got variants v warn codes
  while IFS=$'\t' read -r line cmd; do
    cmd=${cmd//$'\x1f'/$'\n'}
    n=$((n + 1))
    # The command without its comment (two spaces or more, then #).
    bare=$(sed -E 's/ {2,}#.*$//' <<<"$cmd"); bare=${bare%"${bare##*[! ]}"}
    want=0
    [[ "${cmd#"$bare"}" =~ \#\ +exit\ ([0-9]+) ]] && want=${BASH_REMATCH[1]}
    if why=$(listed "${bare#build/}"); then
      echo "list - $doc:$line: $bare: not run here: $why"
      continue
    fi
    if [[ "$bare" == *"qemu-an547"* ]] && ! { command -v qemu-system-arm >/dev/null && [ -e "$W/build/target/an547/ergon_an547_profile.elf" ]; }; then
      bad "$doc:$line: $bare: needs qemu-system-arm and the an547 firmware (arm-none-eabi-gcc); scripts/bootstrap.sh installs both"
      continue
    fi
    # The placeholders and durations (the header says which).
    bare=${bare%" &"}
    variants=("$bare")
    if [[ "$bare" =~ ^(.*)\ \[([^]]*)\](.*)$ ]]; then
      variants=("${BASH_REMATCH[1]}${BASH_REMATCH[3]}" "${BASH_REMATCH[1]} ${BASH_REMATCH[2]}${BASH_REMATCH[3]}")
    fi
    for v in "${variants[@]}"; do
      # The second form writes where the first did.
      if [ "$v" != "${variants[0]}" ] && [[ "$v" =~ --out\ ([^ ]+) ]]; then rm -rf "${W:?}/${BASH_REMATCH[1]}"; fi
      if [[ "$v" =~ (^|/)ergon\ run\  ]] && [[ "$v" != *--dry-run* ]]; then
        v="$v --idle-s 0.3 --windows 2 --window-s 0.5"
      fi
      (cd "$W" && bash -c "$v") >"$TMP/o" 2>"$TMP/e"
      got=$?
      if [ "$got" = "$want" ]; then ok "$doc:$line: $v (exit $got)"; else
        bad "$doc:$line: $v: exit $got, the document says $want"; head -5 "$TMP/e"; fi
      if grep -v -e '://' -e '^\s*#' "$TMP/o" "$TMP/e" | grep -q '//'; then
        bad "$doc:$line: $v: a double-slash path in its output"
      fi
      # --log FILE: the summary went there.
      if [[ "$v" =~ --log\ ([^ ]+) ]] && [ -f "$W/${BASH_REMATCH[1]}" ]; then cat "$W/${BASH_REMATCH[1]}" >>"$TMP/o"; fi
      warn=$(warnings "$TMP/o" "$TMP/e")
      [ "$want" = 0 ] && [ -n "$warn" ] || continue
      if why=$(expected "$v" "$warn" "$TMP/o"); then
        echo "note - $doc:$line: $why"
      else
        bad "$doc:$line: $v: an unexpected warning: $(head -3 <<<"$warn")"
      fi
    done
  done < <(extract "$ERGON_SOURCE_DIR/$doc")
  [ "$n" -ge 12 ] && ok "$n commands found in $doc" || bad "only $n commands found in $doc"
}

# docs/USAGE.md, from the source tree's point of view (../shared).
U=$TMP/usage/walk
mkdir -p "$U"
ln -s "$ERGON_SHARED_DIR" "$TMP/usage/shared"
setup "$U"
walk docs/USAGE.md "$U"
# What the guide promises about the outputs.
[ -f "$U/sim-run/summary.json" ] && [ -f "$U/sim-run/pmu/capture.log" ] && [ -f "$U/sim-run/power/capture.log" ] &&
  ok "sim-run/ has summary.json and both raw logs" || bad "sim-run outputs missing"
grep -q '"energy_per_inference_j": 9' "$U/sim-run/summary.json" && ok "9.0 uJ per inference, as the guide says" ||
  bad "energy per inference in sim-run/summary.json is not 9.0 uJ"
[ -f "$U/jsrun/summary.json" ] && ok "analyze wrote jsrun/summary.json" || bad "no jsrun/summary.json"
[ ! -e "$U/results" ] && ok "nothing written to results/ (every command passes --out)" || bad "a command wrote results/"

# README.md, with ergon installed (on PATH).
R=$TMP/readme
mkdir -p "$R"
setup "$R"
setup_outputs "$R"
walk README.md "$R"
[ -f "$R/run/report.json" ] && ok "README: run/report.json written by its first run" || bad "README: no run/report.json"
# The 30 Hz example's work fits its period: burst + sleep < 1000 / R ms, from
# the command as README.md writes it.
python3 - "$ERGON_SOURCE_DIR/README.md" <<'PY' && ok "README: the 30 Hz example's burst + sleep fits its period" || bad "README: the 30 Hz example overruns its period"
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"builtin:periodic,burst_ms=(\d+),sleep_ms=(\d+) --release-hz (\d+)", t)
sys.exit(0 if m and int(m.group(1)) + int(m.group(2)) < 1000 / int(m.group(3)) else 1)
PY
finish
