#!/usr/bin/env bash
# `ergon parse` of a regular file is read in 1 MiB chunks that a second
# thread digests while the parser reads them; standard input goes through
# a read loop, digested nowhere. A 10 MB stream (many chunks, lines straddling their ends) must
# give the same outputs both ways, and the file's provenance.recording must
# carry the digest sha256sum computes and its size.
set -euo pipefail
: "${ERGON_BIN:?}" "${ERGON_SOURCE_DIR:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ergon-parse-stream-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
python3 "$ERGON_SOURCE_DIR/bench/gen_hpx_stream.py" "$tmp/s.hpx" --iterations 110 >/dev/null
size=$(stat -c %s "$tmp/s.hpx")
[ "$size" -gt $((8 << 20)) ] || { echo "stream too small: $size"; exit 1; }
"$ERGON_BIN" parse "$tmp/s.hpx" --out "$tmp/file" >/dev/null
"$ERGON_BIN" parse - --out "$tmp/stdin" <"$tmp/s.hpx" >/dev/null
for f in profile_results.csv profile_results_cpu.csv profile_results_memory.csv \
	profile_results_mve.csv; do
	cmp "$tmp/file/$f" "$tmp/stdin/$f"
done
want=$(sha256sum "$tmp/s.hpx" | cut -d' ' -f1)
python3 - "$tmp/file/summary.json" "$tmp/stdin/summary.json" "$want" "$size" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[2]))
rec = f["provenance"]["recording"]
assert rec["sha256"] == sys.argv[3], (rec, sys.argv[3])
assert rec["bytes"] == int(sys.argv[4]), rec
# stdin has no file to name: no digest, and the same profile otherwise
assert "sha256" not in s["provenance"]["recording"], s["provenance"]
assert f["profile"] == s["profile"]
# 4 presets x 400 layers of the generator, 110 iterations each
assert len(f["profile"]["layers"]) == 400, len(f["profile"]["layers"])
PY
# A missing log names itself.
if "$ERGON_BIN" parse "$tmp/none.hpx" --out "$tmp/x" 2>"$tmp/err"; then
	echo "parse of a missing file succeeded"; exit 1
fi
grep -q "none.hpx: cannot open the log" "$tmp/err"
echo "test_typed_parse_stream: ok"
