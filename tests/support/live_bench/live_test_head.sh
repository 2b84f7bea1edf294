# The common head of the live-bench tests (sourced by
# tests/functional/test_profile_live.sh, test_profile_live_ppk2.sh,
# test_profile_live_layers.sh, test_profile_live_swpoi.sh and
# test_profile_marker_plan.sh; not a test
# itself): bin and src from ERGON_BIN and ERGON_SOURCE_DIR, python3 (the
# fake RTT server, the bridges), a temporary folder $tmp removed on exit
# (kept when KEEP is set, to look at), the ok / bad reporters counting
# failures in $fails, the fake J-Link bench of fake_jlink_bench.sh set up
# (board, stream, power_stream, port), and the PPK2 protocol simulator
# program (<build>/ergon_ppk2_sim, tests/support/ppk2_sim/):
#   start_sim ARGS...  start it with ARGS; sets SIMPID and PORT (the pty it
#                      serves, the first line it prints);
#   stop_sim           end it and wait for it.
# A simulator still running when the test exits is ended.
set -u
bin=${ERGON_BIN:?ERGON_BIN not set}
src=${ERGON_SOURCE_DIR:?ERGON_SOURCE_DIR not set}
if ! command -v python3 >/dev/null; then
	echo "FAIL: python3 is needed for the fake RTT server and the bridges"
	exit 1
fi
tmp=$(mktemp -d)
SIMPID=
trap '[ -n "$SIMPID" ] && kill "$SIMPID" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   - $*"; }
bad() { echo "FAIL - $*"; fails=$((fails + 1)); }
. "$src/tests/support/live_bench/fake_jlink_bench.sh"
live_bench_setup || bad "virtual bench reference run (1200 inferences)"

start_sim() { # start_sim ARGS...: sets SIMPID and PORT
	coproc SIMP { exec "${ERGON_BUILD_DIR:?ERGON_BUILD_DIR not set}/ergon_ppk2_sim" "$@"; }
	SIMPID=$SIMP_PID
	read -r PORT <&"${SIMP[0]}"
}
stop_sim() {
	kill "$SIMPID" 2>/dev/null
	wait "$SIMPID" 2>/dev/null
	SIMPID=
}
