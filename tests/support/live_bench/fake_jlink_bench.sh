# A fake real-board bench for `ergon profile --power` with a live
# instrument (sourced by tests/functional/test_profile_live*.sh, not a test
# itself). Needs bin, src and tmp set and python3 on PATH. It makes:
#  - the virtual bench's fixed-window boots of 1200 inferences (1 ms each),
#    whose logs the fake target replays: $stream (PMU), $power_stream;
#  - a fake JLinkExe first on PATH that records its calls in
#    $tmp/jlink.calls (with ERGON_JS_STUB_LOG set, also how many times the
#    stub Joulescope's range was set to auto, passthrough on, when an image
#    was flashed: "FLASH IMAGE PASSTHROUGH_AUTO N"), remembers the flashed
#    image and, on a run command
#    file (reset + go, or the Apollo5 rule's reset + SWPOI write) after the power build was flashed, creates
#    $tmp/reset_seen once its RTT port answers, that is when the reset is
#    done (a marker for a test to look at; no simulator waits for it: the
#    PPK2 simulator draws its gate in stream samples, --gate-at-start), and serves the image's stream on the RTT port through
#    tests/support/fake_probe/rtt_server.py;
#  - board: the ergon profile arguments for that bench (apollo510_evb, the
#    J8 wiring, external mode, the dedicated power build, the fixed window).
# Returns non-zero when the reference run fails.
live_bench_setup() {
	port=$((20000 + RANDOM % 20000))
	mkdir -p "$tmp/fw" "$tmp/bin"
	printf 'ELF' >"$tmp/fw/app_profile.elf"
	printf 'ELF' >"$tmp/fw/app_power.elf"
	fixed=(--set profiling.window_mode=fixed --set profiling.iterations=1200)
	"$bin" profile --board sim --power "${fixed[@]}" --out "$tmp/simref" >/dev/null 2>&1 ||
		return 1
	stream="$tmp/simref/pmu/capture.log"
	power_stream="$tmp/simref/power/capture.log"
	grep -q '^HPX_POWER_COMPLETED_COUNT=1200$' "$power_stream" || return 1
	cat >"$tmp/bin/JLinkExe" <<EOF2
#!/usr/bin/env bash
echo "ARGV \$*" >>"$tmp/jlink.calls"
cf=""; while [ \$# -gt 0 ]; do [ "\$1" = -CommandFile ] && cf=\$2; shift; done
sed 's/^/CMD /' "\$cf" >>"$tmp/jlink.calls"
img=\$(sed -n 's/^loadfile //p' "\$cf"); [ -n "\$img" ] && echo "\$img" >"$tmp/last_image"
# What a stub Joulescope had been told when an image was flashed: the
# range-mode publishes ("auto" = passthrough on), for the passthrough check.
[ -n "\$img" ] && [ -n "\${ERGON_JS_STUB_LOG:-}" ] &&
	echo "FLASH \$img PASSTHROUGH_AUTO \$(grep -c 'range/mode", "value": "auto"' "\$ERGON_JS_STUB_LOG" 2>/dev/null)" >>"$tmp/jlink.calls"
file=$stream; power=0
case "\$(cat "$tmp/last_image" 2>/dev/null)" in *power*) file=$power_stream; power=1;; esac
if grep -qxE 'g|w4 0x40000004 0x1B' "\$cf"; then # \`g\`, or the Apollo5 rule's SWPOI write
	# The target runs once the probe's session is up: reset_seen appears
	# when the RTT port answers (as the host's own wait for it ends).
	[ \$power = 1 ] && ( for i in \$(seq 1 600); do
		if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then touch "$tmp/reset_seen"; break; fi
		sleep 0.02; done ) &
	exec python3 "$src/tests/support/fake_probe/rtt_server.py" $port replay "\$file"
fi
exit 0
EOF2
	chmod +x "$tmp/bin/JLinkExe"
	export PATH="$tmp/bin:$PATH"
	board=(--board apollo510_evb --rtt-port "$port" --set target.jlink_serial=123456
		--set power.sync_gpio_pin=5 --set power.state_gpio_pin=6 --set power.go_gpio_pin=7
		--set power.mode=external --set power.firmware=dedicated "${fixed[@]}")
}

# live_bench_test_port MADE_BY: a port for apollo510_evb in a copy of
# ergon-target at $tmp/target (exported as ERGON_TARGET_DIR): the an547's
# files (its RTT build, the J-Link's transport) under a probe lifecycle,
# validation 'unvalidated' with a note naming the test MADE_BY.
live_bench_test_port() {
	cp -r "$src/target" "$tmp/target" || return 1
	mkdir -p "$tmp/target/port/testboard"
	python3 - "$tmp/target/port" "$1" <<'PY' || return 1
import json, sys
d = json.load(open(sys.argv[1] + "/an547/port.json"))
d.update(port="testboard", board="apollo510_evb", title="test port (an547 sources)",
         validation={"status": "unvalidated",
                     "note": "made by %s; never run on hardware" % sys.argv[2]},
         run={"kind": "probe"}, defines=["-DERT_AN547_RTT=1"])
d["hal"]["transport"] = "rtt"  # the an547's RTT build (port/an547/port.c)
json.dump(d, open(sys.argv[1] + "/testboard/port.json", "w"), indent=1)
PY
	export ERGON_TARGET_DIR=$tmp/target
}
