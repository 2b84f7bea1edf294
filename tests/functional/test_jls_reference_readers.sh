#!/usr/bin/env bash
# ergon's JLS recordings read with the reference JLS library's own readers
# (../shared/tools/jls-ref: jls info, jls inspect, jls fsr_statistics,
# jls_dump; the library pyjls and the Joulescope UI read with), issue 29.
# For each file, ergon_jls_ref_check (tests/support/jls_ref_check) checks
# that the library opens it without a warning, reads its samples, finds in
# every summary level the statistics of the samples each entry covers, and
# gives over spans of 10, 100, 1000, 10000 and 50000 samples, over each
# level's entry and over the whole file the samples' own mean, min, max and
# std, for the f32 signals and the digital inputs. The statistics are
# computed by the checker from the samples the library reads, never by
# ergon's writer.
#
# The files: recordings made as users make them (`ergon record` from the
# PPK2 simulator, gate high on D0 for samples [50000, 150000) at 1 mA /
# 5 mA): 2.5 s (the recording of issue 29), a short one, one whose length
# is no multiple of any chunk or entry, one long enough for three summary
# levels, one with lost samples; recordings from a known signal through the same writer with small
# entries (five levels, all read by the library; lengths of 1 and 7
# samples); and killed recordings, which the library repairs when it opens
# them.
. "$(dirname "$0")/run_lib.sh"
REF=${ERGON_SHARED_DIR:?}/tools/jls-ref
CHECK=${ERGON_BUILD_DIR:?}/ergon_jls_ref_check
SYNTH=$ERGON_BUILD_DIR/ergon_jls_synth
SIM=$ERGON_BUILD_DIR/ergon_ppk2_sim
for t in "$REF/jls" "$REF/jls_dump" "$CHECK" "$SYNTH" "$SIM"; do
  # Never a skip: the readers ship in ../shared (ERGON_SHARED_DIR).
  [ -x "$t" ] || { bad "$t is missing (the reference readers live in ../shared/tools/jls-ref)"; finish; }
done
SPANS=10,100,1000,10000,50000

check() { # check FILE WHAT [CHECKER ARGS]: the library reads FILE as its samples say
  local f=$1 what=$2
  shift 2
  if "$CHECK" "$REF" "$f" --spans "$SPANS" "$@" >"$TMP/check.out" 2>&1; then
    ok "$what: $(grep -c 'level [0-9]*:' "$TMP/check.out") signal levels, every one as its samples say"
  else
    bad "$what"
    grep -E '^FAIL|failure' "$TMP/check.out" | head -20
  fi
}

samples_of() { # samples_of FILE: the length `jls info` gives signal 1
  "$REF/jls" info "$1" 2>/dev/null | awk '/^  1:$/ {s = 1} s && /length:/ {print $2; exit}'
}

record() { # record DURATION_S OUT [SIMULATOR ARGS]: the user's recording (exit $WANT, 0)
  local d=$1 out=$2
  shift 2
  coproc SIMP { exec "$SIM" --current-a 0.001 --burst-a 0.005 --gate-at-start \
    --gate-delay-s 0.5 --gate-s 1.0 --fast "$@"; }
  local pid=$SIMP_PID port
  read -r port <&"${SIMP[0]}"
  "$ERGON_BIN" record --instrument "ppk2:$port" --instrument-opt vdd_mv=3000 \
    --duration-s "$d" --out "$out" >"$TMP/rec.out" 2>"$TMP/rec.err"
  local rc=$?
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  [ "$rc" = "${WANT:-0}" ] || { bad "ergon record --duration-s $d: exit $rc"; head -5 "$TMP/rec.err"; }
}

# The recording of issue 29: 2.5 s, the gate on D0 for [50000, 150000).
record 2.5 "$TMP/gate.jls"
[ "$(samples_of "$TMP/gate.jls")" = 250000 ] && ok "2.5 s: 250000 samples" || bad "2.5 s: $(samples_of "$TMP/gate.jls") samples"
check "$TMP/gate.jls" "the 2.5 s recording" --issue-spans
grep '^figure: \(current\|gpi\[0\]\)' "$TMP/check.out"
# The edge itself, as a user zoomed out sees it: spans of 1000 around it.
grep -q '^figure: gpi\[0\] \[49000, 50000) as span 49 of 250: library mean 0.000000000e+00, samples 0.000000000e+00' \
  "$TMP/check.out" && ok "gpi[0] is 0 in [49000, 50000) at every zoom" || bad "gpi[0] in [49000, 50000)"
# Short, odd and long recordings.
record 0.0005 "$TMP/short.jls"
check "$TMP/short.jls" "a $(samples_of "$TMP/short.jls")-sample recording"
record 0.00999 "$TMP/short2.jls"
check "$TMP/short2.jls" "a $(samples_of "$TMP/short2.jls")-sample recording"
record 1.23457 "$TMP/odd.jls"
n=$(samples_of "$TMP/odd.jls")
[ $((n % 1000)) != 0 ] && [ $((n % 8)) != 0 ] && ok "$n samples: no multiple of an entry or of a byte of bits" ||
  bad "the odd recording has $n samples"
check "$TMP/odd.jls" "a $n-sample recording"
record 26 "$TMP/long.jls"
# The three f32 signals and two of the eight digital lines (one changes,
# one does not; all eight share one code path, checked on the 2.5 s file).
check "$TMP/long.jls" "a $(samples_of "$TMP/long.jls")-sample recording (levels 1 to 3 read)" \
  --signals 1,2,3,4,5
grep -q 'current level 3:' "$TMP/check.out" && ok "26 s: level 3 written" || bad "26 s: no level 3"

# Lost samples (NaN, a 5-sample gap in the link's counter) at the gate's
# rising edge: entries leave them out, as the reference writer's do. Exit
# 4: the recording is whole but degraded (samples were lost).
WANT=4 record 1.0 "$TMP/gap.jls" --gap-at 49998:5
grep -q '5 dropped' "$TMP/rec.out" && ok "the gap recording lost 5 samples" || bad "gap: $(cat "$TMP/rec.out")"
check "$TMP/gap.jls" "a recording with 5 lost samples" --signals 1,2,3,4

# Five levels from few samples: entries of 10 samples, chunks of 200; the
# library reads level 5 (entries of 100000 samples) when a request covers
# 25 of them. Sample ids start at 1234567, as a Joulescope's do.
"$SYNTH" "$TMP/deep.jls" 2600037 --decimate 10 --samples-per-data 200 --sample-id-offset 1234567 ||
  bad "ergon_jls_synth deep"
check "$TMP/deep.jls" "2600037 samples in entries of 10" --signals 1,3,4,6
grep -q 'current level 5: 1 chunk(s), 26 entries of 100000 samples' "$TMP/check.out" &&
  ok "level 5 written and read" || bad "level 5"
for n in 1 7 100001; do
  "$SYNTH" "$TMP/n$n.jls" "$n" || bad "ergon_jls_synth $n"
  check "$TMP/n$n.jls" "$n synthetic sample(s)"
done

# Killed recordings: never closed. The library repairs such a file when it
# opens it (it says so, and rewrites the summaries from the data), then
# reads it as it reads its own.
"$SYNTH" "$TMP/killed.jls" 123457 --abandon || bad "ergon_jls_synth --abandon"
"$REF/jls" info "$TMP/killed.jls" >"$TMP/repair.out" 2>&1
grep -q 'not properly closed' "$TMP/repair.out" && ok "the library repairs the killed file" ||
  bad "the library did not see the killed file as unclosed"
check "$TMP/killed.jls" "the killed recording, repaired by the library"
# ergon record killed by SIGKILL mid-recording.
coproc SIMK { exec "$SIM" --current-a 0.001 --burst-a 0.005 --gate-at-start \
  --gate-delay-s 0.5 --gate-s 1.0 --fast; }
simk=$SIMK_PID
read -r port <&"${SIMK[0]}"
"$ERGON_BIN" record --instrument "ppk2:$port" --instrument-opt vdd_mv=3000 --duration-s 60 \
  --out "$TMP/kill9.jls" >/dev/null 2>&1 &
rec=$!
for _ in $(seq 600); do
  [ "$(stat -c %s "$TMP/kill9.jls" 2>/dev/null || echo 0)" -gt 4000000 ] && break
  sleep 0.05
done
kill -9 "$rec" 2>/dev/null
wait "$rec" 2>/dev/null
kill "$simk" 2>/dev/null
wait "$simk" 2>/dev/null
"$REF/jls" info "$TMP/kill9.jls" >/dev/null 2>&1
check "$TMP/kill9.jls" "ergon record killed by SIGKILL, repaired by the library" --signals 1,2,3,4,5
finish
