# Walk every allocation and write-side call of a command, failing one at a
# time with the fault-injection shim (faultinj.c). Sourced by tests after
# tests/functional/run_lib.sh; reusable for any subcommand:
#
#   fi_walk NAME ARM CHECK -- command args...
#
# First counts the calls after the process names a thread ARM (prctl), then
# runs the command once per call number N with that call failing, in a
# fresh folder $FI_DIR (the command's arguments may use the literal string
# @DIR@, replaced by it; TMPDIR points inside it). After each run,
# CHECK RC FI_DIR N is called and must return 0: it decides whether the
# measurement was kept. FI_JOBS runs go at once (default 2). FI_STRIDE=k
# walks every k-th call only, for a quick look by hand (default 1: every
# call; the tests never set it). Sets FI_CALLS (the count) and FI_RUNS.
: "${ERGON_BUILD_DIR:?ERGON_BUILD_DIR must point at the build folder}"
FI_SHIM="$ERGON_BUILD_DIR/faultinj/libergon_faultinj.so"
# The shim sits before libasan and forwards to it.
FI_ASAN="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

fi_run() { # fi_run DIR FAIL_AT ARM -- command...
  local dir=$1 at=$2 arm=$3
  shift 4
  mkdir -p "$dir/tmp"
  local args=() a
  for a in "$@"; do args+=("${a//@DIR@/$dir}"); done
  ASAN_OPTIONS="$FI_ASAN" LD_PRELOAD="$FI_SHIM" FAULTINJ_ARM="$arm" FAULTINJ_FAIL_AT="$at" \
    FAULTINJ_REPORT="$dir/faultinj.txt" TMPDIR="$dir/tmp" \
    "${args[@]}" >"$dir/stdout" 2>"$dir/stderr"
}

fi_walk() {
  local name=$1 arm=$2 check=$3
  shift 3
  [ -f "$FI_SHIM" ] || { bad "$name: no fault-injection shim at $FI_SHIM"; return; }
  fi_run "$TMP/fi-count" 0 "$arm" "$@"
  FI_CALLS=$(awk '/^calls/ {print $2}' "$TMP/fi-count/faultinj.txt" 2>/dev/null)
  if [ -z "$FI_CALLS" ] || [ "$FI_CALLS" -lt 1 ]; then
    bad "$name: the shim counted nothing (did the command name its phase $arm?)"
    return
  fi
  ok "$name: $FI_CALLS allocations and write-side calls after '$arm'"
  local n k stride=${FI_STRIDE:-1} jobs=${FI_JOBS:-2} failed=0
  FI_RUNS=0
  for ((n = 1; n <= FI_CALLS; n += stride * jobs)); do
    # FI_JOBS runs at a time (default 2), each in its own folder.
    local pids=() ns=()
    for ((k = n; k < n + stride * jobs && k <= FI_CALLS; k += stride)); do
      fi_run "$TMP/fi-$k" "$k" "$arm" "$@" &
      pids+=($!)
      ns+=($k)
    done
    for k in "${!pids[@]}"; do
      wait "${pids[$k]}"
      local rc=$? m=${ns[$k]} dir="$TMP/fi-${ns[$k]}"
      FI_RUNS=$((FI_RUNS + 1))
      if ! "$check" "$rc" "$dir" "$m"; then
        failed=$((failed + 1))
        if [ $failed -le 5 ]; then
          echo "  call $m ($(awk '/^failed/ {print $2}' "$dir/faultinj.txt")): exit $rc"
          head -5 "$dir/stderr"
        fi
      else
        rm -rf "$dir"
      fi
    done
  done
  [ $failed = 0 ] && ok "$name: every one of $FI_RUNS injected faults kept the measurement" ||
    bad "$name: $failed of $FI_RUNS injected faults lost the measurement"
}
