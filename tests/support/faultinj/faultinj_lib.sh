# Walk every allocation and write-side call of a command, failing one at a
# time with the fault-injection shim (faultinj.c). Sourced by tests after
# tests/functional/run_lib.sh; reusable for any subcommand:
#
#   fi_walk NAME ARM CHECK -- command args...
#
# ARM is where counting starts: "main" (the entry of main(): every call the
# program makes) or a thread name the program sets (prctl). fi_walk first
# runs the command FI_COUNT_RUNS times (default 3) without a fault and
# counts the calls (each of these runs must pass CHECK too), then runs it
# once per call number N = 1 .. the largest count + FI_MARGIN (default 8),
# with call N failing. A run whose N lies past its own last call fails
# nothing (the shim reports "failed -"); the walk counts and reports those,
# so a command whose call count drifts between runs is seen, not hidden.
#
# Each run gets a fresh folder $dir: the literal @DIR@ in the command's
# arguments is replaced by it, TMPDIR points inside it, and the shim's report
# is $dir/faultinj.txt (calls, failed, fault_phase, exit_phase). @SLOT@ is
# replaced by ${FI_SLOT_VALUES[j]} of the worker j that runs it (e.g. one
# simulator per worker). After each run, CHECK RC DIR N is called and must
# return 0: it decides whether the measurement was kept; what it prints is
# shown for the first failures.
#
# FI_JOBS workers run at once (default: ${#FI_SLOT_VALUES[@]} when slots are
# given, else 2 per CPU: a run mostly waits on its session's clock and on
# ASan's start and exit, not on the CPU), worker j taking N = j+1, j+1+J, ...
# Nothing is skipped: every N is run and checked. Sets FI_CALLS (the largest
# count), FI_RUNS (runs walked), FI_LANDED (runs in which the fault landed)
# and FI_WALK_S (seconds the walk took).
: "${ERGON_BUILD_DIR:?ERGON_BUILD_DIR must point at the build folder}"
FI_SHIM="$ERGON_BUILD_DIR/faultinj/libergon_faultinj.so"
# The shim sits before libasan and forwards to it.
FI_ASAN="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
# Leaks of the C library's own on a failed allocation (lsan.supp says which).
FI_LSAN="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$ERGON_SOURCE_DIR/tests/support/faultinj/lsan.supp"
[ -n "${FI_SLOT_VALUES+set}" ] || FI_SLOT_VALUES=()
FI_RUNS=0

fi_run() { # fi_run DIR FAIL_AT ARM [SLOT] -- command...
  local dir=$1 at=$2 arm=$3 slot=
  if [ "$4" = -- ]; then shift 4; else slot=$4; shift 5; fi
  mkdir -p "$dir/tmp"
  local args=() a
  for a in "$@"; do
    a=${a//@DIR@/$dir}
    args+=("${a//@SLOT@/$slot}")
  done
  ASAN_OPTIONS="$FI_ASAN" LSAN_OPTIONS="$FI_LSAN" LD_PRELOAD="$FI_SHIM" FAULTINJ_ARM="$arm" FAULTINJ_FAIL_AT="$at" \
    FAULTINJ_REPORT="$dir/faultinj.txt" TMPDIR="$dir/tmp" \
    "${args[@]}" </dev/null >"$dir/stdout" 2>"$dir/stderr"
}

# fi_field DIR NAME: a field of the shim's report in DIR.
fi_field() { awk -v k="$2" '$1 == k {print $2}' "$1/faultinj.txt" 2>/dev/null; }

# One worker: runs N = first, first+step, ... <= last; writes one line per
# run into $TMP/fi-res/N: "ok landed|ok none" or "bad ..." (then the
# check's words follow in $TMP/fi-res/N.why).
fi_worker() { # first step last arm check slot -- command...
  local n=$1 step=$2 last=$3 arm=$4 check=$5 slot=$6
  shift 7
  for (( ; n <= last; n += step)); do
    local dir="$TMP/fi-$n" rc landed try
    # A call the fault-free runs all made (n <= FI_LO) that this run did
    # not reach: the run took a shorter path (a loaded host's late
    # samples withhold figures, so its report makes fewer allocations).
    # It is run again, up to 3 times, so that every counted call is
    # failed once in a run that reached it.
    for ((try = 0; try < 4; try++)); do
      rm -rf "$dir"
      fi_run "$dir" "$n" "$arm" "$slot" -- "$@"
      rc=$?
      landed=$(fi_field "$dir" failed)
      [ -n "$landed" ] && [ "$landed" != - ] && landed=landed || landed=none
      [ "$landed" = none ] && [ "$n" -le "${FI_LO:-0}" ] || break
    done
    if "$check" "$rc" "$dir" "$n" >"$TMP/fi-res/$n.why" 2>&1; then
      echo "ok $landed" >"$TMP/fi-res/$n"
      rm -rf "$dir"
    else
      echo "bad $landed exit $rc: call $n ($(fi_field "$dir" failed) in phase" \
        "$(fi_field "$dir" fault_phase), reached $(fi_field "$dir" exit_phase))" >"$TMP/fi-res/$n"
    fi
  done
}

fi_walk() {
  local name=$1 arm=$2 check=$3
  shift 4
  [ -f "$FI_SHIM" ] || { bad "$name: no fault-injection shim at $FI_SHIM"; return; }
  local nslots=${#FI_SLOT_VALUES[@]}
  local jobs=${FI_JOBS:-}
  if [ -z "$jobs" ]; then
    if [ "$nslots" -gt 0 ]; then jobs=$nslots; else jobs=$((2 * $(nproc 2>/dev/null || echo 1))); fi
  fi
  if [ "$nslots" -gt 0 ] && [ "$jobs" -gt "$nslots" ]; then jobs=$nslots; fi
  local t0=$SECONDS k c lo=0 hi=0
  # The count, several times: it must not drift, and each run must pass.
  for ((k = 0; k < ${FI_COUNT_RUNS:-3}; k++)); do
    local dir="$TMP/fi-count-$k"
    fi_run "$dir" 0 "$arm" "${FI_SLOT_VALUES[0]:-}" -- "$@"
    local rc=$?
    c=$(fi_field "$dir" calls)
    if [ -z "$c" ] || [ "$c" -lt 1 ]; then
      bad "$name: the shim counted nothing (did the command reach '$arm'?)"
      return
    fi
    if ! "$check" "$rc" "$dir" 0; then
      bad "$name: the run without a fault fails its own check (exit $rc)"
      head -5 "$dir/stderr"
      return
    fi
    [ "$lo" = 0 ] || [ "$c" -lt "$lo" ] && lo=$c
    [ "$c" -gt "$hi" ] && hi=$c
  done
  FI_CALLS=$hi
  FI_LO=$lo
  local last=$((hi + ${FI_MARGIN:-8}))
  ok "$name: $lo..$hi allocations and write-side calls after '$arm' (${FI_COUNT_RUNS:-3} runs); walking 1..$last with $jobs workers"
  rm -rf "$TMP/fi-res"
  mkdir -p "$TMP/fi-res"
  local pids=()
  for ((k = 0; k < jobs; k++)); do
    fi_worker $((k + 1)) "$jobs" "$last" "$arm" "$check" "${FI_SLOT_VALUES[$k]:-}" -- "$@" &
    pids+=($!)
  done
  for k in "${pids[@]}"; do wait "$k"; done
  FI_WALK_S=$((SECONDS - t0))
  local n failed=0 missing=0 shown=0 line
  FI_RUNS=0
  FI_LANDED=0
  for ((n = 1; n <= last; n++)); do
    if [ ! -f "$TMP/fi-res/$n" ]; then
      missing=$((missing + 1))
      continue
    fi
    read -r line <"$TMP/fi-res/$n"
    FI_RUNS=$((FI_RUNS + 1))
    case "$line" in
      "ok landed") FI_LANDED=$((FI_LANDED + 1)) ;;
      "ok none") ;;
      *)
        failed=$((failed + 1))
        case "$line" in "bad landed"*) FI_LANDED=$((FI_LANDED + 1)) ;; esac
        if [ $shown -lt 8 ]; then
          shown=$((shown + 1))
          echo "  ${line#bad * }"
          sed 's/^/    /' "$TMP/fi-res/$n.why" | head -4
          sed 's/^/    stderr: /' "$TMP/fi-$n/stderr" | head -3
        fi
        ;;
    esac
  done
  [ $missing = 0 ] || bad "$name: $missing of $last runs left no result (a worker died)"
  # Every call the fault-free runs counted must have been failed once.
  [ "$FI_LANDED" -ge "$lo" ] &&
    ok "$name: the fault landed in $FI_LANDED of $FI_RUNS runs (every counted call; the rest ran past their last call)" ||
    bad "$name: the fault landed in only $FI_LANDED runs, fewer than the $lo calls counted (the count drifted)"
  [ $failed = 0 ] && ok "$name: every one of $FI_RUNS injected faults kept the measurement ($FI_WALK_S s)" ||
    bad "$name: $failed of $FI_RUNS injected faults lost the measurement"
}

# fi_leftovers DIR [KEPT]: ergon's temporary and lock files left in DIR
# (other than KEPT, a file the command said it kept); prints them. A lock
# file is not counted when the fault was the flock that should have taken
# it: it holds no data, the next run takes it over, and removing a lock
# file ergon does not hold could break another run's lock.
fi_leftovers() {
  local f found=1
  for f in "$1"/.ergon-tmp-* "$1"/.*.ergon-lock; do
    [ -e "$f" ] || continue
    [ -n "${2:-}" ] && [ "$f" -ef "$2" ] && continue
    case "$f" in *.ergon-lock) [ "$(fi_field "$1" failed)" = flock ] && continue ;; esac
    echo "  left behind: $f"
    found=0
  done
  return $found
}
