# The common head of the probe-lifecycle shell tests (sourced, not a test):
# a temporary folder $tmp, background processes in pids (killed on exit),
# and the ok / bad / has reporters counting failures in $fails.
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
ok() { echo "ok   - $*"; }
bad() { echo "FAIL - $*"; fails=$((fails + 1)); }
# has FILE ERE WHAT: ok when FILE holds a line matching ERE.
has() {
	if grep -qE -- "$2" "$1"; then ok "$3"; else
		bad "$3: /$2/ not in $1"
		head -30 "$1"
	fi
}
