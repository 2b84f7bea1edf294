#!/usr/bin/env bash
# Configuration `ergon profile` accepts must act (issue 17 item 6): the
# transport and the reset the lifecycle really carries out are named in the
# plan; a value that cannot act on the chosen lifecycle is refused with the
# reason before any stage runs; power.serial without an instrument to
# select refuses the power stage; a board without registered wiring runs
# gate-only with only the sync pin set.
set -u
bin=${ERGON_BIN:?ERGON_BIN not set}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   - $*"; }
bad() { echo "FAIL - $*"; fails=$((fails + 1)); }
expect() { # expect CODE WHAT -- command...: stdout/stderr in $tmp/out, $tmp/err
	local want=$1 what=$2
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	local got=$?
	if [ "$got" = "$want" ]; then ok "$what (exit $got)"; else
		bad "$what: exit $got, wanted $want"
		head -20 "$tmp/out" "$tmp/err"
	fi
}
has() { # has FILE REGEX WHAT
	if grep -qE -- "$2" "$1"; then ok "$3"; else
		bad "$3: /$2/ not in $1"
		head -20 "$1"
	fi
}
mkdir -p "$tmp/fw"
printf 'ELF' >"$tmp/fw/app_profile.elf"
printf 'ELF' >"$tmp/fw/app_power.elf"

# --- target.transport ---------------------------------------------------------
expect 2 "uart on a J-Link board is refused" -- "$bin" profile "$tmp/fw" --board apollo510_evb \
	--set target.transport=uart --dry-run
has "$tmp/err" "target.transport uart cannot act on the jlink lifecycle" "transport refusal names key and lifecycle"
has "$tmp/err" "set target.transport: rtt" "transport refusal names the fix"
expect 0 "rtt on a J-Link board" -- "$bin" profile "$tmp/fw" --board apollo510_evb --dry-run
has "$tmp/out" '"used": "rtt"' "plan says which transport is used"
expect 0 "sim: any transport is the bench's one wire" -- "$bin" profile --board sim \
	--set target.transport=swo --dry-run
has "$tmp/out" '"used": "virtual_wire"' "sim plan says virtual_wire"
has "$tmp/out" '"configured": "swo"' "sim plan keeps the configured value"

# --- power.reset_strategy -------------------------------------------------------
expect 2 "explicit debug+swpoi on J-Link is refused" -- "$bin" profile "$tmp/fw" \
	--board apollo510_evb --set power.reset_strategy=debug_reset+swpoi_reset --dry-run
has "$tmp/err" "power.reset_strategy debug_reset\+swpoi_reset cannot act on the jlink lifecycle" "reset refusal names key and lifecycle"
expect 2 "power_cycle on J-Link is refused" -- "$bin" profile "$tmp/fw" \
	--board apollo510_evb --set power.reset_strategy=power_cycle --dry-run
expect 2 "a reset strategy on the virtual bench is refused" -- "$bin" profile --board sim \
	--set power.reset_strategy=swpoi_reset --dry-run
has "$tmp/err" "has no meaning on the sim lifecycle" "sim reset refusal says why"
expect 0 "debug_reset on J-Link acts" -- "$bin" profile "$tmp/fw" --board apollo510_evb \
	--set power.reset_strategy=debug_reset --dry-run
has "$tmp/out" 'debug_reset: JLinkExe `r` then `g`' "plan names the J-Link reset step"
has "$tmp/out" '"not_performed": null' "debug_reset: no step missing"
# The board rule (Apollo5: debug_reset+swpoi_reset) is not refused, but the
# step J-Link does not perform is named.
expect 0 "Apollo5 auto reset" -- "$bin" profile "$tmp/fw" --board apollo510_evb --dry-run
has "$tmp/out" '"not_performed": "swpoi_reset"' "plan names the step not performed"
expect 0 "openocd reset step" -- "$bin" profile "$tmp/fw" --board apollo4p_evb \
	--set target.lifecycle=openocd --dry-run
has "$tmp/out" 'debug_reset: OpenOCD `reset halt`; RTT setup; `resume`' "plan names the OpenOCD reset step"

# --- power.serial ---------------------------------------------------------------
expect 1 "power.serial on the virtual bench refuses the power stage" -- "$bin" profile \
	--board sim --power --power-serial ABC123 --out "$tmp/s1"
has "$tmp/s1/summary.json" "power.serial ABC123 selects a live instrument" "refusal names the serial"
has "$tmp/s1/summary.json" '"status": "refused"' "power stage refused"
expect 1 "power.serial in internal mode" -- "$bin" profile --board sim \
	--sim-scenario baseline_ina228 --set power.serial=XYZ --out "$tmp/s2"
has "$tmp/s2/summary.json" "internal mode reads the target's own INA228" "internal refusal says why"

# --- gate-only on a board without registered wiring ---------------------------------
expect 0 "apollo330mP_evb with only the sync pin" -- "$bin" profile "$tmp/fw" \
	--board apollo330mP_evb --power --set power.sync_gpio_pin=5 --dry-run
has "$tmp/out" '"lockstep": false' "gate-only (no lock-step)"
expect 2 "apollo330mP_evb without the sync pin" -- "$bin" profile "$tmp/fw" \
	--board apollo330mP_evb --power --dry-run
has "$tmp/err" "power.sync_gpio_pin \(the gate\) must be set" "names the gate pin"
has "$tmp/err" "sync 5, state 6, go 7" "names the board's validated pins"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all passed"
