#!/usr/bin/env bash
# Inputs are checked before anything is built, measured or announced
# (issue 35): `ergon run` says "about N s" only once its inputs passed (it
# announced 370 s and then failed on a missing file); `ergon profile
# MODEL.tflite` refuses a file that is not a model before it says it builds
# firmware. And what a terminal shows: the run summary's verdict words in
# colour on a pty (ECMA-48 SGR 32 green, 36 cyan; written here) and plain on
# a pipe; doctor's specific fix for each missing instrument and its lines
# wrapped to an 80-column terminal.
. "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
command -v script >/dev/null || { bad "script (bsdutils) is not installed: scripts/bootstrap.sh"; finish; }

# run: a missing workload file, 12 s of run asked: refused, nothing announced.
expect 3 "run with a missing tflite model" -- "$E" run --device d \
  --workload "tflite:$TMP/absent.tflite" --idle-s 2 --windows 2 --window-s 5 --out "$TMP/r.json"
case "$ERR" in *"about "*) bad "run announced a duration before refusing: $ERR";;
  *) ok "nothing announced before the refusal";; esac
contains "$ERR" "$TMP/absent.tflite" "the missing file is named"
# A run whose inputs pass: the announcement comes (12 s >= 10 s off a terminal),
# before the summary.
expect 0 "run that announces" -- "$E" run --device d --workload builtin:spin,iters=2000 \
  --idle-s 2 --windows 2 --window-s 5 --sample-hz 200 --out "$TMP/r2.json"
contains "$ERR" "ergon run: about 12 s (settle 0 s + idle 2 s + 2 windows x 5 s)" "announced once the inputs passed"

# profile: a file that is not a TFLite model, on the board that builds
# model firmware: refused before the build is announced.
printf 'not a model at all\n' >"$TMP/fake.tflite"
expect 3 "profile fake.tflite" -- "$E" profile "$TMP/fake.tflite" --board qemu-an547 --out "$TMP/p"
case "$ERR" in *building*) bad "announced a build: $ERR";; *) ok "no build announced";; esac
contains "$ERR" "not a TFLite model" "says why"
[ ! -e "$TMP/p/firmware" ] && ok "no firmware folder made" || bad "a firmware folder was made"

# Colour on a terminal: STABLE green, SYNTHETIC cyan, integrity valid green;
# a pipe gets none (test_run_cli checks the plain words).
ESC=$'\033'
TERM=xterm script -qfec "$E run --device d --workload builtin:spin,iters=2000 --idle-s 0.2 --windows 2 --window-s 0.25 --out $TMP/r3.json" /dev/null >"$TMP/tty.out" 2>&1 </dev/null
T=$(cat "$TMP/tty.out")
contains "$T" "result      : ${ESC}[36mSYNTHETIC${ESC}[0m" "SYNTHETIC in cyan on a terminal"
contains "$T" "sustained   : ${ESC}[32mSTABLE${ESC}[0m" "STABLE in green on a terminal"
case "$T" in *"integrity   : ${ESC}[32mvalid${ESC}[0m"*|*"integrity   : ${ESC}[33mdegraded${ESC}[0m"*) ok "integrity coloured";;
  *) bad "integrity not coloured: $(grep integrity "$TMP/tty.out")";; esac
case "$(grep report_id "$TMP/tty.out")" in *"$ESC["*) bad "report_id coloured";; *) ok "figures and ids stay plain";; esac

# doctor: a missing PPK2 gets its own fix (the port and the cable), and on
# an 80-column terminal no line is wider than 80 columns.
mkdir -p "$TMP/root/sys" "$TMP/root/dev"
expect 0 "doctor --json on an empty sysfs" -- "$E" doctor --sysfs-root "$TMP/root" --json
printf '%s' "$OUT" | python3 -c '
import json, sys
caps = {c["id"]: c for c in json.load(sys.stdin)["capabilities"]}
ppk2, rapl = caps["instrument:ppk2"], caps["instrument:rapl"]
assert not ppk2["ok"] and "USB DATA/POWER" in ppk2["fix"], ppk2
assert not rapl["ok"] and "modprobe intel_rapl_msr" in rapl["fix"], rapl
assert not any("see the reason" in (c.get("fix") or "") for c in caps.values())
' && ok "doctor: a specific fix per missing instrument" || bad "doctor fixes: ${OUT:0:400}"
script -qfec "stty cols 80; $E doctor --sysfs-root $TMP/root" /dev/null >"$TMP/doc.out" 2>&1 </dev/null
# Columns, not bytes (✓ and ✗ are three bytes in UTF-8 and one column); a
# line may pass 80 only when what follows the reason column (34) is one word
# that cannot be broken (a long path).
wide=$(tr -d '\r' <"$TMP/doc.out" | sed "s/${ESC}\[[0-9;]*m//g" |
  python3 -c 'import sys; w=[l for l in sys.stdin.buffer.read().decode().splitlines() if len(l) > 80 and " " in l[34:].strip()]; [print(repr(l), file=sys.stderr) for l in w]; print(len(w))')
[ "$wide" = 0 ] && ok "doctor on an 80-column terminal: no line over 80 columns" ||
  bad "doctor: $wide line(s) over 80 columns"
grep -q "fix: " "$TMP/doc.out" && ok "doctor shows its fixes on the terminal" || bad "no fix lines"
finish
