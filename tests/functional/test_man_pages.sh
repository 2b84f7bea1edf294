#!/usr/bin/env bash
# The man pages are rendered by the CLI from the text --help prints
# (`ergon __man`). This checks they cannot drift: the pages the build wrote
# are byte-identical to what the binary renders now, there is one per
# subcommand, every page has the sections of man-pages(7) in their order
# (NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXIT STATUS, EXAMPLES, SEE ALSO),
# every non-blank line of `ergon CMD --help` appears in what man(1)
# displays for ergon-CMD(1), and its OPTIONS section names every option the
# command's help text documents.
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
WANT="NAME SYNOPSIS DESCRIPTION OPTIONS EXIT STATUS EXAMPLES SEE ALSO"
sections() { grep '^\.SH ' "$1" | sed 's/^\.SH //' | tr '\n' ' ' | sed 's/ $//'; }
# covers HELP PAGE: every non-blank help line is in the page (the blocks
# are reordered into man's sections; inside one the lines keep their order).
covers() {
  python3 - "$1" "$2" <<'PY'
import sys
page = open(sys.argv[2]).read().split("\n")
for h in filter(None, open(sys.argv[1]).read().split("\n")):
    # Headings that name a man section are that section.
    if h in ("Options:", "Examples:", "Example:") or h.startswith("Exit codes ("):
        continue
    if h.endswith(":") and len(h) < 40 and h[:-1].replace(" ", "").isalpha():
        h = h[:-1]
    if not any(h in line for line in page):
        print("missing:", h); sys.exit(1)
PY
}
# options PAGE OPTION...: each option appears between OPTIONS and EXIT STATUS.
options() {
  local page=$1; shift
  awk '/^OPTIONS$/{f=1;next} /^EXIT STATUS$/{f=0} f' "$page" >"$TMP/opts"
  local o miss=""
  for o in "$@"; do grep -q -- "$o" "$TMP/opts" || miss="$miss $o"; done
  [ -z "$miss" ]
  MISSING=$miss
}
cmds=$("$ERGON_BIN" __complete commands)
[ -n "$cmds" ] && ok "subcommands: $(echo $cmds)" || bad "no subcommands listed"
"$ERGON_BIN" __man >"$TMP/ergon.1" && cmp -s "$TMP/ergon.1" "$ERGON_BUILD_DIR/man/ergon.1" &&
  ok "ergon.1 is current" || bad "build/man/ergon.1 differs from 'ergon __man'"
[ "$(sections "$ERGON_BUILD_DIR/man/ergon.1")" = "$WANT" ] && ok "ergon.1: $WANT" ||
  bad "ergon.1 sections: $(sections "$ERGON_BUILD_DIR/man/ergon.1")"
"$ERGON_BIN" --help | norm | sed '1d' >"$TMP/help"
render "$ERGON_BUILD_DIR/man/ergon.1" >"$TMP/page"
covers "$TMP/help" "$TMP/page" && ok "ergon.1 holds every line of ergon --help" || bad "ergon.1 lacks help lines"
for c in $cmds; do
  page=$ERGON_BUILD_DIR/man/ergon-$c.1
  if [ ! -f "$page" ]; then bad "no page ergon-$c.1"; continue; fi
  "$ERGON_BIN" __man "$c" >"$TMP/p.1"
  cmp -s "$TMP/p.1" "$page" || bad "ergon-$c.1 is stale (differs from 'ergon __man $c')"
  s=$(sections "$page")
  [ "$s" = "$WANT" ] && ok "ergon-$c(1): the seven sections in order" || bad "ergon-$c(1) sections: $s"
  "$ERGON_BIN" "$c" --help | norm >"$TMP/help"
  render "$page" >"$TMP/page"
  if covers "$TMP/help" "$TMP/page"; then ok "ergon-$c(1) matches 'ergon $c --help'"; else bad "ergon-$c(1) drifted from --help"; fi
  # shellcheck disable=SC2046
  if options "$TMP/page" $("$ERGON_BIN" __complete options "$c"); then ok "ergon-$c(1) OPTIONS names every option"
  else bad "ergon-$c(1) OPTIONS lacks:$MISSING"; fi
  grep -q '^\.BR ergon (1)' "$page" && ok "ergon-$c(1) SEE ALSO ergon(1)" || bad "ergon-$c(1): no SEE ALSO ergon(1)"
done
# A page that names another command points to its page: ergon-sign(1)
# tells to check with ergon verify.
grep -q '^\.BR ergon\\-verify (1)' "$ERGON_BUILD_DIR/man/ergon-keygen.1" &&
  ok "ergon-keygen(1) SEE ALSO ergon-verify(1)" || bad "ergon-keygen(1) does not point to ergon-verify(1)"
if [ "$fails" -ne 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "all passed"
