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
  if [ "$v" != valid ] && ! grep -q "^stage [a-z ]*: ok - it ran, but the result is $v: " "$TMP/o" &&
    grep -q "^stage [a-z ]*: ok" "$TMP/o"; then
    bad "scenario $s: an ok stage line does not name the check"; continue
  fi
  ok "scenario $s: $v, exit $rc, stage lines name the check"
done
finish
