#!/usr/bin/env bash
# `ergon profile MODEL.tflite --board B` runs the images it has just built
# from the model, never what a search of OUT/firmware finds: an earlier
# run into the same OUT (--force) leaves its images there, and the
# finder's pick (the lexically smallest *profile* / *power* name) took
# another board's image (ergon_an505_profile.elf before
# ergon_an547_profile.elf), which then ran on the wrong machine (no start
# sentinel, exit 1). Here OUT/firmware holds the an547's own prebuilt UART
# image under a name that sorts first (ergon_a_profile.elf, the workload
# profile, not the model): the run must take ergon_an547_profile.elf and
# its model's output must match the host interpreter's; the same for
# ergon validate, which builds each model into OUT/MODEL/firmware.
# Needs arm-none-eabi-gcc and qemu-system-arm (bootstrap.sh): fails
# without them.
set -u
bin=${ERGON_BIN:?ERGON_BIN not set}
shared=${ERGON_SHARED_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)/shared}
model=$shared/fixtures/models/kws_ref_model.tflite
prebuilt=$(dirname "$bin")/target/an547/ergon_an547_profile.elf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
for f in "$model" "$prebuilt"; do
	[ -f "$f" ] || { echo "FAIL: $f is missing"; exit 1; }
done
command -v qemu-system-arm >/dev/null || {
	echo "FAIL: qemu-system-arm not on PATH (scripts/bootstrap.sh installs it)"
	exit 1
}
mkdir -p "$tmp/out/firmware"
cp "$prebuilt" "$tmp/out/firmware/ergon_a_profile.elf"
cp "$prebuilt" "$tmp/out/firmware/ergon_a_power.elf"
"$bin" profile "$model" --board qemu-an547 --out "$tmp/out" --force >"$tmp/run.out" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "profile with an earlier image in OUT/firmware: exit $rc ($(tail -3 "$tmp/run.out"))"
python3 - "$tmp/out/summary.json" <<'PY' || fails=$((fails + 1))
import json, os, sys
s = json.load(open(sys.argv[1]))
image = s["stages"]["pmu"]["image"]
built = [b["elf"] for b in s["model"]["builds"] if b["kind"] == "profile"]
ok = os.path.basename(image) == "ergon_an547_profile.elf" and len(built) == 1 \
    and os.path.realpath(image) == os.path.realpath(built[0])
if not ok:
    print("FAIL: ran %s, built %s" % (image, built))
sys.exit(0 if ok else 1)
PY
grep -q "bit-exact" "$tmp/run.out" || fail "the model's output is not bit-exact ($(grep correctness "$tmp/run.out"))"
# ergon validate builds each model into OUT/MODEL/firmware the same way.
mkdir -p "$tmp/models" "$tmp/v/kws_ref_model/firmware"
cp "$model" "$tmp/models/"
cp "$prebuilt" "$tmp/v/kws_ref_model/firmware/ergon_a_profile.elf"
"$bin" validate --board qemu-an547 --models "$tmp/models" --junit-xml "$tmp/v.xml" --out "$tmp/v" \
	--force >"$tmp/v.out" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "validate with an earlier image in OUT/MODEL/firmware: exit $rc ($(tail -3 "$tmp/v.out"))"
grep -q "1 model(s), 3 test(s): 3 passed" "$tmp/v.out" || fail "validate: not 3 of 3 passed ($(tail -2 "$tmp/v.out"))"
[ $fails -eq 0 ] && echo "test_profile_fw_own_build: ok"
exit $((fails > 0))
