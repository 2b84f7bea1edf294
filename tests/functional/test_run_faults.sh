#!/usr/bin/env bash
# Faults through the CLI: failing, hanging and crashing workloads, an
# instrument that fails mid-run, SIGINT and SIGTERM, bad replay files.
. "$(dirname "$0")/run_lib.sh"
J() { grep -c "$2" "$1"; }

# A workload that always fails: counted, no operation succeeded -> invalid.
expect 1 "command:false fails every invocation" -- "$ERGON_BIN" run --device d --workload command:false \
  "${SHORT[@]}" --out "$TMP/false.json"
grep -q '"code": "run.invocations_failed"' "$TMP/false.json" && ok "invocations_failed issue" || bad "no issue"
grep -q '"code": "run.no_operations"' "$TMP/false.json" && ok "no_operations issue" || bad "no no_operations"
grep -q '"integrity": "invalid"' "$TMP/false.json" && ok "integrity invalid" || bad "integrity"
expect 0 "the honest failed report verifies" -- "$ERGON_BIN" verify "$TMP/false.json"

# Failure policy abort: the first failure stops the run.
expect 1 "--on-failure abort" -- "$ERGON_BIN" run --device d --workload command:false --on-failure abort \
  "${SHORT[@]}" --out "$TMP/abort.json"
grep -q '"status": "aborted"' "$TMP/abort.json" && ok "status aborted" || bad "status"
grep -q '"count": 1,' "$TMP/abort.json" && ok "one invocation recorded" || bad "count"
contains "$OUT" "WITHHELD" "figures withheld in the summary"

# A hanging workload: the per-invocation timeout kills it, counted.
expect 1 "hanging command with --invoke-timeout-s" -- timeout 60 "$ERGON_BIN" run --device d \
  --workload "command:sleep 30" --invoke-timeout-s 0.05 "${SHORT[@]}" --out "$TMP/hang.json"
grep -q '"code": "run.invocation_timeout"' "$TMP/hang.json" && ok "invocation_timeout issue" || bad "no timeout issue"

# A crashing workload (SIGSEGV): failed invocations, the harness survives.
expect 1 "crashing command" -- "$ERGON_BIN" run --device d --workload "command:sh -c 'kill -SEGV \$\$'" \
  "${SHORT[@]}" --out "$TMP/crash.json"
grep -q '"code": "run.invocations_failed"' "$TMP/crash.json" && ok "crash counted as failed" || bad "crash"

# Instrument read failure mid-run: stop, report marked incomplete, no figure.
expect 1 "instrument fails mid-run" -- "$ERGON_BIN" run --device d --workload builtin:spin,iters=20000 \
  --instrument-opt fail_after=200 --idle-s 0.1 --windows 20 --window-s 0.25 --sample-hz 1000 \
  --out "$TMP/ifail.json"
grep -q '"status": "instrument_failed"' "$TMP/ifail.json" && ok "status instrument_failed" || bad "status"
grep -q '"code": "run.instrument_read_failed"' "$TMP/ifail.json" && ok "read_failed issue" || bad "issue"
grep -q '"code": "run.incomplete"' "$TMP/ifail.json" && ok "incomplete issue" || bad "incomplete"
grep -q '"withheld":' "$TMP/ifail.json" && ok "figures withheld" || bad "figures present"
grep -q '"energy_per_op"' "$TMP/ifail.json" && bad "energy_per_op present" || ok "no energy_per_op figure"
contains "$ERR" "injected read failure" "stderr names the failure"
expect 0 "the incomplete report verifies as what it is" -- "$ERGON_BIN" verify "$TMP/ifail.json"

# SIGINT and SIGTERM: the report is written and says interrupted. The
# signal goes once the run has claimed its output (its lock exists: the
# handler is installed and the run has begun), not after a fixed sleep
# that a loaded host can outlast before ergon even starts.
wait_lock() { for _ in $(seq 600); do ls -A "$TMP" | grep -q "$1.ergon-lock" && return 0; sleep 0.05; done; return 1; }
for sig in INT TERM; do
  "$ERGON_BIN" run --device d --workload builtin:spin,iters=20000 --idle-s 0.2 --windows 200 \
    --window-s 0.25 --out "$TMP/sig$sig.json" >"$TMP/out" 2>"$TMP/err" &
  pid=$!
  wait_lock "sig$sig.json" || bad "SIG$sig: the run never claimed its output"
  kill -$sig $pid
  wait $pid
  rc=$?
  [ $rc = 1 ] && ok "SIG$sig: exit 1" || bad "SIG$sig: exit $rc"
  grep -q '"status": "interrupted"' "$TMP/sig$sig.json" && ok "SIG$sig: status interrupted" || bad "SIG$sig status"
  grep -q '"code": "run.interrupted"' "$TMP/sig$sig.json" && ok "SIG$sig: issue" || bad "SIG$sig issue"
  "$ERGON_BIN" verify "$TMP/sig$sig.json" >/dev/null && ok "SIG$sig: report verifies" || bad "SIG$sig verify"
done

# SIGINT while a command hangs inside an invocation: the invocation gives
# up, the run stops promptly and the report says interrupted. The signal
# goes once the hanging command runs (ergon's child `sleep 30` exists), so
# that it really lands inside the invocation whatever the host's load.
"$ERGON_BIN" run --device d --workload "command:sleep 30" --idle-s 0.2 --windows 2 --window-s 60 \
  --out "$TMP/hangint.json" >"$TMP/out" 2>"$TMP/err" &
pid=$!
hung=0
for _ in $(seq 600); do pgrep -P "$pid" -x sleep >/dev/null && { hung=1; break; }; sleep 0.05; done
[ $hung = 1 ] && ok "the hanging invocation started" || bad "the command invocation never started"
kill -INT $pid
wait $pid
rc=$?
[ $rc = 1 ] && ok "SIGINT during a hanging invocation: exit 1" || bad "hang+SIGINT: exit $rc"
grep -q '"status": "interrupted"' "$TMP/hangint.json" && ok "hang+SIGINT: status interrupted" || bad "hang+SIGINT status"

# Replay recordings with NaN, Inf, negative or non-monotonic time.
mk() { printf '# provenance: measured\nt_s,voltage_v,current_a\n0,5,0.1\n%s\n' "$1" > "$TMP/$2.csv"; }
mk "0.01,nan,0.1" nan
mk "0.01,5,inf" inf
mk "-0.01,5,0.1" neg
mk "0.0,5,0.1" dup
for c in nan:4:6 inf:4:8 neg:4:1 dup:4:1; do
  f=${c%%:*}; where=${c#*:}
  expect 3 "replay $f refused" -- "$ERGON_BIN" run --device d --instrument "replay:$TMP/$f.csv" \
    --workload builtin:spin "${SHORT[@]}" --out "$TMP/r$f.json"
  contains "$ERR" "$TMP/$f.csv:$where:" "replay $f error names line:column $where"
done
printf 't_s,voltage_v,current_a\n0,5,0.1\n0.5,5,0.1\n' > "$TMP/noprov.csv"
expect 2 "replay without provenance refused" -- "$ERGON_BIN" run --device d --instrument "replay:$TMP/noprov.csv" \
  --workload builtin:spin "${SHORT[@]}" --out "$TMP/rnp.json"
contains "$ERR" "never assumed measured" "says never assumed measured"
finish
