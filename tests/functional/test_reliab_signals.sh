#!/usr/bin/env bash
# SIGHUP and SIGQUIT end `ergon run` like SIGINT (interrupted, report kept),
# a closed pipe on the summary loses nothing, and --log FILE detaches a run
# from its terminal (SIGHUP is then ignored).
. "$(dirname "$0")/run_lib.sh"
RUN=(--device d --workload builtin:spin,iters=20000 --idle-s 0.2 --windows 200 --window-s 0.25)

# Wait until the run is measuring (its reservation exists), then signal it.
wait_lock() { for _ in $(seq 200); do ls -A "$TMP" | grep -q "$1.ergon-lock" && return; sleep 0.05; done; }

for sig in HUP QUIT; do
  "$ERGON_BIN" run "${RUN[@]}" --out "$TMP/sig$sig.json" >"$TMP/out" 2>"$TMP/err" &
  pid=$!
  wait_lock "sig$sig.json"
  sleep 0.5
  kill -$sig $pid
  wait $pid
  rc=$?
  [ $rc = 1 ] && ok "SIG$sig: exit 1 (interrupted)" || bad "SIG$sig: exit $rc"
  grep -q '"status": "interrupted"' "$TMP/sig$sig.json" && ok "SIG$sig: status interrupted" || bad "SIG$sig: no interrupted report"
  grep -q '"code": "run.interrupted"' "$TMP/sig$sig.json" && ok "SIG$sig: run.interrupted issue" || bad "SIG$sig issue"
  "$ERGON_BIN" verify "$TMP/sig$sig.json" >/dev/null && ok "SIG$sig: report verifies" || bad "SIG$sig verify"
done

# A summary reader that is gone: SIGPIPE does not kill ergon (exit 0, not
# 141) and the report is there.
"$ERGON_BIN" run --device d --workload builtin:spin "${SHORT[@]}" --out "$TMP/pipe.json" 2>"$TMP/err" | (exec 0<&-; :)
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] && ok "closed summary pipe: exit 0" || bad "closed summary pipe: exit $rc"
"$ERGON_BIN" verify "$TMP/pipe.json" >/dev/null 2>&1 && ok "closed summary pipe: report verifies" || bad "closed pipe: no report"

# --log FILE: the summary goes to the log, SIGHUP no longer stops the run.
"$ERGON_BIN" run --device d --workload builtin:spin --idle-s 0.5 --windows 2 --window-s 0.5 \
  --out "$TMP/log.json" --log "$TMP/run.log" >"$TMP/out" 2>"$TMP/err" &
pid=$!
wait_lock log.json
kill -HUP $pid
wait $pid
rc=$?
[ $rc = 0 ] && ok "--log: SIGHUP ignored, exit 0" || bad "--log: exit $rc"
grep -q '"status": "complete"' "$TMP/log.json" && ok "--log: the run completed" || bad "--log: not complete"
grep -q '^report_id' "$TMP/run.log" && ok "--log: the summary is in the log" || bad "--log: no summary in the log"
[ -s "$TMP/out" ] && bad "--log: stdout still written" || ok "--log: nothing on the terminal"
expect 3 "--log into a missing folder fails before measuring" -- "$ERGON_BIN" run --device d --workload builtin:spin \
  "${SHORT[@]}" --out "$TMP/x.json" --log "$TMP/no/such/dir/run.log"
contains "$ERR" "--log $TMP/no/such/dir/run.log" "the message names the log file"
[ -e "$TMP/x.json" ] && bad "measured anyway" || ok "nothing measured"
finish
