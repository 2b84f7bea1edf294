#!/usr/bin/env bash
# Facts that `--help` and the guides state in two places, checked against
# each other and against what ergon does (issue 37, "stale docs"): each
# fact is run (a --dry-run of the plan) and then looked for, in its own
# words, in every place that states it; a place that says the opposite
# fails. Four facts:
#  1. power.driver: ppk2 in `profile` runs gate-only, and a forced
#     power.lockstep: true is refused (profile --help, docs/USAGE.md).
#  2. jlink performs the SWPOI write of power.reset_strategy
#     debug_reset+swpoi_reset (docs/internals/config.md, docs/USAGE.md).
#  3. power_cycle is refused on a probe lifecycle (docs/internals/config.md).
#  4. the method's flags --power-firmware and --jlink-serial set their keys.
. "$(dirname "$0")/run_lib.sh"
: "${ERGON_SOURCE_DIR:?}"
E=$ERGON_BIN
USAGE=$ERGON_SOURCE_DIR/docs/USAGE.md
CONFIG=$ERGON_SOURCE_DIR/docs/internals/config.md
mkdir -p "$TMP/fw"
printf 'ELF' >"$TMP/fw/app_profile.elf"
printf 'ELF' >"$TMP/fw/app_power.elf"
board=(--board apollo510_evb --power --power-serial /dev/null)
ppk2=(--set power.driver=ppk2 --set power.io_voltage=3.3)
flat() { tr -s ' \n' '  ' <"$1"; }
# plan_of: the plan of a `profile --dry-run` on stdin, as JSON on stdout
# (the whole document when --json gives one, else the text after "plan:").
plan_of() {
  python3 -c '
import json, sys
t = sys.stdin.read()
try:
    d = json.loads(t)
    d = d.get("plan", d)
except ValueError:
    s = t[t.index("\nplan:\n") + 7:]
    d, _ = json.JSONDecoder().raw_decode(s)
print(json.dumps(d))'
}

# 1. PPK2: gate-only by the auto rule; a forced lock-step refused (exit 2).
expect 0 "ppk2, lock-step auto: the plan" -- "$E" profile "$TMP/fw" "${board[@]}" "${ppk2[@]}" --dry-run --json
if printf '%s' "$OUT" | plan_of | python3 -c '
import json, sys
p = json.load(sys.stdin).get("power", {})
sys.exit(0 if p.get("lockstep") is False else 1)'; then
  ok "ppk2: the plan is gate-only (plan.power.lockstep false)"
else bad "ppk2: plan.power.lockstep is not false"; printf '%s\n' "$OUT" | head -40; fi
expect 2 "ppk2 with power.lockstep=true is refused" -- "$E" profile "$TMP/fw" "${board[@]}" "${ppk2[@]}" \
  --set power.lockstep=true --dry-run
contains "$ERR" "power.lockstep: true with power.driver: ppk2" "the refusal names both keys"
contains "$ERR" "power.lockstep: false" "the refusal gives the fix"
help=$("$E" profile --help 2>&1 | tr -s ' \n' '  ')
contains "$help" "ppk2 gate-only" "profile --help: ppk2 runs gate-only"
contains "$help" "a forced power.lockstep: true is refused" "profile --help: forced lock-step refused"
case "$help" in *"ppk2 is refused"*) bad "profile --help still says ppk2 is refused";; *) ok "profile --help does not refuse ppk2";; esac
u=$(flat "$USAGE")
contains "$u" '`power.driver: ppk2` (section 9) runs the same stage gate-only' "USAGE: ppk2 gate-only"
contains "$u" 'forced `power.lockstep: true` is refused' "USAGE: forced lock-step refused"

# 2. jlink performs the SWPOI write of the Apollo5 board rule.
expect 0 "jlink, reset_strategy auto on apollo510_evb: the plan" -- "$E" profile "$TMP/fw" --board apollo510_evb --dry-run --json
if printf '%s' "$OUT" | plan_of | python3 -c '
import json, sys
r = json.load(sys.stdin)["reset"]
ok = (r["strategy"] == "debug_reset+swpoi_reset" and r.get("not_performed") is None
      and any("w4 0x40000004 0x1B" in s for s in r["steps"]))
sys.exit(0 if ok else 1)'; then
  ok "jlink: the plan performs the SWPOI write (w4 0x40000004 0x1B), nothing not performed"
else bad "jlink: the SWPOI step"; printf '%s\n' "$OUT" | head -60; fi
c=$(flat "$CONFIG")
contains "$c" 'JLinkExe `w4 0x40000004 0x1B`' "config.md: jlink's SWPOI write"
contains "$c" '`debug_reset+swpoi_reset`) is carried out in full' "config.md: the board rule is carried out"
for place in "$CONFIG" "$USAGE"; do
  case "$(flat "$place")" in
    *"SWPOI register write is not in ergon"*) bad "$(basename "$place") still says the SWPOI write is not in ergon";;
    *) ok "$(basename "$place") does not deny the SWPOI write";;
  esac
done
contains "$u" 'w4 0x40000004 0x1B' "USAGE: jlink's SWPOI write"

# 3. power_cycle on a probe lifecycle: refused.
expect 2 "jlink with power_cycle is refused" -- "$E" profile "$TMP/fw" --board apollo510_evb \
  --set power.reset_strategy=power_cycle --dry-run
contains "$ERR" "power_cycle cannot act on the jlink lifecycle" "the refusal names the lifecycle"
contains "$c" '`power_cycle` is refused (no power switch)' "config.md: power_cycle refused"

# 4. The method's flags --power-firmware and --jlink-serial set their keys
#    (and are checked as the keys are).
expect 0 "--power-firmware shared --jlink-serial 000123456" -- "$E" profile "$TMP/fw" "${board[@]}" \
  --power-firmware shared --jlink-serial 000123456 --dry-run
contains "$OUT" "power.firmware                        shared                     command line" "power.firmware from the flag"
contains "$OUT" "target.jlink_serial                   000123456" "target.jlink_serial from the flag"
expect 2 "--power-firmware bogus is refused" -- "$E" profile "$TMP/fw" "${board[@]}" --power-firmware bogus --dry-run
contains "$ERR" "use one of dedicated, shared" "the refusal lists the values"
finish
