#!/usr/bin/env bash
# A pipeline's flow reads top down (docs/internals/profile.md, "The flow"):
# scripts/check_flow.py must find every flow clean in the tree, and must
# fail on a small tree whose profile flow reaches back into a file it left
# and climbs back up into its entry file (so the check itself can fail).
set -euo pipefail
src=${ERGON_SOURCE_DIR:?}
chk="$src/scripts/check_flow.py"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ergon-flow-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The tree itself: every flow clean, and the profile's in stage order.
out=$(python3 "$chk" --trace "$src")
printf '%s\n' "$out"
grep -qF "check_flow: ergon_profile_run reads top down" <<<"$out" ||
	{ echo "the profile flow is not clean"; exit 1; }
grep -qF "profile.c -> profile_plan.c -> profile.c -> profile_accept.c -> profile.c -> profile_pmu.c -> profile.c -> profile_power.c" <<<"$out" ||
	{ echo "the profile flow does not run plan, accept, pmu, power in that order"; exit 1; }
for e in ergon_validate_run ergon_kernels_run; do
	grep -qF "check_flow: $e reads top down" <<<"$out" || { echo "$e's flow is not clean"; exit 1; }
done

# A profile folder whose stages share a helper file (entered twice) and
# whose second stage calls back into the entry file.
t="$tmp/tree"
mkdir -p "$t/include/ergon" "$t/src/pipelines/profile"
cat >"$t/include/ergon/profile.h" <<'H'
int ergon_profile_run(void);
H
cat >"$t/src/pipelines/profile/profile.c" <<'C'
/* profile/: a planted flow. */
#include "ergon/profile.h"
int stage_a(void);
int stage_b(void);
int prof_note(void)
{
	return 0;
}
int ergon_profile_run(void)
{
	return stage_a() + stage_b();
}
C
cat >"$t/src/pipelines/profile/a.c" <<'C'
int helper(void);
int stage_a(void)
{
	return helper();
}
C
cat >"$t/src/pipelines/profile/b.c" <<'C'
int helper(void);
int prof_note(void);
int stage_b(void)
{
	return helper() + prof_note();
}
C
cat >"$t/src/pipelines/profile/h.c" <<'C'
int helper(void)
{
	return 1;
}
C
set +e
out=$(python3 "$chk" "$t")
rc=$?
set -e
printf '%s\n' "$out"
[ "$rc" -eq 1 ] || { echo "expected exit 1 on the bad tree, got $rc"; exit 1; }
expect() {
	grep -qF -- "$1" <<<"$out" || { echo "missing: $1"; exit 1; }
}
expect "profile.c -> a.c -> h.c -> a.c -> profile.c -> b.c -> h.c -> b.c -> profile.c -> b.c -> profile.c"
expect "src/pipelines/profile/b.c: stage_b() reaches back into h.c: helper()"
expect "src/pipelines/profile/b.c: stage_b() climbs back up into profile.c: prof_note()"

# A stage that calls down into a file of its own twice (only it enters
# that file, as the power stage does with profile_live.c) reads top down;
# the same file entered from a second stage still reaches back (above).
cat >"$t/src/pipelines/profile/b.c" <<'C'
int stage_b(void)
{
	return 2;
}
C
cat >"$t/src/pipelines/profile/a.c" <<'C'
int helper(void);
int stage_a(void)
{
	return helper() + helper();
}
C
cat >"$t/src/pipelines/profile/profile.c" <<'C'
#include "ergon/profile.h"
int stage_a(void);
int stage_b(void);
int ergon_profile_run(void)
{
	return stage_a() + stage_b();
}
C
set +e
out=$(python3 "$chk" --trace "$t")
rc=$?
set -e
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || { echo "expected exit 0 on a stage calling its own file twice, got $rc"; exit 1; }
expect "profile.c -> a.c -> h.c -> a.c -> h.c -> a.c -> profile.c -> b.c -> profile.c"
echo "test_flow: ok"
