#!/usr/bin/env bash
# ergon capture claims its output before it reads the stream (the same
# reservation as ergon run, include/ergon/reserve.h): a folder that cannot
# be created, one without room, or an --out another capture holds fails
# before the first byte is read. "Before the first byte" is checked on the
# stream itself: the capture reads stdin from a file on descriptor 3 of
# this shell, whose offset afterwards says how much was read.
. "$(dirname "$0")/run_lib.sh"
FX="${ERGON_SHARED_DIR:?}/fixtures/hpx/legacy.hpx.txt"
[ -s "$FX" ] || { bad "shared fixture $FX missing (configure with -DERGON_SHARED_DIR)"; finish; }
read_pos() { sed -n 's/^pos:[[:space:]]*//p' "/proc/$$/fdinfo/3"; }

exec 3<"$FX"
expect 3 "capture into /proc fails before reading" -- timeout 60 "$ERGON_BIN" capture --transport - \
  --out /proc/ergon-capture-x <&3
contains "$ERR" "/proc/ergon-capture-x" "the message names --out"
[ "$(read_pos)" = 0 ] && ok "not one byte of the stream was read" || bad "read $(read_pos) bytes first"
exec 3<&-

# No room: the file-size limit stands in for a full disk (posix_fallocate
# fails alike); SIGXFSZ ignored as a shell does for a background job.
exec 3<"$FX"
expect 3 "a folder without room fails before reading" -- timeout 60 bash -c \
  'ulimit -f 256; trap "" XFSZ; exec "$0" "$@"' "$ERGON_BIN" capture --transport - --out "$TMP/full" <&3
contains "$ERR" "cannot reserve 4194304 bytes" "the message says the space is missing"
[ "$(read_pos)" = 0 ] && ok "not one byte of the stream was read" || bad "read $(read_pos) bytes first"
[ -e "$TMP/full/capture.log" ] && bad "a capture log appeared" || ok "no capture log"
ls -A "$TMP/full" 2>/dev/null | grep -q '^\.ergon-tmp-\|ergon-lock' && bad "reservation left behind" ||
  ok "nothing left behind"
exec 3<&-

# Two captures on one --out: the first holds it while its stream is open;
# the second is refused at once and names it; the first then completes.
mkfifo "$TMP/link"
"$ERGON_BIN" capture --transport - --out "$TMP/one" <"$TMP/link" >"$TMP/first.out" 2>"$TMP/first.err" &
first=$!
exec 4>"$TMP/link" # the link is up, nothing sent yet
for _ in $(seq 200); do ls -A "$TMP/one" 2>/dev/null | grep -q 'summary.json.ergon-lock' && break; sleep 0.05; done
size=$(stat -c %s "$TMP/one/$(ls -A "$TMP/one" | grep '^\.ergon-tmp-' | head -1)" 2>/dev/null || echo 0)
[ "$size" = 4194304 ] && ok "4 MiB reserved while streaming" || bad "reserved $size bytes, wanted 4194304"
exec 3<"$FX"
expect 1 "a second capture on the same --out is refused" -- timeout 60 "$ERGON_BIN" capture \
  --transport - --out "$TMP/one" <&3
contains "$ERR" "is writing this output" "the refusal says why"
contains "$ERR" "pid $first" "the refusal names the other capture"
[ "$(read_pos)" = 0 ] && ok "the second read nothing" || bad "the second read $(read_pos) bytes"
exec 3<&-
cat "$FX" >&4
exec 4>&-
wait $first
rc=$?
[ $rc = 0 ] && ok "the first capture completed" || bad "the first capture: exit $rc: $(cat "$TMP/first.err")"
cmp -s "$TMP/one/capture.log" "$FX" && ok "its log holds the stream byte for byte" || bad "log differs"
grep -q '"end": "sentinel"' "$TMP/one/summary.json" && ok "its summary is complete" || bad "summary incomplete"
ls -A "$TMP/one" | grep -q '^\.ergon-tmp-\|ergon-lock' && bad "reservation left behind" ||
  ok "no lock or temporary file left"
finish
