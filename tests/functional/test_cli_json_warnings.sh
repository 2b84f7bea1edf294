#!/usr/bin/env bash
# Warnings under --json (issue 35): every warning, issue and failure a
# command would print as text goes into the JSON document (its issues) or
# to stderr as a JSON line, never as text on either stream. Each case below
# makes a command warn for a reason set up here (a virtual-bench fault
# scenario, a stale temporary file, a period the work cannot fit, a cut
# stream, a shape the kernels refuse, a file that is no artifact, a --log or
# stdout that cannot be written), checks the --json contract (cli_json_lib.sh)
# and then that the warning is there: its code in the document's issues, or
# a JSON line naming it. The human form of a case is checked too: the same
# warning, as text, on stderr.
. "$(dirname "$0")/run_lib.sh"
: "${ERGON_SHARED_DIR:?}"
E=$ERGON_BIN
HPX=$ERGON_SHARED_DIR/fixtures/hpx/legacy.hpx.txt
export XDG_DATA_HOME=$TMP/xdg
. "$(dirname "$0")/cli_json_lib.sh"
# has_issue CODE SEVERITY: the document's issues hold CODE with SEVERITY.
has_issue() {
  doc "any(i['code'] == '$1' and i['severity'] == '$2' for i in d.get('issues', []))" "$NAME: issue $1 ($2) in the document"
}
# no_text: neither stream holds the human form of a message.
no_text() {
  ! grep -q "^ergon " "$TMP/out" "$TMP/err" && ok "$NAME: no text line" || bad "$NAME: text: $(grep -h '^ergon ' "$TMP/out" "$TMP/err" | head -2)"
}

# 1. profile: the virtual bench's stalled cycle counter (sim/src/board.c,
#    scenario stalled_counter: every clean-window iteration stalls) is a
#    warning of the PMU stage; the summary is still valid (exit 0). It was
#    printed as "ergon profile: warning: ..." on stderr even with --json.
NAME="profile, stalled counter"
check 0 "$NAME" -- "$E" profile --board sim --sim-scenario stalled_counter --out "$TMP/p1" --json
has_issue profile.clean_window_stalled warning
no_text
expect 0 "profile, stalled counter, text" -- "$E" profile --board sim --sim-scenario stalled_counter --out "$TMP/p1t"
[ "$(grep -c 'ergon profile: warning: profile.clean_window_stalled:' <<<"$ERR")" = 1 ] &&
  ok "without --json the warning is on stderr once" || bad "text warning: ${ERR:0:300}"
# An error of the power stage (statistics packets missing inside the gate
# window): not valid, exit 1, the verdict a JSON line, the errors in the
# document only.
NAME="profile, packets lost"
check 1 "$NAME" -- "$E" profile --board sim --power --sim-scenario packets_lost_in_window --out "$TMP/p2" --json
has_issue power.time_gap error
doc "any('verdict' in x and x['verdict']['exit'] == 1 for x in e)" "$NAME: the verdict as a JSON line"
no_text
# Energy per layer with an edge missing on the marker line: one inference
# left out, a warning.
NAME="profile --layer-energy, marker edge missing"
check 0 "$NAME" -- "$E" profile --board sim --power --layer-energy --sim-scenario marker_missing_edge --out "$TMP/p3" --json
has_issue power.layers_inferences_dropped warning
no_text

# 2. run: a stale temporary file of a killed run beside --out is a warning
#    (a JSON line naming the file); the period (1/30 s = 33.3 ms) shorter
#    than the work (burst 10 ms + sleep 40 ms = 50 ms) overruns every
#    release: run.release_overrun in the document.
mkdir -p "$TMP/o"
printf '{"complete": "report of a killed run"}\n' >"$TMP/o/.ergon-tmp-Ab12Cd"
NAME="run, stale temporary file"
check 0 "$NAME" -- "$E" run --device d --workload builtin:spin,iters=2000 --idle-s 0.2 --windows 2 --window-s 0.25 \
  --out "$TMP/o/r.json" --json
doc "any('warning' in x and '.ergon-tmp-Ab12Cd (39 bytes) is a stale temporary file' in x['warning']['message'] for x in e)" \
  "$NAME: the warning is a JSON line naming the file and its size"
no_text
NAME="run, periodic overrun"
check 0 "$NAME" -- "$E" run --device d --workload builtin:periodic,burst_ms=10,sleep_ms=40 --release-hz 30 \
  --idle-s 0.2 --windows 2 --window-s 0.5 --out "$TMP/r2.json" --json
has_issue run.release_overrun warning
no_text
# --log into a folder that does not exist, and stdout that cannot be
# written (/dev/full): I/O, exit 3, as a JSON error line.
NAME="run --log in a missing folder"
check 3 "$NAME" -- "$E" run --device d --workload builtin:spin --idle-s 0.2 --windows 1 --window-s 0.2 \
  --out "$TMP/r3.json" --log "$TMP/nope/run.log" --json
doc "e[-1]['error']['message'].startswith('--log $TMP/nope/run.log: cannot open')" "$NAME: the error names --log and the file"
no_text
NAME="run, stdout full"
"$E" run --device d --workload builtin:spin --idle-s 0.2 --windows 1 --window-s 0.2 --out "$TMP/r4.json" --json \
  >/dev/full 2>"$TMP/err"
rc=$?
[ "$rc" = 3 ] && ok "$NAME: exit 3" || bad "$NAME: exit $rc"
python3 -c "import json,sys; l=open('$TMP/err').read().splitlines(); e=json.loads(l[-1])['error']; sys.exit(0 if len(l) == 1 and e['exit'] == 3 and 'cannot write to stdout' in e['message'] else 1)" &&
  ok "$NAME: one JSON error line" || bad "$NAME: stderr $(head -c 300 "$TMP/err")"

# A dry run whose plan cannot meet the uncertainty limit exits 1; with
# --json that exit comes with its error line (it came with none). run: the
# synthetic model's declared gain bound alone, +-0.5 % rectangular, is
# 2 x 0.5 / sqrt(3) = 0.58 % at k = 2, above 0.001 %; profile: the virtual
# bench carries about 0.41 % (docs/USAGE.md), above 0.3 %.
NAME="run --dry-run, limit not met"
check 1 "$NAME" -- "$E" run --device d --workload builtin:spin --dry-run --max-uncertainty-pct 0.001 --json
doc "d['refused'] is True and e[-1]['error']['code'] == 'EREFUSED'" "$NAME: the plan refused, an error line"
NAME="profile --dry-run, limit not met"
check 1 "$NAME" -- "$E" profile --board sim --power --dry-run --max-uncertainty-pct 0.3 --json
doc "d['plan']['power']['uncertainty_estimate']['verdict'] == 'cannot meet the limit' and e[-1]['error']['exit'] == 1" \
  "$NAME: the plan refused, an error line"

# 3. parse of a stream cut before HPX_END: degraded (exit 4); the text
#    explanation ("... is truncated") is not printed, the issue is in the
#    document.
grep -v -- '--- HPX_END ---' "$HPX" >"$TMP/cut.hpx"
NAME="parse, cut stream"
check 4 "$NAME" -- "$E" parse "$TMP/cut.hpx" --out "$TMP/pa" --json
has_issue pmu.incomplete warning
no_text

# 4. kernels run: a convolution whose 9x9 filter does not fit its 1x1 input
#    is refused (a line of its own in the text); with --json it is in the
#    document's refused list, with its line.
printf 'fc a accum=8 units=4\nconv big in=1x1x1 filter=9x9x1\n' >"$TMP/shapes.txt"
NAME="kernels run, a refused shape"
check 0 "$NAME" -- "$E" kernels run --board host --shapes "$TMP/shapes.txt" --iterations 2 --out "$TMP/k" --json
doc "[(x['case'], x['line']) for x in d['refused']] == [('big', 2)]" "$NAME: refused in the document, with its line"
no_text

# 5. db ingest of a file that is no artifact beside a report: the report is
#    stored, the other refused (exit 1), both listed in the document.
printf '{}\n' >"$TMP/junk.json"
NAME="db ingest, one refused"
check 1 "$NAME" -- "$E" db --db "$TMP/x.db" ingest "$TMP/junk.json" "$TMP/r2.json" --json
doc "sorted(a['result'] for a in d['artifacts']) == ['ingested', 'refused']" "$NAME: both listed"
no_text
finish
