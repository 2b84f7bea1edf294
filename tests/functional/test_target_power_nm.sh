#!/usr/bin/env bash
# The dedicated power build contains no transport code: no emitter symbol,
# no UART write, no profile flow. The profile build of the same sources
# does contain them (so this check can fail). The terminal record sits at
# its known symbol for the debug probe.
set -euo pipefail
dir="${ERGON_BUILD_DIR:?}/target/an547"
if ! command -v arm-none-eabi-nm >/dev/null; then
  echo "arm-none-eabi-nm missing: install gcc-arm-none-eabi (scripts/bootstrap.sh)" >&2
  exit 1
fi
power="$dir/ergon_an547_power.elf"
profile="$dir/ergon_an547_profile.elf"
for f in "$power" "$profile"; do
  [ -f "$f" ] || { echo "missing $f: build the ergon_an547_firmware target" >&2; exit 1; }
done
rtt="$dir/ergon_an547_profile_rtt.elf"
[ -f "$rtt" ] || { echo "missing $rtt: build the ergon_an547_firmware target" >&2; exit 1; }
transport='ert_hpx_|uart_write|uart_pending|ert_profile_|ert_rtt_|rtt_write|_SEGGER_RTT'
if arm-none-eabi-nm "$power" | grep -E "$transport"; then
  echo "FAIL: transport code in the power build (symbols above)" >&2
  exit 1
fi
n=$(arm-none-eabi-nm "$profile" | grep -cE "$transport" || true)
if [ "$n" -lt 3 ]; then
  echo "FAIL: the profile build should contain the transport ($n symbols)" >&2
  exit 1
fi
# The RTT build carries the RTT ring (and so can fail the check above).
nr=$(arm-none-eabi-nm "$rtt" | grep -cE 'ert_rtt_write|_SEGGER_RTT$' || true)
if [ "$nr" -lt 2 ]; then
  echo "FAIL: the RTT build should contain ert_rtt_write and _SEGGER_RTT ($nr symbols)" >&2
  exit 1
fi
arm-none-eabi-nm "$power" | grep -E ' [BbDd] ert_power_terminal$' >/dev/null || {
  echo "FAIL: ert_power_terminal not found in the power build" >&2; exit 1; }
# No UART string either: the power binary never formats to a transport.
if arm-none-eabi-objdump -d "$power" | grep -q '0x49303000\|49303000'; then
  echo "FAIL: the power build touches UART0 (0x49303000)" >&2
  exit 1
fi
arm-none-eabi-objdump -d "$profile" | grep '49303000' >/dev/null || {
  echo "FAIL: the UART0 check cannot see the profile build's UART" >&2; exit 1; }
echo "ok: power build has no transport; profile build has $n transport symbols"
