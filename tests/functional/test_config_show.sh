#!/usr/bin/env bash
# `ergon config show` end to end: every key printed with its origin, the
# precedence default < board < config file < command line, rule-derived
# values, warnings on stderr, and exit code 2 for configuration errors.
set -u
bin=${ERGON_BIN:?ERGON_BIN not set}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { # check DESCRIPTION COMMAND...
	local what=$1
	shift
	if ! "$@"; then
		echo "FAIL: $what"
		fails=$((fails + 1))
	fi
}
line_of() { grep -E "^$1 " "$tmp/out" | head -1; }

cat >"$tmp/ergon.yml" <<'YML'
target:
  board: apollo4p_evb
profiling:
  iterations: 250
power:
  enabled: true
YML

"$bin" config show --config "$tmp/ergon.yml" --set profiling.warmup=9 >"$tmp/out" 2>"$tmp/err"
check "show exits 0" test $? -eq 0
# One line per key: 58 keys (issue 7's sections + target.probe, issue 18,
# power.max_uncertainty_pct and the three power.ina228.shunt_* terms, issue
# 32, power.rail_voltage and profiling.clean_window_attach_wait_ms, issue
# 37, power.marker_input_index, issue 33) + the board line + the header.
check "every key listed" test "$(wc -l <"$tmp/out")" -eq 60
check "file value and place" grep -qE '^profiling.iterations +250 +config file +.*ergon.yml:4:15' "$tmp/out"
check "command line value" grep -qE '^profiling.warmup +9 +command line +--set profiling.warmup=9' "$tmp/out"
check "default value" grep -qE '^profiling.aggregation +median +default' "$tmp/out"
# apollo4p_evb wiring from issue 7's table: 22/23/24.
check "board pins" grep -qE '^power.sync_gpio_pin +22 +board +board apollo4p_evb' "$tmp/out"
check "board go pin" grep -qE '^power.go_gpio_pin +24 +board' "$tmp/out"
# Power on + auto window: max(1000, 5000).
check "window rule" grep -qE '^profiling.window_target_ms +5000 +rule' "$tmp/out"
check "lockstep auto" grep -qE '^power.lockstep +true +rule +auto: state and go pins' "$tmp/out"

# --board on the command line beats the file's board.
"$bin" config show --config "$tmp/ergon.yml" --board apollo3p_evb >"$tmp/out" 2>&1
check "--board wins" grep -qE '^target.board +apollo3p_evb +command line' "$tmp/out"
check "--board pins (26)" grep -qE '^power.sync_gpio_pin +26 +board' "$tmp/out"

# A warning goes to stderr, the exit stays 0 (Click left at 0x40).
"$bin" config show --set power.enabled=true --set power.mode=internal \
	--set power.ina228.board=mikroe-power-monitor-click --set power.ina228.shunt_ohms=0.1 \
	--set power.ina228.i2c_address=0x40 >"$tmp/out" 2>"$tmp/err"
check "warning exit 0" test $? -eq 0
check "warning on stderr" grep -q 'warning: config.ina228_address_mismatch' "$tmp/err"
# A fixed window's length is not decidable from the configuration: no warning.
"$bin" config show --set power.enabled=true --set profiling.window_mode=fixed >"$tmp/out" 2>"$tmp/err"
check "no fixed-window warning at config time" sh -c "! grep -q fixed_window_short '$tmp/err'"

# Configuration errors: exit 2 and a message with the place and the fix.
printf 'power:\n  enabeld: true\n' >"$tmp/bad.yml"
"$bin" config show --config "$tmp/bad.yml" >"$tmp/out" 2>"$tmp/err"
check "typo exit 2" test $? -eq 2
check "typo message" grep -q "bad.yml:2:3: unknown key 'power.enabeld' (did you mean 'enabled'?)" "$tmp/err"
"$bin" config show --board nosuch >"$tmp/out" 2>"$tmp/err"
check "unknown board exit 2" test $? -eq 2
check "unknown board lists boards" grep -q 'boards: apollo3p_evb' "$tmp/err"
"$bin" config show --set profiling.extreme_mode=true --set profiling.force_shared_sram=true \
	>"$tmp/out" 2>"$tmp/err"
check "extreme+shared exit 2" test $? -eq 2
"$bin" config show --config "$tmp/missing.yml" >"$tmp/out" 2>"$tmp/err"
check "missing file exit 3" test $? -eq 3
"$bin" config show --bogus >"$tmp/out" 2>"$tmp/err"
check "usage exit 2" test $? -eq 2

# JSON output carries value and origin per key.
"$bin" config show --power --json >"$tmp/out" 2>&1
check "json origin" grep -q '"origin": "rule"' "$tmp/out"

"$bin" config boards >"$tmp/out" 2>&1
check "boards exit 0" test $? -eq 0
check "boards apollo510" grep -qE '^apollo510_evb +Apollo510 +29/36/14 +debug_reset\+swpoi_reset' "$tmp/out"
check "boards 330 must set" grep -qE '^apollo330mP_evb .*\(must be set\)' "$tmp/out"

[ "$fails" -eq 0 ] && echo "ok" || exit 1
