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
# The probe lifecycles switch transports: uart / usb_cdc are the board's
# port on the host (target.usb_port), rtt the probe's own; SWO is refused
# with the reason.
expect 2 "uart on a J-Link board without target.usb_port is refused" -- "$bin" profile "$tmp/fw" \
	--board apollo510_evb --set target.transport=uart --dry-run
has "$tmp/err" "target.transport uart cannot act on the jlink lifecycle" "transport refusal names key and lifecycle"
has "$tmp/err" "target.usb_port is empty" "transport refusal says what is missing"
has "$tmp/err" "set target.usb_port: /dev/ttyACM0" "transport refusal names the fix"
expect 0 "uart on a J-Link board with target.usb_port" -- "$bin" profile "$tmp/fw" \
	--board apollo510_evb --set target.transport=uart --set target.usb_port=/dev/ttyACM0,921600 \
	--dry-run
has "$tmp/out" '"used": "uart"' "jlink uart: the plan uses uart"
has "$tmp/out" '"endpoint": "serial:/dev/ttyACM0,921600"' "jlink uart: the plan names the serial endpoint"
expect 0 "usb_cdc on OpenOCD with target.usb_port" -- "$bin" profile "$tmp/fw" \
	--board apollo4p_evb --set target.lifecycle=openocd --set target.transport=usb_cdc \
	--set target.usb_port=/dev/ttyACM1 --dry-run
has "$tmp/out" '"used": "usb_cdc"' "openocd usb_cdc: the plan uses usb_cdc"
if grep -q 'rtt setup' "$tmp/out"; then bad "openocd usb_cdc plan still sets up RTT"; else ok "openocd usb_cdc plan: no RTT step"; fi
expect 2 "swo on J-Link is refused" -- "$bin" profile "$tmp/fw" --board apollo510_evb \
	--set target.transport=swo --dry-run
has "$tmp/err" "target.transport swo cannot act on the jlink lifecycle: ergon reads SWO as ITM bytes from a trace server's TCP port" "jlink swo refusal says why"
expect 2 "swo on OpenOCD is refused" -- "$bin" profile "$tmp/fw" --board apollo4p_evb \
	--set target.lifecycle=openocd --set target.transport=swo --dry-run
has "$tmp/err" "needs the part's trace clock and SWO pin rate" "openocd swo refusal says why"
expect 2 "usb_cdc on QEMU is refused" -- "$bin" profile "$tmp/fw" --board apollo510_evb \
	--set target.lifecycle=qemu --set target.transport=usb_cdc --dry-run
has "$tmp/err" "the QEMU lifecycle carries uart .* or rtt" "qemu usb_cdc refusal names what QEMU carries"
expect 2 "uart with a live Joulescope power stage is refused" -- "$bin" profile "$tmp/fw" \
	--board apollo510_evb --power --set target.transport=uart --set target.usb_port=/dev/ttyACM0 \
	--dry-run
has "$tmp/err" "a serial port keeps nothing sent before it is read" "live + serial refusal says why"
expect 0 "rtt on a J-Link board" -- "$bin" profile "$tmp/fw" --board apollo510_evb --dry-run
has "$tmp/out" '"used": "rtt"' "plan says which transport is used"
expect 0 "sim: any transport is the bench's one wire" -- "$bin" profile --board sim \
	--set target.transport=swo --dry-run
has "$tmp/out" '"used": "virtual_wire"' "sim plan says virtual_wire"
has "$tmp/out" '"configured": "swo"' "sim plan keeps the configured value"

# --- power.reset_strategy -------------------------------------------------------
# debug_reset+swpoi_reset acts on J-Link: `r`, then the SWPOI register
# write (Ambiq RSTGEN SWPOI at 0x40000000 + 0x04, key 0x1B).
expect 0 "explicit debug+swpoi on J-Link acts" -- "$bin" profile "$tmp/fw" \
	--board apollo510_evb --set power.reset_strategy=debug_reset+swpoi_reset --dry-run
has "$tmp/out" 'debug_reset: JLinkExe `r` \(reset, halt\)' "plan names the J-Link debug reset step"
has "$tmp/out" 'swpoi_reset: JLinkExe `w4 0x40000004 0x1B`' "plan names the J-Link SWPOI write"
expect 0 "swpoi_reset alone on OpenOCD" -- "$bin" profile "$tmp/fw" --board apollo4p_evb \
	--set target.lifecycle=openocd --set power.reset_strategy=swpoi_reset --dry-run
has "$tmp/out" 'swpoi_reset: OpenOCD `mww 0x40000004 0x1b`' "plan names the OpenOCD SWPOI write"
if grep -q 'OpenOCD `reset halt`' "$tmp/out"; then bad "swpoi_reset alone plans a debug reset"; else ok "swpoi_reset alone: no debug reset"; fi
expect 2 "power_cycle on J-Link is refused" -- "$bin" profile "$tmp/fw" \
	--board apollo510_evb --set power.reset_strategy=power_cycle --dry-run
expect 2 "a reset strategy on the virtual bench is refused" -- "$bin" profile --board sim \
	--set power.reset_strategy=swpoi_reset --dry-run
has "$tmp/err" "has no meaning on the sim lifecycle" "sim reset refusal says why"
expect 0 "debug_reset on J-Link acts" -- "$bin" profile "$tmp/fw" --board apollo510_evb \
	--set power.reset_strategy=debug_reset --dry-run
has "$tmp/out" 'debug_reset: JLinkExe `r`' "plan names the J-Link reset step"
has "$tmp/out" 'run: JLinkExe `g`' "plan names the J-Link run step"
has "$tmp/out" '"not_performed": null' "debug_reset: no step missing"
# The board rule (Apollo5: debug_reset+swpoi_reset) is performed in full.
expect 0 "Apollo5 auto reset" -- "$bin" profile "$tmp/fw" --board apollo510_evb --dry-run
has "$tmp/out" '"strategy": "debug_reset\+swpoi_reset"' "Apollo5 board rule resolved"
has "$tmp/out" 'w4 0x40000004 0x1B' "Apollo5 board rule: the SWPOI write is planned"
has "$tmp/out" '"not_performed": null' "Apollo5 board rule: no step missing"
expect 0 "openocd reset step" -- "$bin" profile "$tmp/fw" --board apollo4p_evb \
	--set target.lifecycle=openocd --dry-run
has "$tmp/out" 'debug_reset: OpenOCD `reset halt`' "plan names the OpenOCD reset step"
has "$tmp/out" 'OpenOCD `rtt setup 0x20000000 0x100000' "plan names the OpenOCD RTT setup step"
has "$tmp/out" 'run: OpenOCD `resume`' "plan names the OpenOCD run step"

# --- extreme_mode + force_shared_sram: the method's reason ------------------------
expect 2 "extreme_mode with force_shared_sram is refused" -- "$bin" profile --board sim \
	--set profiling.extreme_mode=true --set profiling.force_shared_sram=true --dry-run
has "$tmp/err" "pull the shared SSRAM opposite ways" "conflict states the real reason"
has "$tmp/err" "extreme mode powers the shared SSRAM down" "names what extreme mode does"
has "$tmp/err" "powers and retains the whole SSRAM array at boot" "names what force_shared_sram does"

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

# --- power.stats_rate_hz (issue 29) -----------------------------------------------
# It shapes the virtual bench's simulated Joulescope: at 1 kHz the gated
# engine takes 1 ms packets; the window of 20 inferences of 1 ms at 9 uJ
# each still gives 9 uJ per inference (within the one-packet edge
# allowance: 2 x 1 ms x 5 mA x 1.8 V / 20 = 9e-7 J).
expect 0 "sim, power.stats_rate_hz 1000" -- "$bin" profile --board sim --power \
	--set power.stats_rate_hz=1000 --out "$tmp/r1k"
if python3 - "$tmp/r1k/summary.json" <<'PY'; then ok "1 kHz: 1 ms packets, 9 uJ per inference"; else bad "1 kHz run"; fi
import json, sys
p = json.load(open(sys.argv[1]))["power"]
sp, e = p["gate"]["stats_period_s"], p.get("energy_per_inference_j")
ok = abs(sp - 0.001) < 1e-12 and isinstance(e, float) and abs(e - 9e-6) <= 9e-7
if not ok: print("stats_period_s %r, epi %r" % (sp, e))
sys.exit(0 if ok else 1)
PY
# Not set: the bench keeps its own 10 kHz.
expect 0 "sim, power.stats_rate_hz not set" -- "$bin" profile --board sim --power --out "$tmp/r10k"
if python3 -c "import json,sys; sys.exit(0 if abs(json.load(open('$tmp/r10k/summary.json'))['power']['gate']['stats_period_s'] - 1e-4) < 1e-12 else 1)"; then
	ok "not set: the bench's own 100 us packets"
else bad "not set: stats period"; fi
# A rate the meter cannot give: refused before any stage, with the rates it can.
expect 2 "sim, power.stats_rate_hz 3000" -- "$bin" profile --board sim --power \
	--set power.stats_rate_hz=3000 --dry-run
has "$tmp/err" "power.stats_rate_hz 3000: the virtual bench's simulated Joulescope cannot give" "sim: says why"
has "$tmp/err" "4000, 3125, 2500, 2000" "sim: names the rates it gives"
expect 2 "joulescope, power.stats_rate_hz 300000" -- "$bin" profile "$tmp/fw" \
	--board apollo510_evb --power --set power.driver=joulescope --set power.stats_rate_hz=300000 \
	--dry-run
has "$tmp/err" "power.stats_rate_hz 300000: no Joulescope gives that statistics rate" "joulescope: says why"
has "$tmp/err" "100000, 62500, 50000" "joulescope: names the rates a JS220 gives"
expect 2 "ppk2, power.stats_rate_hz 300" -- "$bin" profile "$tmp/fw" --board apollo510_evb \
	--power --set power.driver=ppk2 --set power.lockstep=false --set power.stats_rate_hz=300 \
	--dry-run
has "$tmp/err" "a PPK2's 100,000 samples a second are reduced to packets of a whole number" "ppk2: says why"
expect 0 "ppk2, power.stats_rate_hz 400" -- "$bin" profile "$tmp/fw" --board apollo510_evb \
	--power --set power.driver=ppk2 --set power.lockstep=false --set power.stats_rate_hz=400 \
	--dry-run

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all passed"
