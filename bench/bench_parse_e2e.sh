#!/usr/bin/env bash
# `ergon parse` end to end (read, parse, aggregate, digest, write
# summary.json and the CSVs) against the parser alone (bench_hpx_parse: the
# same stream through the parser in 64 KiB reads, one thread, no output), in
# the same run, interleaved, best of REPEATS each.
#   bench/bench_parse_e2e.sh BUILD_DIR [REPEATS]
# Streams (bench/gen_hpx_stream.py): issue 16's reference stream (4 presets
# x 1530 iterations x 400 layers, 99,981,419 bytes), and the same counters
# with twice and four times the iterations, to show peak RSS against stream
# size (flat: the samples of a preset go to a spill file in --out).
# Reports MB/s (10^6 bytes) of wall time and of CPU time (user + system of
# the whole process, every thread included) for both, their ratios (of the
# bests, and the median of each round's own wall ratio), and
# peak RSS. The parser alone runs on one thread, so its wall and CPU times
# agree on an idle host; `ergon parse` uses three threads (reader + digest,
# parser, aggregation), so its wall time is the one the goal is about and
# its CPU time is the work it does.
set -euo pipefail
build=${1:?usage: bench_parse_e2e.sh BUILD_DIR [REPEATS]}
reps=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ergon-e2e-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
model="--pad -1 --min-count 100 --max-count 118560"
min() { python3 -c "import sys; print(min(map(float, sys.argv[1:])))" "$@"; }
run() { # STREAM -> "size e2e_wall e2e_cpu peak_rss_kb parser_cpu parser_wall"
	local s=$1 ws=() cs=() pcs=() pws=() rss=0 out w u sys r
	for _ in $(seq "$reps"); do
		pcs+=("$("$build/bench/bench_hpx_parse" "$s" 1 | sed -n 's/.*(\([0-9.]*\) s, best of 1).*/\1/p')")
		pws+=("$(ERGON_BENCH_CLOCK=wall "$build/bench/bench_hpx_parse" "$s" 1 |
			sed -n 's/.*(\([0-9.]*\) s, best of 1).*/\1/p')")
		rm -rf "$tmp/out"
		# Wall time to the millisecond from bash's own `time` (time(1)'s %e
		# has 10 ms steps, 3 % of the reference stream's time); it includes
		# starting time(1), which writes CPU times and peak RSS to a file.
		w=$( { TIMEFORMAT=%3R
			time /usr/bin/time -f "%e %U %S %M" -o "$tmp/rusage" "$build/ergon" parse \
				"$s" --out "$tmp/out" >/dev/null 2>&1; } 2>&1)
		read -r _ u sys r <"$tmp/rusage"
		ws+=("$w")
		cs+=("$(python3 -c "print($u + $sys)")")
		[ "$r" -gt "$rss" ] && rss=$r
	done
	# The median, over the rounds, of each round's e2e wall time over the
	# parser's just before it: the host's speed drifts by 10-20 % over
	# seconds, and a ratio of neighbours drifts less than one of two bests.
	local pair
	pair=$(python3 -c "import sys, statistics as st; n = len(sys.argv) // 2; \
print(st.median(float(a) / float(b) for a, b in zip(sys.argv[1:n + 1], sys.argv[n + 1:])))" \
		"${ws[@]}" "${pws[@]}")
	echo "$(stat -c %s "$s") $(min "${ws[@]}") $(min "${cs[@]}") $rss $(min "${pcs[@]}") $(min "${pws[@]}") $pair"
}
report() { # LABEL SIZE WALL CPU RSS PARSER_CPU PARSER_WALL PAIR_RATIO
	python3 - "$@" <<'PY'
import sys
label, size, wall, cpu, rss, pcpu, pwall, pair = sys.argv[1], *map(float, sys.argv[2:])
mb = size / 1e6
print(f"{label}: {size:.0f} B; ergon parse {mb / wall:.0f} MB/s wall ({wall:.3f} s), "
      f"{mb / cpu:.0f} MB/s CPU ({cpu:.2f} s); parser alone {mb / pwall:.0f} MB/s wall "
      f"({pwall:.3f} s), {mb / pcpu:.0f} MB/s CPU ({pcpu:.3f} s); end to end / parser: "
      f"wall {wall / pwall:.2f}x (median of the rounds' own ratios {pair:.2f}x), "
      f"CPU {cpu / pcpu:.2f}x; peak RSS {rss / 1024:.1f} MiB")
PY
}
python3 "$here/gen_hpx_stream.py" "$tmp/ref.hpx" --reference >/dev/null
[ "$(stat -c %s "$tmp/ref.hpx")" -eq 99981419 ] || { echo "reference stream is not 99,981,419 B"; exit 1; }
# shellcheck disable=SC2086
python3 "$here/gen_hpx_stream.py" "$tmp/double.hpx" $model --iterations 3060 >/dev/null
# shellcheck disable=SC2086
python3 "$here/gen_hpx_stream.py" "$tmp/quad.hpx" $model --iterations 6120 >/dev/null
cat "$tmp/ref.hpx" "$tmp/double.hpx" "$tmp/quad.hpx" >/dev/null # page cache
for s in ref double quad; do
	case $s in ref) label="reference 4 x 1530 x 400" ;; double) label="4 x 3060 x 400" ;;
	quad) label="4 x 6120 x 400" ;; esac
	read -r size wall cpu rss pcpu pwall pair <<<"$(run "$tmp/$s.hpx")"
	report "$label" "$size" "$wall" "$cpu" "$rss" "$pcpu" "$pwall" "$pair"
done
