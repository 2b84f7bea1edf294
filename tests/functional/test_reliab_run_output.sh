#!/usr/bin/env bash
# ergon run claims its output before measuring (docs/RELIABILITY.md): a
# path that cannot hold the report, or one another run holds, fails before
# the first sample. The plans below would measure for 1000 s; `timeout`
# only keeps a regression from hanging the suite (a run that measures
# first is killed and fails the exit-code check).
. "$(dirname "$0")/run_lib.sh"
LONG=(--device d --workload builtin:spin --idle-s 10 --windows 100 --window-s 10)

expect 3 "/proc/x.json fails before measuring" -- timeout 60 "$ERGON_BIN" run "${LONG[@]}" --out /proc/x.json
contains "$ERR" "before measuring" "the message says nothing was measured"
contains "$ERR" "/proc/x.json" "the message names --out"

# A folder that cannot hold the reservation: the file-size limit stands in
# for a full disk (posix_fallocate fails alike). SIGXFSZ ignored, as a
# shell would for a background job, so the failure is EFBIG, not a kill.
expect 3 "a folder without room fails before measuring" -- timeout 60 bash -c \
  'ulimit -f 256; trap "" XFSZ; exec "$0" "$@"' "$ERGON_BIN" run "${LONG[@]}" --out "$TMP/full.json"
contains "$ERR" "cannot reserve" "the message says the space is missing"
[ -e "$TMP/full.json" ] && bad "a report appeared" || ok "no report"
ls -A "$TMP" | grep -q '^\.ergon-tmp-\|ergon-lock' && bad "reservation left behind" || ok "nothing left behind"

# Two runs on one --out: the second is refused at once; the first finishes.
"$ERGON_BIN" run --device d --workload builtin:spin --idle-s 1 --windows 2 --window-s 1 \
  --out "$TMP/one.json" >"$TMP/first.out" 2>"$TMP/first.err" &
first=$!
for _ in $(seq 100); do ls -A "$TMP" | grep -q 'one.json.ergon-lock' && break; sleep 0.05; done
expect 1 "a second run on the same --out is refused" -- timeout 60 "$ERGON_BIN" run "${LONG[@]}" --out "$TMP/one.json"
contains "$ERR" "is writing this output" "the refusal says why"
contains "$ERR" "pid $first" "the refusal names the other run"
wait $first
[ $? = 0 ] && ok "the first run completed" || bad "the first run failed: $(cat "$TMP/first.err")"
expect 0 "the first run's report verifies" -- "$ERGON_BIN" verify "$TMP/one.json"
ls -A "$TMP" | grep -q '^\.ergon-tmp-\|ergon-lock' && bad "reservation left behind" || ok "no lock or temp file left"

# The space is really taken while measuring: the temporary file in the
# output folder has the estimated size during the run.
"$ERGON_BIN" run --device d --workload builtin:spin --idle-s 1 --windows 1 --window-s 1 \
  --sample-hz 1000 --out "$TMP/big.json" >/dev/null 2>&1 &
pid=$!
size=0
for _ in $(seq 100); do
  f=$(ls -A "$TMP" | grep '^\.ergon-tmp-' | head -1)
  [ -n "$f" ] && size=$(stat -c %s "$TMP/$f" 2>/dev/null || echo 0) && break
  sleep 0.05
done
wait $pid
# 2 s at 1000 Hz, 5 fields x 32 B, + 1 s x 1000 ops/s x 2 x 32 B + 64 KiB.
want=$((65536 + 2000 * 5 * 32 + 1000 * 2 * 32))
[ "$size" = "$want" ] && ok "reserved $want bytes while measuring" || bad "reserved $size bytes, wanted $want"
finish
