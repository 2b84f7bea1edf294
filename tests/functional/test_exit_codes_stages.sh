#!/usr/bin/env bash
# Issue 17 item 9, the profile side: in every scenario of the virtual bench,
# a stage line that says "ok" beside a NOT VALID or DEGRADED result names
# the check that decided it; the exit code is 1 for NOT VALID, 4 for
# DEGRADED and 0 for valid, whatever the scenario.
. "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
scen=$("$E" __complete scenarios)
n=$(wc -w <<<"$scen")
[ "$n" -ge 20 ] && ok "$n scenarios listed" || bad "only $n scenarios listed: $scen"
for s in $scen; do
  "$E" profile --board sim --sim-scenario "$s" --out "$TMP/sc-$s" >"$TMP/o" 2>"$TMP/e"
  rc=$?
  v=$(grep -o "^valid\|^NOT VALID\|^DEGRADED" "$TMP/o")
  case "$v:$rc" in
    "valid:0" | "DEGRADED:4" | "NOT VALID:1") ;;
    *) bad "scenario $s: verdict '$v' with exit $rc"; continue ;;
  esac
  if [ "$v" != valid ] && grep -q "^stage [a-z ]*: ok\$" "$TMP/o"; then
    bad "scenario $s: a bare 'ok' stage line beside $v"; continue
  fi
  # An ok line names the check ("it ran, but the result is V: WHY"), or
  # says its own checks passed and names the stage whose check decided
  # (issue 35: a stage line carries its own stage's faults only); that
  # stage's line then names the check or its failure.
  badline=$(grep "^stage [a-z ]*: ok" "$TMP/o" | grep -v -e ": ok - it ran, but the result is $v: " \
    -e ": ok - its own checks passed; the result is $v by stage [a-z]*\$")
  if [ "$v" != valid ] && [ -n "$badline" ]; then
    bad "scenario $s: an ok stage line names neither the check nor its stage: $badline"; continue
  fi
  owner=$(sed -n "s/^stage [a-z ]*: ok - its own checks passed; the result is $v by stage \([a-z]*\)\$/\1/p" "$TMP/o" | head -1)
  if [ -n "$owner" ] && ! grep -q "^stage $owner *: \(ok - it ran, but the result is $v: \|[a-z]* - \)" "$TMP/o"; then
    bad "scenario $s: stage $owner decided, but its line does not say why: $(grep "^stage $owner" "$TMP/o")"; continue
  fi
  ok "scenario $s: $v, exit $rc, stage lines name the check${owner:+ (on the line of stage $owner)}"
done
finish
