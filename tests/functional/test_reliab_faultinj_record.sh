#!/usr/bin/env bash
# Fault injection on `ergon record` (docs/RELIABILITY.md): every allocation
# and every write-side call from main() on is made to fail in turn
# (tests/support/faultinj/), against the PPK2 simulator (unpaced, 0.02 s =
# 2000 samples at 100 kSPS). Each time the measurement must be kept or the
# failure must come before the first sample:
#   exit 0: OUT is a JLS file holding all 2000 samples;
#   exit != 0 with samples kept: OUT is a valid JLS file up to its last
#     complete chunk, stdout names OUT and the kept count, and our reader
#     (ergon analyze --jls, without the shim) reads exactly that many;
#   exit != 0 with nothing kept: OUT does not exist, and either the
#     recording never started (the fault came while parsing the arguments,
#     opening the instrument or reserving the output: the process never
#     named its phase "ergon-record") and stderr says what failed, or
#     stderr says no sample was recorded and nothing was written.
# Never a lock or temporary file left behind.
. "$(dirname "$0")/run_lib.sh"
. "$ERGON_SOURCE_DIR/tests/support/faultinj/faultinj_lib.sh"
SIM=${ERGON_BUILD_DIR:?}/ergon_ppk2_sim
# One unpaced simulator per walker (a simulated PPK2 serves one recording
# at a time); each serves one recording after another. Started with their
# stdin on a pipe held open by fd 6 (closing it stops them all).
NSIM=$((2 * $(nproc 2>/dev/null || echo 1)))
mkfifo "$TMP/sims.in"
SIMPIDS=()
for ((k = 0; k < NSIM + 1; k++)); do
  "$SIM" --fast --current-a 0.004 --burst-a 0.004 --period-s 0 <"$TMP/sims.in" >"$TMP/sim$k.port" &
  SIMPIDS+=($!)
done
exec 6>"$TMP/sims.in"
trap 'kill "${SIMPIDS[@]}" 2>/dev/null; rm -rf "$TMP"' EXIT
FI_SLOT_VALUES=()
for ((k = 0; k < NSIM + 1; k++)); do
  for _ in $(seq 200); do [ -s "$TMP/sim$k.port" ] && break; sleep 0.05; done
  FI_SLOT_VALUES+=("$(head -1 "$TMP/sim$k.port")")
done
# The last one is the plain tests' below; the walk takes the first NSIM.
PORT=${FI_SLOT_VALUES[$NSIM]}
unset "FI_SLOT_VALUES[$NSIM]"

check_record() { # RC DIR N
  local rc=$1 dir=$2
  if [ "$rc" -ge 128 ]; then echo "  killed by signal $((rc - 128))"; return 1; fi
  if grep -q "AddressSanitizer\|runtime error:\|LeakSanitizer" "$dir/stderr"; then
    echo "  sanitizer report"; return 1
  fi
  fi_leftovers "$dir" && return 1
  local claimed
  claimed=$(sed -n 's/^recorded \([0-9]*\) samples .* to .*/\1/p' "$dir/stdout")
  if [ ! -e "$dir/r.jls" ]; then
    [ "$rc" != 0 ] && [ -z "$claimed" ] || { echo "  exit $rc, no file, claims '$claimed'"; return 1; }
    grep -q "nothing was written\|before the first sample" "$dir/stderr" && return 0
    # Before the recording started: the arguments, the instrument or the
    # reservation failed, and stderr says what.
    [ "$(fi_field "$dir" exit_phase)" = main ] && [ -s "$dir/stderr" ] && return 0
    echo "  exit $rc, no file, and stderr does not say nothing was recorded"; return 1
  fi
  if [ "$rc" = 0 ] && [ "$claimed" != 2000 ]; then
    echo "  exit 0 but recorded '$claimed' samples, not 2000"; return 1
  fi
  if [ -z "$claimed" ]; then echo "  exit $rc, a file, and no count of what it keeps"; return 1; fi
  # The constant-current recording has no gate window: analyze exits 4
  # (degraded: whole-capture figures only); 0 would do too, anything else
  # means the file does not read.
  local arc=0
  "$ERGON_BIN" analyze --jls "$dir/r.jls" --out "$dir/an" >/dev/null 2>"$dir/an.err" || arc=$?
  [ "$arc" = 0 ] || [ "$arc" = 4 ] ||
    { echo "  exit $rc: the kept file does not read (analyze exit $arc): $(head -2 "$dir/an.err")"; return 1; }
  local got
  # power.gate.samples: the samples the reader streamed from the file.
  got=$(tr -d ' \n' <"$dir/an/summary.json" | sed -n 's/.*"gate":{[^}]*"samples":\([0-9]*\).*/\1/p')
  [ "$got" = "$claimed" ] && return 0
  echo "  exit $rc: stdout claims $claimed samples kept, the file holds $got"; return 1
}

# The output is claimed before the first sample: a folder without room
# (the file-size limit stands in for a full disk) fails before measuring.
mkdir -p "$TMP/full"
expect 3 "record into a folder without room fails before measuring" -- timeout 60 bash -c \
  'ulimit -f 256; trap "" XFSZ; exec "$0" "$@"' "$ERGON_BIN" record --instrument "ppk2:$PORT" \
  --instrument-opt vdd_mv=3000 --duration-s 1 --out "$TMP/full/r.jls"
contains "$ERR" "cannot reserve 1665536 bytes" "names the missing space (64 KiB + 16 B x 100000)"
[ -e "$TMP/full/r.jls" ] && bad "a recording appeared" || ok "no recording"
# A second recording on the same file is refused while the first runs
# (a paced simulator, gate never high: it records until SIGINT).
mkfifo "$TMP/sim2.in"
"$SIM" --current-a 0.004 --burst-a 0.004 --period-s 0 <"$TMP/sim2.in" >"$TMP/sim2.port" &
SIM2=$!
exec 5>"$TMP/sim2.in" # its stdin stays open until fd 5 closes
for _ in $(seq 100); do [ -s "$TMP/sim2.port" ] && break; sleep 0.05; done
PORT2=$(head -1 "$TMP/sim2.port")
"$ERGON_BIN" record --instrument "ppk2:$PORT2" --instrument-opt vdd_mv=3000 --until-gate-falls \
  --out "$TMP/one.jls" >"$TMP/one.out" 2>"$TMP/one.err" &
first=$!
for _ in $(seq 200); do ls -A "$TMP" | grep -q 'one.jls.ergon-lock' && break; sleep 0.05; done
expect 3 "a second recording on the same --out is refused" -- timeout 60 "$ERGON_BIN" record \
  --instrument "ppk2:$PORT" --instrument-opt vdd_mv=3000 --duration-s 0.05 --out "$TMP/one.jls"
contains "$ERR" "already exists" "the refusal says the file is there"
# --force does not take it from a recording that is still writing it.
expect 1 "--force on a file another recording writes is refused" -- timeout 60 "$ERGON_BIN" record \
  --instrument "ppk2:$PORT" --instrument-opt vdd_mv=3000 --duration-s 0.05 --force --out "$TMP/one.jls"
contains "$ERR" "pid $first" "the refusal names the first recording"
# SIGHUP (a closed SSH session) stops it like Ctrl-C: the file is closed
# and holds every sample the summary line counts.
kill -HUP $first
wait $first
rc=$?
[ $rc = 0 ] && ok "the first recording stopped on SIGHUP" ||
  bad "the first recording: exit $rc: $(cat "$TMP/one.err")"
n1=$(sed -n 's/^recorded \([0-9]*\) samples .*stopped by a signal.*/\1/p' "$TMP/one.out")
"$ERGON_BIN" analyze --jls "$TMP/one.jls" --out "$TMP/one-an" >/dev/null 2>&1
got1=$(tr -d ' \n' <"$TMP/one-an/summary.json" | sed -n 's/.*"gate":{[^}]*"samples":\([0-9]*\).*/\1/p')
[ -n "$n1" ] && [ "$n1" = "$got1" ] && ok "it kept all $n1 samples it counted" ||
  bad "SIGHUP: counted '$n1', the file holds '$got1': $(cat "$TMP/one.out")"
exec 5>&-
wait $SIM2
ls -A "$TMP" | grep -q 'one.jls.ergon-lock\|^\.ergon-tmp-' && bad "reservation left behind" ||
  ok "no lock or temporary file left"

fi_walk "ergon record" main check_record -- "$ERGON_BIN" record \
  --instrument "ppk2:@SLOT@" --instrument-opt vdd_mv=3000 --duration-s 0.02 --out @DIR@/r.jls
[ "$FI_RUNS" -gt 650 ] || bad "the walk ran $FI_RUNS faults, not the ~690 of a recording"
exec 6>&-
finish
