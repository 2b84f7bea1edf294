#!/usr/bin/env bash
# Stale .ergon-tmp-XXXXXX files (a run killed while writing) in the output
# folder are reported by the next run, removed only with --clean, and
# never reused or touched otherwise.
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
finish
