#!/usr/bin/env bash
# Stale .ergon-tmp-XXXXXX files (a run killed while writing) in the output
# folder are reported by the next run, removed only with --clean, and
# never reused or touched otherwise. The same scan runs in every command
# that writes into a folder: record, capture, profile, analyze, parse,
# kernels report/run, report, compare, energy-model, keygen, model infer.
. "$(dirname "$0")/run_lib.sh"
mkdir -p "$TMP/o"
printf '{"complete": "report of a killed run"}\n' >"$TMP/o/.ergon-tmp-Ab12Cd"
printf 'mine\n' >"$TMP/o/.ergon-tmp-notmkstemp" # not mkstemp's pattern: not ours
expect 0 "a run beside a stale temporary file" -- "$ERGON_BIN" run --device d --workload builtin:spin \
  "${SHORT[@]}" --out "$TMP/o/a.json"
contains "$ERR" ".ergon-tmp-Ab12Cd (39 bytes) is a stale temporary file" "the stale file is reported with its size"
contains "$ERR" "--clean" "the report names the fix"
grep -q 'report of a killed run' "$TMP/o/.ergon-tmp-Ab12Cd" && ok "the stale file is untouched" || bad "stale file changed"
case "$ERR" in *notmkstemp*) bad "a file not of ours is reported";; *) ok "a file not of ours is not reported";; esac
expect 0 "--clean removes it" -- "$ERGON_BIN" run --device d --workload builtin:spin \
  "${SHORT[@]}" --out "$TMP/o/b.json" --clean
contains "$ERR" "removed $TMP/o/.ergon-tmp-Ab12Cd (39 bytes)" "--clean says what it removed"
[ -e "$TMP/o/.ergon-tmp-Ab12Cd" ] && bad "still there" || ok "the stale file is gone"
[ -e "$TMP/o/.ergon-tmp-notmkstemp" ] && ok "the other file stays" || bad "removed a file not of ours"
expect 0 "the next run is quiet" -- "$ERGON_BIN" run --device d --workload builtin:spin \
  "${SHORT[@]}" --out "$TMP/o/c.json"
case "$ERR" in *stale*) bad "still reports stale files: $ERR";; *) ok "no stale report";; esac
# A killed run leaves its reservation: the next run reports it.
"$ERGON_BIN" run --device d --workload builtin:spin --idle-s 5 --windows 5 --window-s 5 \
  --out "$TMP/o/k.json" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 200); do ls -A "$TMP/o" | grep -q 'k.json.ergon-lock' && break; sleep 0.05; done
kill -KILL $pid
wait $pid 2>/dev/null
expect 0 "after a SIGKILL" -- "$ERGON_BIN" run --device d --workload builtin:spin \
  "${SHORT[@]}" --out "$TMP/o/k.json"
contains "$ERR" "is a stale temporary file" "the killed run's reservation is reported"
# It was killed while measuring: the file is the reserved space, all zero;
# the warning says so instead of "it may hold a complete report".
contains "$ERR" "killed before it wrote anything" "and said to hold nothing"

# Every writing command: a stale file in its output folder is reported
# (named, with its size) before it writes, and --clean removes it. The
# inputs below are mostly missing: the scan runs right after the options
# are read, before any input is opened, so it is the first thing each says.
stale_case() { # stale_case NAME FOLDER -- command... (ends with its own --out)
  local name=$1 dir=$2
  shift 3
  mkdir -p "$dir"
  printf 'partial\n' >"$dir/.ergon-tmp-Zz9Yx8"
  "$@" >"$TMP/sout" 2>"$TMP/serr"
  local rc=$?
  [ $rc -lt 128 ] || bad "$name: killed by signal $((rc - 128))"
  contains "$(cat "$TMP/serr")" "ergon $name: warning: $dir/.ergon-tmp-Zz9Yx8 (8 bytes) is a stale temporary file" \
    "$name reports a stale temporary file in its output folder"
  [ -e "$dir/.ergon-tmp-Zz9Yx8" ] && ok "$name leaves it alone without --clean" || bad "$name removed it"
  "$@" --clean >"$TMP/sout" 2>"$TMP/serr"
  contains "$(cat "$TMP/serr")" "ergon $name: removed $dir/.ergon-tmp-Zz9Yx8 (8 bytes)" "$name --clean says what it removed"
  [ -e "$dir/.ergon-tmp-Zz9Yx8" ] && bad "$name --clean left it" || ok "$name --clean removed it"
}
A="$TMP/o/a.json"
stale_case record "$TMP/s-record" -- "$ERGON_BIN" record --instrument synthetic --duration-s 0.1 \
  --out "$TMP/s-record/r.jls"
stale_case capture "$TMP/s-capture" -- "$ERGON_BIN" capture --transport "serial:$TMP/no-such-tty,115200" \
  --out "$TMP/s-capture"
stale_case profile "$TMP/s-profile" -- "$ERGON_BIN" profile "$TMP/no-such-fw" --board sim \
  --out "$TMP/s-profile"
stale_case analyze "$TMP/s-analyze" -- "$ERGON_BIN" analyze --raw "$TMP/no-such.csv" --out "$TMP/s-analyze"
stale_case parse "$TMP/s-parse" -- "$ERGON_BIN" parse "$TMP/no-such.log" --out "$TMP/s-parse"
stale_case kernels "$TMP/s-kreport" -- "$ERGON_BIN" kernels report "$TMP/no-such.csv" --out "$TMP/s-kreport"
stale_case kernels "$TMP/s-krun" -- "$ERGON_BIN" kernels run --board host --shapes "$TMP/no-such.csv" \
  --out "$TMP/s-krun"
stale_case report "$TMP/s-report" -- "$ERGON_BIN" report "$A" --out "$TMP/s-report/r.html"
stale_case compare "$TMP/s-compare" -- "$ERGON_BIN" compare "$A" "$A" --out "$TMP/s-compare"
stale_case energy-model "$TMP/s-em" -- "$ERGON_BIN" energy-model "$A" --action spin --out "$TMP/s-em/m.json"
stale_case keygen "$TMP/s-keygen" -- "$ERGON_BIN" keygen --out "$TMP/s-keygen/k"
stale_case model "$TMP/s-model" -- "$ERGON_BIN" model infer "$TMP/no-such.tflite" --input "$TMP/no-such.bin" \
  --out "$TMP/s-model/o.bin"
finish
