#!/usr/bin/env bash
# Compare `ergon parse` of two builds, byte for byte: every output file
# (summary.json, every CSV), stdout, stderr (with the --out folder's name
# replaced) and the exit status, for median, mean and trimmed.
#   bench/cmp_parse_bins.sh OLD_ERGON NEW_ERGON LOG...
# e.g. OLD = a copy of main's build-rel/ergon, LOG = the reference stream
# (gen_hpx_stream.py --reference), ../shared/fixtures/hpx/*.hpx.txt and
# the streams of bench/gen_hpx_odd.py. Exit 1 when any run differs.
set -uo pipefail
if [ $# -lt 3 ]; then
  echo "usage: bench/cmp_parse_bins.sh OLD_ERGON NEW_ERGON LOG..." >&2
  exit 2
fi
old=$(realpath "$1") new=$(realpath "$2")
shift 2
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
n=0 bad=0
for f in "$@"; do
  f=$(realpath "$f")
  for a in median mean trimmed; do
    for v in old new; do
      b=$old
      [ $v = new ] && b=$new
      (cd "$w" && "$b" parse "$f" --aggregation $a --out "$w/o_$v" >"$w/out_$v" 2>"$w/err_$v"
       echo $? >"$w/rc_$v")
      sed -i "s|$w/o_$v|OUTDIR|g" "$w/out_$v" "$w/err_$v"
    done
    n=$((n + 1))
    if ! diff -r "$w/o_old" "$w/o_new" >/dev/null 2>&1 || ! cmp -s "$w/out_old" "$w/out_new" ||
       ! cmp -s "$w/err_old" "$w/err_new" || ! cmp -s "$w/rc_old" "$w/rc_new"; then
      bad=$((bad + 1))
      echo "differs: $f --aggregation $a"
    fi
    rm -rf "$w/o_old" "$w/o_new"
  done
done
echo "cmp_parse_bins: $n runs, $bad differ"
[ $bad -eq 0 ]
