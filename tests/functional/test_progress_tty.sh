#!/usr/bin/env bash
# Progress on every long step when stderr is a terminal, nothing when it is
# not, nothing with --quiet (issue 13): `ergon profile` per stage and step
# (firmware, start, capture, each PMU pass k/N, analysis, writing),
# `ergon kernels run` per case (i/N and its name), `ergon capture` per
# counter pass, `ergon run` and `ergon record` with --quiet; `ergon run
# --repeat` a line per repetition and `ergon validate` model k/N with an ETA
# (issue 35). The terminal is
# a pty from util-linux `script`. The expected lines are the documented
# steps (docs/internals/cli.md "Progress") and the inputs written here,
# not copies of the program's output.
source "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
command -v script >/dev/null || { bad "script (bsdutils) is not installed: scripts/bootstrap.sh"; finish; }
tty() { # tty NAME COMMAND...: run on a pty, its output (\r as newlines) in $T
  local name=$1
  shift
  script -qfec "$*" /dev/null >"$TMP/$name.out" 2>&1 </dev/null
  T=$(tr '\r' '\n' <"$TMP/$name.out")
}

# profile, sim, power on, with the scenario whose firmware runs two counter
# passes ("cpu" then "mem": sim/src/board.c, pmu_presets) and says so
# (HPX_NUM_PRESETS=2): 3 stages (pmu, power, outputs).
tty prof "$E profile --board sim --power --sim-scenario pmu_presets --out $TMP/p"
for step in "[1/3 pmu] firmware pmu_presets" "[1/3 pmu] start sim" "[1/3 pmu] capture " \
  "[1/3 pmu] pass 1/2 cpu" "[1/3 pmu] pass 2/2 mem" "[1/3 pmu] analysis the PMU stream" \
  "[2/3 power] firmware baseline_power" "[2/3 power] start sim" "[2/3 power] capture " \
  "[2/3 power] analysis the gated windows" "[3/3 outputs] writing $TMP/p"; do
  contains "$T" "ergon profile: $step" "profile on a terminal: $step"
done
# The steps come in this order.
order=$(printf '%s\n' "$T" | grep -o 'ergon profile: \[[0-9]/3 [a-z]*\] [a-z]*' | uniq | sed 's/ergon profile: //' | tr '\n' ';')
want="[1/3 pmu] firmware;[1/3 pmu] start;[1/3 pmu] capture;[1/3 pmu] pass;[1/3 pmu] analysis;[2/3 power] firmware;[2/3 power] start;[2/3 power] capture;[2/3 power] analysis;[3/3 outputs] writing;"
[ "$order" = "$want" ] && ok "profile steps in order" || bad "profile step order: $order"
[ -f "$TMP/p/summary.json" ] && ok "profile wrote its summary" || bad "no summary"
# Without power: 2 stages.
tty prof2 "$E profile --board sim --out $TMP/p2"
contains "$T" "ergon profile: [2/2 outputs] writing" "without power: outputs is stage 2 of 2"
# Not a terminal: no progress at all.
expect 0 "profile off a terminal" -- "$E" profile --board sim --power --sim-scenario pmu_presets --out "$TMP/p3"
case "$ERR" in *$'\r'*|*"ergon profile: ["*) bad "progress off a terminal: ${ERR:0:200}";; *) ok "profile: no progress off a terminal";; esac
tty profq "$E profile --board sim --power --out $TMP/p4 --quiet"
case "$T" in *"ergon profile: ["*) bad "profile --quiet drew progress";; *) ok "profile --quiet: no progress";; esac
contains "$T" "Energy/inference" "profile --quiet still prints its result"
tty profj "$E profile --board sim --out $TMP/p5 --json"
case "$T" in *"ergon profile: ["*) bad "profile --json drew progress";; *) ok "profile --json: no progress";; esac

# kernels run: case i/N with the names of the shapes file, in its order.
printf 'fc first accum=33 units=5\ndwconv second in=9x9x5 filter=3x3 stride=2x2 pad=same\n' >"$TMP/shapes.txt"
tty kern "$E kernels run --board host --shapes $TMP/shapes.txt --iterations 2 --out $TMP/k"
contains "$T" "ergon kernels: case 1/2 first" "kernels: case 1/2 and its name"
contains "$T" "ergon kernels: case 2/2 second" "kernels: case 2/2 and its name"
expect 0 "kernels off a terminal" -- "$E" kernels run --board host --shapes "$TMP/shapes.txt" --iterations 2 --out "$TMP/k2"
case "$ERR" in *$'\r'*|*"case 1/2"*) bad "kernels progress off a terminal";; *) ok "kernels: no progress off a terminal";; esac
tty kernq "$E kernels run --board host --shapes $TMP/shapes.txt --iterations 2 --out $TMP/k3 --quiet"
case "$T" in *"case 1/2"*) bad "kernels --quiet drew progress";; *) ok "kernels --quiet: no progress";; esac

# capture of the two-pass stream the profile kept: each pass named.
tty cap "$E capture --transport file:$TMP/p/pmu/capture.log --out $TMP/c"
contains "$T" "pass 1 cpu" "capture: the first pass"
contains "$T" "pass 2 mem" "capture: the second pass"
expect 0 "capture off a terminal" -- "$E" capture --transport "file:$TMP/p/pmu/capture.log" --out "$TMP/c2"
case "$ERR" in *$'\r'*) bad "capture progress off a terminal";; *) ok "capture: no progress off a terminal";; esac
tty capq "$E capture --transport file:$TMP/p/pmu/capture.log --out $TMP/c3 --quiet"
case "$T" in *"ergon capture:"*) bad "capture --quiet drew progress";; *) ok "capture --quiet: no progress";; esac

# run --quiet on a terminal: neither the progress line nor the duration.
tty runq "$E run --device d --workload builtin:spin --idle-s 0.3 --windows 2 --window-s 0.3 --out $TMP/r.json --quiet"
case "$T" in *"  load   window"*|*"ergon run: about"*) bad "run --quiet: ${T:0:200}";; *) ok "run --quiet: no progress, no announcement";; esac
contains "$T" "integrity   :" "run --quiet still prints its summary"

# run --repeat 3 on a terminal: a line of its own when each repetition is
# done, the first two with the time left, the last without (issue 35).
tty rep "$E run --device d --workload builtin:spin,iters=2000 --idle-s 0.2 --windows 2 --window-s 0.2 --repeat 3 --out $TMP/rep.json"
for k in 1 2; do
  printf '%s\n' "$T" | grep -Eq "^ergon run: repetition $k/3 done in [0-9.]+ (s|min [0-9]+ s); about [0-9]+ (s|min [0-9]+ s) left\$" &&
    ok "run --repeat: repetition $k/3 done, the time left" || bad "run --repeat: no line for repetition $k/3: ${T:0:400}"
done
printf '%s\n' "$T" | grep -Eq "^ergon run: repetition 3/3 done in [0-9.]+ (s|min [0-9]+ s)\$" &&
  ok "run --repeat: the last repetition done, nothing left" || bad "run --repeat: no line for repetition 3/3"
[ "$(printf '%s\n' "$T" | grep -c '^ergon run: repetition')" = 3 ] && ok "one line per repetition" || bad "repetition lines: $(printf '%s\n' "$T" | grep '^ergon run: repetition')"
expect 0 "run --repeat off a terminal" -- "$E" run --device d --workload builtin:spin,iters=2000 --idle-s 0.2 --windows 2 --window-s 0.2 --repeat 3 --out "$TMP/rep2.json"
case "$ERR" in *"repetition 1/3 done"*) bad "repetition lines off a terminal";; *) ok "run --repeat: no repetition line off a terminal";; esac
tty repj "$E run --device d --workload builtin:spin,iters=2000 --idle-s 0.2 --windows 2 --window-s 0.2 --repeat 2 --out $TMP/rep3.json --json"
case "$T" in *"repetition 1/2 done"*) bad "run --repeat --json drew a repetition line";; *) ok "run --repeat --json: no repetition line";; esac

# validate on a terminal: model k/N with its name, the check, and from the
# second model on the time left (issue 35). Three models, in file-name order.
mkdir -p "$TMP/models"
for m in ad01_int8 kws_ref_model vww_96_int8; do cp "$ERGON_SHARED_DIR/fixtures/models/$m.tflite" "$TMP/models/"; done
tty val "$E validate --board sim --models $TMP/models --junit-xml $TMP/v.xml --out $TMP/v"
contains "$T" "ergon validate: model 1/3 ad01_int8: profile" "validate: model 1/3 and its name"
printf '%s\n' "$T" | grep -q "model 1/3 ad01_int8: profile, ETA" && bad "validate: an ETA before any model finished" || ok "validate: no ETA for the first model"
for m in "2/3 kws_ref_model" "3/3 vww_96_int8"; do
  printf '%s\n' "$T" | grep -Eq "ergon validate: model $m: profile, ETA [0-9]+ (s|min [0-9]+ s)" &&
    ok "validate: model $m with its ETA" || bad "validate: no ETA line for model $m: ${T:0:500}"
done
contains "$T" "validate: 3 model(s)" "validate on a terminal still prints its result"
expect 0 "validate off a terminal" -- "$E" validate --board sim --models "$TMP/models" --junit-xml "$TMP/v2.xml" --out "$TMP/v2"
case "$ERR" in *$'\r'*|*"model 1/3"*|*"ETA"*) bad "validate progress off a terminal: ${ERR:0:200}";; *) ok "validate: no progress line off a terminal";; esac
contains "$ERR" "ergon validate: kws_ref_model: profile ..." "validate off a terminal: a plain line per check"

# record --quiet, against the PPK2 simulator.
SIM=${ERGON_BUILD_DIR:?}/ergon_ppk2_sim
coproc SIMP { exec "$SIM" --current-a 0.004 --burst-a 0.004 --period-s 0; }
read -r PORT <&"${SIMP[0]}"
tty recq "$E record --instrument ppk2:$PORT --instrument-opt vdd_mv=3000 --duration-s 0.3 --out $TMP/q.jls --quiet"
case "$T" in *" samples "*" dropped "*) bad "record --quiet drew progress";; *) ok "record --quiet: no progress";; esac
contains "$T" "recorded " "record --quiet still prints its summary"
kill "$SIMP_PID" 2>/dev/null; wait "$SIMP_PID" 2>/dev/null
finish
