#!/usr/bin/env bash
# RTT through QEMU's gdbstub vs UART0 on a unix socket, same firmware
# sources, same run: `ergon capture` wall time, drained bytes/s over the
# capture's elapsed time, host CPU (user+sys of ergon), and for RTT the
# link's polls/halts and mean poll (halt + reads + write + continue) time.
#   bench/bench_rtt_gdb_qemu.sh BUILD_DIR [RUNS]
# The example stream is small (~1.3 KB): the figures are per-capture
# latency and cost more than sustained throughput.
set -euo pipefail
b=${1:?usage: bench_rtt_gdb_qemu.sh BUILD_DIR [RUNS]}
runs=${2:-5}
fw=$b/target/an547
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
q=(qemu-system-arm -M mps3-an547 -nographic -monitor none
   -semihosting-config enable=on,target=native -icount shift=4,sleep=off,align=off)
field() { python3 -c "import json,sys;d=json.load(open(sys.argv[1]))['profile']['capture'];print($2)" "$1"; }
for i in $(seq 1 "$runs"); do
  "${q[@]}" -chardev socket,id=u0,path="$tmp/u.sock",server=on,wait=on -serial chardev:u0 \
    -kernel "$fw/ergon_an547_profile.elf" >/dev/null 2>&1 &
  qp=$!
  while [ ! -S "$tmp/u.sock" ]; do sleep 0.02; done
  sleep 0.05
  /usr/bin/time -f "%e %U %S" -o "$tmp/t" "$b/ergon" capture --transport "unix:$tmp/u.sock" \
    --out "$tmp/u$i" --timeout 30 >/dev/null 2>&1
  wait $qp || true
  read -r wall usr sys < "$tmp/t"
  echo "uart run=$i wall_s=$wall cpu_s=$(echo "$usr + $sys" | bc) bytes=$(field "$tmp/u$i/summary.json" "d['bytes']") \
bytes_per_s=$(field "$tmp/u$i/summary.json" "round(d['bytes']/d['elapsed_s'])")"
  rm -f "$tmp/u.sock"
  port=$((20000 + RANDOM % 20000))
  "${q[@]}" -serial null -gdb tcp:127.0.0.1:$port -S -kernel "$fw/ergon_an547_profile_rtt.elf" \
    >/dev/null 2>&1 &
  qp=$!
  for _ in $(seq 200); do
    ss -ltn 2>/dev/null | grep -q "127.0.0.1:$port " && break
    sleep 0.02
  done
  /usr/bin/time -f "%e %U %S" -o "$tmp/t" "$b/ergon" capture --transport "rtt:gdb=127.0.0.1:$port" \
    --out "$tmp/r$i" --timeout 30 >"$tmp/rlog" 2>&1 || { cat "$tmp/rlog"; exit 1; }
  wait $qp || true
  read -r wall usr sys < "$tmp/t"
  echo "rtt  run=$i wall_s=$wall cpu_s=$(echo "$usr + $sys" | bc) bytes=$(field "$tmp/r$i/summary.json" "d['bytes']") \
bytes_per_s=$(field "$tmp/r$i/summary.json" "round(d['bytes']/d['elapsed_s'])") \
$(field "$tmp/r$i/summary.json" "'polls=%d halts=%d poll_ms_mean=%.3f' % (d['link']['polls'], d['link']['halts'], d['link']['poll_ms_mean'])")"
done
