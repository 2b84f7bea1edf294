#!/usr/bin/env bash
# `ergon parse` end to end (read, parse, aggregate, digest, write
# summary.json and the CSVs) against the parser alone (bench_hpx_parse:
# the same stream through the parser in 64 KiB chunks, no output), in the
# same run, interleaved, best of REPEATS each.
#   bench/bench_parse_e2e.sh BUILD_DIR [ITERATIONS] [REPEATS]
# ITERATIONS per preset of bench/gen_hpx_stream.py (4 presets x 400
# layers; default 1530). Reports MB/s (10^6 bytes) of wall time and of
# CPU time (user + system of the whole process: the digest thread
# included), peak RSS, and the ratio of end-to-end CPU time to the
# parser's. Also runs half the iterations to show RSS against stream size.
set -euo pipefail
build=${1:?usage: bench_parse_e2e.sh BUILD_DIR [ITERATIONS] [REPEATS]}
iters=${2:-1530}
reps=${3:-5}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ergon-e2e-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
run() { # STREAM -> "size best_wall best_cpu peak_rss_kb parser_cpu"
	local s=$1 bw=1e9 bc=1e9 rss=0 pc=1e9 out w u sys r p
	for _ in $(seq "$reps"); do
		p=$("$build/bench/bench_hpx_parse" "$s" 1 | sed -n 's/.*(\([0-9.]*\) s, best of 1).*/\1/p')
		rm -rf "$tmp/out"
		out=$( { /usr/bin/time -f "%e %U %S %M" "$build/ergon" parse "$s" --out "$tmp/out" \
			>/dev/null; } 2>&1 | tail -1)
		read -r w u sys r <<<"$out"
		bw=$(python3 -c "print(min($bw, $w))")
		bc=$(python3 -c "print(min($bc, $u + $sys))")
		pc=$(python3 -c "print(min($pc, $p))")
		[ "$r" -gt "$rss" ] && rss=$r
	done
	echo "$(stat -c %s "$s") $bw $bc $rss $pc"
}
report() { # LABEL SIZE WALL CPU RSS PARSER
	python3 - "$@" <<'PY'
import sys
label, size, wall, cpu, rss, parser = sys.argv[1], *map(float, sys.argv[2:])
mb = size / 1e6
print(f"{label}: {mb:.1f} MB; ergon parse {mb / wall:.0f} MB/s wall ({wall:.2f} s), "
      f"{mb / cpu:.0f} MB/s CPU ({cpu:.2f} s); parser alone {mb / parser:.0f} MB/s CPU "
      f"({parser:.3f} s); end to end / parser = {cpu / parser:.2f}x; peak RSS {rss / 1024:.1f} MiB")
PY
}
python3 "$here/gen_hpx_stream.py" "$tmp/full.hpx" --iterations "$iters" >/dev/null
python3 "$here/gen_hpx_stream.py" "$tmp/half.hpx" --iterations $((iters / 2)) >/dev/null
cat "$tmp/full.hpx" "$tmp/half.hpx" >/dev/null # page cache
read -r size wall cpu rss parser <<<"$(run "$tmp/full.hpx")"
report "4 x $iters x 400" "$size" "$wall" "$cpu" "$rss" "$parser"
read -r size wall cpu rss parser <<<"$(run "$tmp/half.hpx")"
report "4 x $((iters / 2)) x 400" "$size" "$wall" "$cpu" "$rss" "$parser"
