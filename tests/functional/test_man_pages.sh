#!/usr/bin/env bash
# The man pages are rendered by the CLI from the text --help prints
# (`ergon __man`). This checks they cannot drift: the pages the build wrote
# are byte-identical to what the binary renders now, there is one per
# subcommand, and every non-blank line of `ergon CMD --help` appears, in
# order, in what man(1) displays for ergon-CMD(1).
set -u
: "${ERGON_BIN:?}" "${ERGON_BUILD_DIR:?}"
TMP=$(mktemp -d /tmp/ergon-man-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fails=0
ok() { echo "ok   - $*"; }
bad() { echo "FAIL - $*"; fails=$((fails + 1)); }
norm() { sed -e 's/[[:space:]]\+/ /g' -e 's/^ //' -e 's/ $//' | grep -v '^$'; }
# man shows ASCII hyphens for \- and plain spaces; compare words only.
render() { MANWIDTH=400 LC_ALL=C.UTF-8 man -l "$1" 2>/dev/null | col -b | norm; }
# covers HELP PAGE: every non-blank help line is in the page, in order.
covers() {
  python3 - "$1" "$2" <<'PY'
import sys
help_lines = open(sys.argv[1]).read().split("\n")
page = open(sys.argv[2]).read().split("\n")
j = 0
for h in filter(None, help_lines):
    # Section headings ("Examples:") are man sections ("EXAMPLES").
    if h.endswith(":") and len(h) < 40 and h[:-1].replace(" ", "").isalpha():
        h = h[:-1].upper()
    while j < len(page) and h not in page[j]:
        j += 1
    if j == len(page):
        print("missing:", h); sys.exit(1)
PY
}
cmds=$("$ERGON_BIN" __complete commands)
[ -n "$cmds" ] && ok "subcommands: $(echo $cmds)" || bad "no subcommands listed"
"$ERGON_BIN" __man >"$TMP/ergon.1" && cmp -s "$TMP/ergon.1" "$ERGON_BUILD_DIR/man/ergon.1" &&
  ok "ergon.1 is current" || bad "build/man/ergon.1 differs from 'ergon __man'"
"$ERGON_BIN" --help | norm | sed '1d' >"$TMP/help"
render "$ERGON_BUILD_DIR/man/ergon.1" >"$TMP/page"
covers "$TMP/help" "$TMP/page" && ok "ergon.1 holds every line of ergon --help" || bad "ergon.1 lacks help lines"
for c in $cmds; do
  page=$ERGON_BUILD_DIR/man/ergon-$c.1
  if [ ! -f "$page" ]; then bad "no page ergon-$c.1"; continue; fi
  "$ERGON_BIN" __man "$c" >"$TMP/p.1"
  cmp -s "$TMP/p.1" "$page" || bad "ergon-$c.1 is stale (differs from 'ergon __man $c')"
  "$ERGON_BIN" "$c" --help | norm >"$TMP/help"
  render "$page" >"$TMP/page"
  if covers "$TMP/help" "$TMP/page"; then ok "ergon-$c(1) matches 'ergon $c --help'"; else bad "ergon-$c(1) drifted from --help"; fi
done
if [ "$fails" -ne 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "all passed"
