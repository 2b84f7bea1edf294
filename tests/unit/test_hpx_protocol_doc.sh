#!/usr/bin/env bash
# docs/PROTOCOL.md's token table must be exactly what wire.h generates, and
# every token the host parser matches must be in the registry.
set -euo pipefail
root="${ERGON_SOURCE_DIR:?}"
want="$("$root/scripts/hpx_protocol_table.sh")"
have="$(awk '/<!-- wire.h table begin -->/{on=1;next} /<!-- wire.h table end -->/{on=0} on' \
        "$root/docs/PROTOCOL.md")"
if [ "$want" != "$have" ]; then
  echo "docs/PROTOCOL.md is out of date with target/include/ergon/wire.h:" >&2
  diff <(echo "$want") <(echo "$have") >&2 || true
  echo "fix: scripts/hpx_protocol_table.sh --update" >&2
  exit 1
fi
# The sentinels must be in the table with their exact text.
for tok in '--- HPX_START ---' '--- HPX_END ---' '--- HPX_POWER_TERMINAL_START ---' \
           '--- HPX_POWER_TERMINAL_END ---' 'HPX_HEARTBEAT'; do
  grep -qF "\`\"$tok\"\`" <<<"$have" || { echo "token '$tok' missing from the table" >&2; exit 1; }
done
# Every issue code the parser emits is registered and documented.
for code in $(grep -ohE '"(pmu|capture)\.[a-z_]+"' "$root"/src/engines/hpx/*.c "$root"/src/pipelines/hpx/hpx_*.c | sort -u | tr -d '"'); do
  grep -qF "\"$code\"" "$root/include/ergon/issues.h" || { echo "$code not in issues.h" >&2; exit 1; }
done
echo ok
