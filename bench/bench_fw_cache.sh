#!/usr/bin/env bash
# `ergon profile MODEL.tflite --board qemu-an547` with the firmware object
# cache (issue 36), against baselines measured in the same run, interleaved:
#   qemu   the QEMU run alone: qemu-system-arm with ergon's arguments on the
#          ELF the warm run linked, UART0 on a unix socket as ergon runs it,
#          read by a small python3 reader to the stream's end sentinel, at
#          which QEMU is stopped as ergon stops it (what no build can
#          beat); and, within the warm run itself, the capture's own
#          elapsed time (summary.json stages.pmu.capture.elapsed_s: QEMU's
#          start to the stream's end, as ergon timed it)
#   warm   ergon profile into a new folder, the cache filled (a repeat)
#   cold   ergon profile into a new folder with an empty cache (a first run)
#   base   BASE's ergon profile (an ergon from before the cache: one compiler
#          call for every source, no cache), into a new folder
# Each round runs all four, in that order; prints every round's wall time
# and the ratios warm/qemu and cold/base per round and their medians, with
# the load average before and after (on a shared machine the wall time
# measures the neighbours too). CPU time (user + system, children included)
# is printed beside.
#   bench/bench_fw_cache.sh ERGON BASE_ERGON MODEL ROUNDS WORKDIR
set -euo pipefail
ergon=${1:?usage: bench_fw_cache.sh ERGON BASE_ERGON MODEL ROUNDS WORKDIR}
base=${2:?usage}
model=${3:?usage}
rounds=${4:?usage}
work=${5:?usage}
mkdir -p "$work"
work=$(cd "$work" && pwd)
res=$work/results.txt
: >"$res"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
timed() { # NAME CMD...: "NAME wall cpu" into $res
  local name=$1
  shift
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>"$work/last.err" || { echo "$name failed:"; cat "$work/last.err"; exit 1; }
  t1=$(date +%s.%N)
  echo "$name $(python3 -c "print('%.3f' % ($t1 - $t0))")" >>"$res"
}
# CPU of one command (user + system, its children included).
cpu_of() {
  /usr/bin/time -f '%U %S' "$@" 2>&1 >/dev/null | tail -1 | awk '{printf "%.2f", $1 + $2}'
}
# QEMU as ergon starts it (lifecycle/qemu: -chardev socket, server, wait),
# its UART read to the end of the stream, then QEMU's exit.
cat >"$work/qemu_alone.py" <<'PY'
import os, socket, subprocess, sys, time
elf, sock = sys.argv[1], sys.argv[2]
if os.path.exists(sock):
    os.remove(sock)
q = subprocess.Popen(["qemu-system-arm", "-M", "mps3-an547", "-nographic", "-monitor", "none",
                      "-semihosting-config", "enable=on,target=native", "-icount",
                      "shift=4,sleep=off,align=off", "-chardev",
                      "socket,id=u0,path=%s,server=on,wait=on" % sock, "-serial", "chardev:u0",
                      "-kernel", elf], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
s = socket.socket(socket.AF_UNIX)
while True:
    try:
        s.connect(sock)
        break
    except OSError:
        time.sleep(0.005)
data = b""
while b"--- HPX_END ---" not in data:
    b = s.recv(65536)
    if not b:
        break
    data += b
# ergon stops QEMU at the stream's end (its capture ends at the sentinel):
# so does this, rather than wait for whatever the firmware does after it.
ended = b"--- HPX_END ---" in data
q.terminate()
q.wait()
sys.exit(0 if ended else 1)
PY
export XDG_CACHE_HOME=$work/cache-warm
# Prime the warm cache (not timed).
"$ergon" profile "$model" --board qemu-an547 --out "$work/prime" --force >/dev/null 2>&1
elf=$work/fw.elf
cp "$work/prime/firmware/ergon_an547_profile.elf" "$elf"
for ((r = 1; r <= rounds; r++)); do
  rm -rf "$work/warm" "$work/cold" "$work/base" "$work/cache-cold"
  timed qemu python3 "$work/qemu_alone.py" "$elf" "$work/uart.sock"
  timed warm "$ergon" profile "$model" --board qemu-an547 --out "$work/warm"
  echo "capture $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stages"]["pmu"]["capture"]["elapsed_s"])' "$work/warm/summary.json")" >>"$res"
  cmp -s "$work/warm/firmware/ergon_an547_profile.elf" "$elf" ||
    { echo "the warm run linked another ELF than the primed one"; exit 1; }
  XDG_CACHE_HOME=$work/cache-cold timed cold "$ergon" profile "$model" --board qemu-an547 \
    --out "$work/cold"
  timed base "$base" profile "$model" --board qemu-an547 --out "$work/base"
  tail -5 "$res" | tr '\n' ' ' | sed "s/^/round $r: /"
  echo
done
rm -rf "$work/warm" "$work/cold" "$work/base" "$work/cache-cold"
echo "cpu, one run each (user + system, children included): qemu $(cpu_of python3 \
  "$work/qemu_alone.py" "$elf" "$work/uart.sock") s, warm $(cpu_of \
  "$ergon" profile "$model" --board qemu-an547 --out "$work/warm") s, cold $(XDG_CACHE_HOME=$work/cache-cold \
  cpu_of "$ergon" profile "$model" --board qemu-an547 --out "$work/cold") s, base $(cpu_of \
  "$base" profile "$model" --board qemu-an547 --out "$work/base") s"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$res" <<'PY'
import statistics, sys
t = {}
for line in open(sys.argv[1]):
    k, v = line.split()
    t.setdefault(k, []).append(float(v))
for k in ("qemu", "capture", "warm", "cold", "base"):
    print("%-5s wall s: %s (median %.2f)" % (k, " ".join("%.2f" % x for x in t[k]), statistics.median(t[k])))
wq = [w / q for w, q in zip(t["warm"], t["qemu"])]
wc = [w / c for w, c in zip(t["warm"], t["capture"])]
cb = [c / b for c, b in zip(t["cold"], t["base"])]
print("warm/qemu per round: %s, median %.2f" % (" ".join("%.2f" % x for x in wq), statistics.median(wq)))
print("warm/its own capture per round: %s, median %.2f" % (" ".join("%.2f" % x for x in wc), statistics.median(wc)))
print("cold/base per round: %s, median %.2f" % (" ".join("%.2f" % x for x in cb), statistics.median(cb)))
PY
