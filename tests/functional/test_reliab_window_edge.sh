#!/usr/bin/env bash
# Issue 30, case 1: an invocation that runs past a window's planned end
# (a slow model, a stalled or stopped process) no longer loses the run.
# Before, `ergon run` refused its own report ("edges ... do not increase")
# and kept only OUT.partial (exit 1). Now the window that opens past its
# planned end ends with the next invocation (docs/METHOD.md, "Run order"),
# the report verifies, and run.window_spanned says so. Nothing here depends
# on the machine's speed: `sleep 0.7` outlasts two 0.3 s windows, and the
# stopped process stays stopped for at least 1.2 s, past two 0.5 s windows.
. "$(dirname "$0")/run_lib.sh"

edges_increase() { # FILE -> 0 when series.window_edges_s strictly increases
  python3 - "$1" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))["series"]["window_edges_s"]
sys.exit(0 if len(e) == 4 and all(b > a for a, b in zip(e, e[1:])) else 1)
PY
}

check_run() { # NAME: the run's report exists, verifies, is complete, says so
  local f="$TMP/$1.json"
  [ -e "$f.partial" ] && bad "$1: only a .partial was kept"
  "$ERGON_BIN" verify "$f" >/dev/null 2>&1 && ok "$1: the report verifies" || bad "$1: no verifying report"
  grep -q '"status": "complete"' "$f" && ok "$1: status complete" || bad "$1: not complete"
  edges_increase "$f" && ok "$1: 4 window edges, strictly increasing" || bad "$1: edges"
  grep -q '"code": "run.window_spanned"' "$f" && ok "$1: run.window_spanned raised" || bad "$1: no run.window_spanned"
}

for mode in saturated periodic; do
  extra=()
  [ $mode = periodic ] && extra=(--release-hz 5)
  expect 0 "$mode: sleep 0.7 in 0.3 s windows completes" -- "$ERGON_BIN" run --device d \
    --workload 'command:sleep 0.7' --idle-s 0.2 --windows 3 --window-s 0.3 "${extra[@]}" \
    --out "$TMP/slow_$mode.json"
  check_run "slow_$mode"
done

# SIGSTOP across edges: the first invocation stops ergon (its parent) and
# has it continued 1.2 s later.
cat >"$TMP/stopper.sh" <<'SH'
#!/bin/sh
n=$(cat "$0.count" 2>/dev/null || echo 0)
n=$((n + 1))
echo $n >"$0.count"
if [ "$n" = 1 ]; then
  (sleep 1.2; kill -CONT $PPID) >/dev/null 2>&1 &
  kill -STOP $PPID
fi
exit 0
SH
chmod +x "$TMP/stopper.sh"
expect 0 "SIGSTOP/SIGCONT across two edges: the run completes" -- "$ERGON_BIN" run --device d \
  --workload "command:$TMP/stopper.sh" --idle-s 0.2 --windows 3 --window-s 0.5 --out "$TMP/stopped.json"
check_run stopped
finish
