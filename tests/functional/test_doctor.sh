#!/usr/bin/env bash
# ergon doctor against fakes: a sysfs tree with a PPK2 (USB 1915:c00a) and a
# board's J-Link VCOM, a PATH with a fake JLinkExe, and a Python path with a
# stub pyjoulescope_driver. Checks each capability's verdict, that --json is
# valid JSON with a reason for every capability, and the --for exit codes.
. "$(dirname "$0")/run_lib.sh"
PY=$(python3 -c "import sys; print(sys.executable)")
F=$TMP/root
mkdir -p "$F/sys/class/tty" "$F/dev" "$TMP/bin" "$TMP/empty" "$TMP/py/pyjoulescope_driver"
usb() { # usb NAME BUSPATH VID PID PRODUCT [nodev]
  local d=$F/sys/devices/pci0/usb1/$2
  mkdir -p "$d/$2:1.0/tty/$1"
  echo "$3" >"$d/idVendor"; echo "$4" >"$d/idProduct"; echo "$5" >"$d/product"
  ln -s "../../devices/pci0/usb1/$2/$2:1.0" "$F/sys/class/tty/$1/device" 2>/dev/null ||
    { mkdir -p "$F/sys/class/tty/$1"; ln -s "../../../devices/pci0/usb1/$2/$2:1.0" "$F/sys/class/tty/$1/device"; }
  [ "${6:-}" = nodev ] || : >"$F/dev/$1"
}
usb ttyACM0 1-1 1915 c00a "PPK2"
usb ttyACM1 1-2 1366 1015 "J-Link" nodev
# A SoC UART without a USB parent is not listed.
mkdir -p "$F/sys/devices/platform/serial0/tty/ttyS0" "$F/sys/class/tty/ttyS0"
ln -s "../../../devices/platform/serial0" "$F/sys/class/tty/ttyS0/device"
printf '#!/bin/sh\nexit 0\n' >"$TMP/bin/JLinkExe"; chmod +x "$TMP/bin/JLinkExe"
echo "__version__ = '9.9-stub'" >"$TMP/py/pyjoulescope_driver/__init__.py"

expect 0 "doctor --json with every fake present" -- env PATH="$TMP/bin" PYTHONPATH="$TMP/py" \
  "$ERGON_BIN" doctor --json --sysfs-root "$F" --python "$PY"
echo "$OUT" >"$TMP/doc.json"
python3 - "$TMP/doc.json" <<'PYCHECK' && ok "JSON: every capability has id, ok, reason; fix only when not ok" || bad "JSON shape"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "ergon.doctor"
caps = {c["id"]: c for c in d["capabilities"]}
for c in d["capabilities"]:
    assert isinstance(c["ok"], bool) and c["reason"], c
    assert (c.get("fix") is None) == c["ok"], c
for want in ["instrument:synthetic", "instrument:hwmon", "qemu", "arm-toolchain", "jlink",
             "openocd", "serial:ttyACM0", "serial:ttyACM1", "python.pyjoulescope_driver"]:
    assert want in caps, want
assert "serial:ttyS0" not in caps
assert caps["serial:ttyACM0"]["usb_id"] == "1915:c00a" and caps["serial:ttyACM0"]["ok"]
assert caps["serial:ttyACM0"]["device"] == "Nordic PPK2"
assert caps["serial:ttyACM1"]["usb_id"] == "1366:1015" and not caps["serial:ttyACM1"]["ok"]
assert "no device node" in caps["serial:ttyACM1"]["reason"]
assert caps["jlink"]["ok"] and caps["jlink"]["path"].endswith("/bin/JLinkExe")
assert not caps["openocd"]["ok"] and "apt-get install openocd" in caps["openocd"]["fix"]
assert not caps["qemu"]["ok"] and not caps["arm-toolchain"]["ok"]
assert caps["python.pyjoulescope_driver"]["ok"] and "9.9-stub" in caps["python.pyjoulescope_driver"]["reason"]
for f in ["run", "profile-power", "profile-qemu"]:
    assert isinstance(d["flows"][f]["ok"], bool) and d["flows"][f]["reason"], f
assert d["flows"]["profile-power"]["ok"] and not d["flows"]["profile-qemu"]["ok"]
assert not d["flows"]["run"]["ok"]
PYCHECK

expect 0 "--for profile-power: probe + PPK2 + Joulescope driver -> exit 0" -- env PATH="$TMP/bin" \
  PYTHONPATH="$TMP/py" "$ERGON_BIN" doctor --for profile-power --sysfs-root "$F" --python "$PY"
contains "$OUT" "profile-power" "human output names the flow"
# Without the probe: the flow cannot run, and the reason says which piece is missing.
expect 1 "--for profile-power without JLinkExe/openocd -> exit 1" -- env PATH="$TMP/empty" \
  PYTHONPATH="$TMP/py" "$ERGON_BIN" doctor --for profile-power --sysfs-root "$F" --python "$PY"
contains "$OUT" "no debug probe tool (JLinkExe or openocd)" "reason names the missing probe"
contains "$OUT" "fix: sudo apt-get install openocd" "fix for openocd"
# Without the vendor module and without the PPK2 node.
rm "$F/dev/ttyACM0"
expect 1 "--for profile-power without any power instrument -> exit 1" -- env PATH="$TMP/bin" \
  PYTHONPATH="$TMP/empty" "$ERGON_BIN" doctor --for profile-power --sysfs-root "$F" --python "$PY"
contains "$OUT" "cannot import pyjoulescope_driver: ModuleNotFoundError" "names the import failure"
contains "$OUT" "no power instrument" "reason names the missing instrument"
expect 1 "--for run with no measuring instrument -> exit 1" -- env PATH="$TMP/bin" \
  "$ERGON_BIN" doctor --for run --sysfs-root "$F" --python "$PY"
expect 2 "--for with a typo suggests the flow" -- "$ERGON_BIN" doctor --for profile-pwer
contains "$ERR" "did you mean 'profile-power'?" "suggestion"
LC_ALL=C expect 0 "doctor in the C locale" -- env LC_ALL=C PATH="$TMP/bin" "$ERGON_BIN" doctor --sysfs-root "$F" --python "$PY"
if LC_ALL=C grep -q '[^ -~]' <<<"$OUT"; then bad "non-ASCII output in the C locale"; else ok "ASCII only in the C locale"; fi
finish
