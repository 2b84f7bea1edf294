#!/usr/bin/env bash
# scripts/mutations.txt follows the code (issue 30): every mutation's text
# is in its file exactly once (scripts/mutate.py --check, no build), so a
# change to the trust-critical code that moves a mutated line fails here
# and the list is updated with it; the list holds at least 40 mutations and
# names only tests that exist. The check itself must refuse a mutation
# whose text is missing or not unique. The full mutation run is by hand
# (docs/internals/testing.md, "Mutation testing").
set -euo pipefail
src=${ERGON_SOURCE_DIR:?}
mut="$src/scripts/mutate.py"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ergon-mutlist-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

python3 "$mut" --check
n=$(python3 "$mut" --list | tail -1 | awk '{print $1}')
[ "$n" -ge 40 ] || { echo "scripts/mutations.txt holds $n mutations; at least 40 wanted"; exit 1; }

# Every test a mutation names exists (a tests/<tier>/<name>.c or .sh).
for t in $(sed -n 's/^tests: //p' "$src/scripts/mutations.txt" | tr ' ' '\n' | sort -u); do
	tier=${t%%/*} name=${t#*/}
	[ -e "$src/tests/$tier/$name.c" ] || [ -e "$src/tests/$tier/$name.sh" ] ||
		{ echo "scripts/mutations.txt names $t, which is no test"; exit 1; }
done

# A mutation whose text is not in its file, and one whose text is there
# twice, are refused (exit 2) with the mutation's name.
cat >"$tmp/missing.txt" <<'L'
== gone
file: src/engines/stats.c
tests: unit/test_stats
- this text is in no file
+ x
L
set +e
python3 "$mut" --check --mutations "$tmp/missing.txt" 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "mutation gone" "$tmp/err" || { echo "missing text: rc $rc"; cat "$tmp/err"; exit 1; }
cat >"$tmp/twice.txt" <<'L'
== twice
file: src/engines/stats.c
tests: unit/test_stats
- #include
+ #include
+ /* */
L
set +e
python3 "$mut" --check --mutations "$tmp/twice.txt" 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "times, not once" "$tmp/err" || { echo "text twice: rc $rc"; cat "$tmp/err"; exit 1; }
echo "ok: $n mutations apply"
