#!/usr/bin/env bash
# The documented library API (docs/API.md): its list of exported functions
# is the one the installed headers declare ERGON_API, and ergon/ergon.h
# includes every public header (scripts/api_symbols.py --check). The
# exported symbols themselves are compared with the list by
# functional/test_install, on the installed library (api_symbols.py
# --check-exports). Both checks must also fail: --check on a copy of the
# tree with a function added to a header and a header missing from
# ergon/ergon.h; --check-exports on a shared library that defines every
# documented function and one planted extra symbol, and on one that lacks
# a documented function (and it passes on one that defines exactly them).
set -euo pipefail
src=${ERGON_SOURCE_DIR:?}
chk="$src/scripts/api_symbols.py"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ergon-api-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

python3 "$chk" --check "$src"

t="$tmp/tree"
mkdir -p "$t/include" "$t/docs"
cp -r "$src/include/ergon" "$t/include/"
cp "$src/docs/API.md" "$t/docs/"
python3 "$chk" --check "$t" >/dev/null
printf '%s\n' '#include "ergon/error.h"' 'ERGON_API int ergon_undocumented_thing(void);' \
	>"$t/include/ergon/extra.h"
set +e
out=$(python3 "$chk" --check "$t")
rc=$?
set -e
printf '%s\n' "$out"
[ "$rc" -eq 1 ] || { echo "expected exit 1 with an undocumented function, got $rc"; exit 1; }
grep -qF "missing: ergon_undocumented_thing" <<<"$out" || { echo "the new function is not named"; exit 1; }
grep -qF "include/ergon/ergon.h does not include ergon/extra.h" <<<"$out" ||
	{ echo "the header missing from ergon.h is not named"; exit 1; }
# The exports check, on libraries made here: one stub per documented
# function (exact), the same plus a planted ergon_ function and a planted
# variable (extra), the same less one documented function (missing).
cc=${CC:-cc}
python3 "$chk" --names "$src" >"$tmp/names"
[ "$(wc -l <"$tmp/names")" -gt 100 ] || { echo "too few documented functions"; exit 1; }
awk '{print "void " $1 "(void);\nvoid " $1 "(void) {}"}' "$tmp/names" >"$tmp/exact.c"
cp "$tmp/exact.c" "$tmp/extra.c"
printf '%s\n' 'void ergon_planted_extra(void);' 'void ergon_planted_extra(void) {}' \
	'int planted_counter = 1;' >>"$tmp/extra.c"
gone=$(sed -n 2p "$tmp/names")
grep -v "void $gone(void)" "$tmp/exact.c" >"$tmp/missing.c"
for v in exact extra missing; do
	"$cc" -shared -fPIC -o "$tmp/lib$v.so" "$tmp/$v.c"
done
python3 "$chk" --check-exports "$tmp/libexact.so" "$src"
for v in extra missing; do
	set +e
	out=$(python3 "$chk" --check-exports "$tmp/lib$v.so" "$src")
	rc=$?
	set -e
	printf '%s\n' "$out"
	[ "$rc" -eq 1 ] || { echo "expected exit 1 on lib$v.so, got $rc"; exit 1; }
done
out=$(python3 "$chk" --check-exports "$tmp/libextra.so" "$src" || true)
grep -qF "does not list: ergon_planted_extra planted_counter (" <<<"$out" ||
	{ echo "the planted symbols are not named: $out"; exit 1; }
out=$(python3 "$chk" --check-exports "$tmp/libmissing.so" "$src" || true)
grep -qF "does not export 1 function(s) docs/API.md lists: $gone" <<<"$out" ||
	{ echo "the missing function $gone is not named: $out"; exit 1; }
echo "test_api_doc: ok"
