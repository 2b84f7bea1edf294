#!/usr/bin/env bash
# Issue 30, case 6: inputs that are not regular files are refused or
# bounded, endless lines are cut at a documented limit with their place,
# and opening a FIFO never blocks. Before: `compare r.json /dev/zero` grew
# to 1.7 GB, `parse /dev/zero` and `analyze --stats /dev/zero` never ended,
# and a FIFO with no writer blocked every command in open(). Every command
# here runs under `timeout 60`: a hang is exit 124, a failure of this test.
. "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
"$E" run --device d --workload builtin:spin "${SHORT[@]}" --out "$TMP/r.json" >/dev/null 2>&1 ||
  bad "fixture run"
"$E" keygen --out "$TMP/k" >/dev/null 2>&1 || bad "fixture key"

# Every reading command, with @IN@ for the input under test.
CMDS=(
  "compare|compare $TMP/r.json @IN@"
  "verify|verify @IN@"
  "sign|sign @IN@ --key $TMP/k"
  "report|report @IN@ --out $TMP/o_@N@.html"
  "db ingest|db --db $TMP/d_@N@.db ingest @IN@"
  "run replay|run --device d --instrument replay:@IN@ --workload builtin:spin --idle-s 0.2 --windows 1 --window-s 0.2 --out $TMP/rr_@N@.json"
  "parse|parse @IN@ --out $TMP/p_@N@"
  "analyze --stats|analyze --stats @IN@ --out $TMP/a_@N@"
  "analyze --raw|analyze --raw @IN@ --out $TMP/b_@N@"
  "analyze --jls|analyze --jls @IN@ --out $TMP/j_@N@"
  "capture file:|capture --transport file:@IN@ --out $TMP/c_@N@ --timeout 5"
)
n=0
each() { # KIND INPUT WANT-EXIT-OR-ANY NEEDLE
  local kind=$1 in=$2 want=$3 needle=$4
  for c in "${CMDS[@]}"; do
    n=$((n + 1))
    local name=${c%%|*} args=${c#*|}
    args=${args//@IN@/$in}
    args=${args//@N@/$n}
    # shellcheck disable=SC2086
    timeout 60 "$E" $args >"$TMP/out" 2>"$TMP/err" </dev/null
    local rc=$?
    if [ $rc = 124 ]; then bad "$kind: $name hung (killed after 60 s)"; continue; fi
    if [ "$want" != any ] && [ $rc != "$want" ]; then
      bad "$kind: $name: exit $rc, wanted $want"; head -3 "$TMP/err"; continue
    fi
    [ $rc != 0 ] && ok "$kind: $name ends, exit $rc" || bad "$kind: $name accepted it (exit 0)"
    if [ -n "$needle" ]; then grep -q -- "$needle" "$TMP/err" && ok "$kind: $name says '$needle'" ||
      { bad "$kind: $name: no '$needle'"; head -3 "$TMP/err"; }; fi
  done
}

# A character device: refused at once, naming what it is.
each "/dev/zero" /dev/zero any "/dev/zero: is a character device"
# A FIFO with no writer: the open returns at once; it reads as empty.
mkfifo "$TMP/fifo"
each "FIFO without a writer" "$TMP/fifo" any ""

# Endless lines through a pipe: cut at the limit, with the place.
mkfifo "$TMP/zeros"
(timeout 60 head -c 50000000 /dev/zero >"$TMP/zeros" 2>/dev/null &)
expect 1 "analyze --stats on an endless line is cut at 4096 bytes" -- timeout 60 "$E" analyze \
  --stats "$TMP/zeros" --out "$TMP/endless"
grep -q "zeros:1:4097: line longer than 4096 bytes" "$TMP/endless/summary.json" &&
  ok "the summary names the place (file:1:4097)" || bad "no place in the summary"
printf '# provenance: synthetic\nt_s,voltage_v,current_a\n' >"$TMP/long.csv"
head -c 5000 /dev/zero | tr '\0' 1 >>"$TMP/long.csv"
expect 3 "a replay line over 4096 bytes is cut with its place" -- timeout 60 "$E" run --device d \
  --instrument "replay:$TMP/long.csv" --workload builtin:spin "${SHORT[@]}" --out "$TMP/rl.json"
contains "$ERR" "long.csv:3:4097: line longer than 4096 bytes" "the message names file:line:column"
head -c 200000 /dev/zero | timeout 60 "$E" parse - --out "$TMP/pz" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc != 124 ] && ok "parse - of an endless line ends (exit $rc)" || bad "parse - hung"
grep -q '"pmu.line_too_long"' "$TMP/pz/summary.json" 2>/dev/null &&
  ok "parse names the over-long line (pmu.line_too_long)" || bad "no pmu.line_too_long"
finish
