#!/usr/bin/env bash
# Print the markdown table of every token in the HPX wire registry
# (target/include/ergon/wire.h). docs/PROTOCOL.md holds this table between
# its "wire.h table" markers; tests/unit/test_hpx_protocol_doc.sh checks that
# the two agree, so the document cannot drift from the header.
#   scripts/hpx_protocol_table.sh            print the table
#   scripts/hpx_protocol_table.sh --update   rewrite the table in docs/PROTOCOL.md
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
table() {
  echo "| macro | value |"
  echo "| --- | --- |"
  sed -n -E 's/^#define (HPX_[A-Z0-9_]+)[[:space:]]+(.+)$/| `\1` | `\2` |/p' \
    "$root/target/include/ergon/wire.h"
}
if [ "${1:-}" = "--update" ]; then
  doc="$root/docs/PROTOCOL.md"
  tmp="$(mktemp)"
  TBL="$(table)" awk '
    /<!-- wire.h table begin -->/ { print; print ENVIRON["TBL"]; skip = 1; next }
    /<!-- wire.h table end -->/ { skip = 0 }
    !skip { print }' "$doc" > "$tmp"
  mv "$tmp" "$doc"
else
  table
fi
