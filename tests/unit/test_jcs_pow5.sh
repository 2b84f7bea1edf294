#!/usr/bin/env bash
# The power-of-five tables of the shortest double formatter are generated:
# regenerate them with Python's exact integers and compare with the tree.
set -euo pipefail
src=${ERGON_SOURCE_DIR:?}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
python3 "$src/scripts/gen_jcs_pow5.py" > "$tmp"
if ! cmp -s "$tmp" "$src/src/core/jcs_pow5.h"; then
  echo "src/core/jcs_pow5.h differs from scripts/gen_jcs_pow5.py's output:" >&2
  diff "$tmp" "$src/src/core/jcs_pow5.h" | head -20 >&2
  exit 1
fi
# Spot check two entries by hand: 5^-1 and 5^1 at 125 bits.
#   2^(3-1+125) / 5 + 1 = 0x1999...999a (high 0x1999999999999999)
grep -q '{0x999999999999999au, 0x1999999999999999u}' "$src/src/core/jcs_pow5.h"
#   5 << 122 = 0x1400...0 (high 0x1400000000000000)
grep -q '{0x0000000000000000u, 0x1400000000000000u}' \
  "$src/src/core/jcs_pow5.h"
echo "jcs_pow5.h: regenerated and identical"
