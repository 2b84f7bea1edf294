#!/usr/bin/env bash
# `ergon view` on a 60 s, 100 kSPS recording (6,000,000 samples) in
# headless Chromium (issue 34): the time to the first draw (from the
# navigation start, so the page's parse, the data's decode, the pyramid
# and the draw) and the redraw after a wheel zoom (from the wheel event to
# the end of the draw it caused), measured in the page by
# tests/browser/view_browser.mjs. Baseline, in the same run: the load
# event of a blank page in the same browser setup (the browser's own floor).
# Also the time `ergon view` takes to write the page. The recording comes
# from ergon's JLS writer on a signal that changes every sample
# (ergon_jls_synth: every pixel column holds a full min..max band, the
# worst case for drawing).
#   bench/bench_view.sh BUILD_DIR [REPEATS]
set -euo pipefail
build=${1:?usage: bench_view.sh BUILD_DIR [REPEATS]}
reps=${2:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
driver=$here/tests/browser/view_browser.mjs
[ -f "$here/tests/browser/node_modules/playwright-core/package.json" ] ||
  { echo "bench_view: run scripts/bootstrap.sh (tests/browser needs playwright-core)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$build/ergon_jls_synth" "$tmp/60s.jls" 6000000 >/dev/null
t0=$(date +%s.%N)
"$build/ergon" view "$tmp/60s.jls" --out "$tmp/60s.html" >/dev/null
t1=$(date +%s.%N)
echo "ergon view: $(echo "$t1 - $t0" | bc) s to write $(stat -c %s "$tmp/60s.html") bytes"
printf '<!DOCTYPE html><title>blank</title>\n' >"$tmp/blank.html"
for i in $(seq "$reps"); do
  node "$driver" "file://$tmp/blank.html" --baseline 1 >"$tmp/blank.json"
  node "$driver" "file://$tmp/60s.html" --zoom-at 30 >"$tmp/run.json"
  python3 - "$tmp/run.json" "$tmp/blank.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))["baseline_load_ms"]
f = d["load"]["first_draw_ms"]
print("run: first draw %.0f ms (draw itself %.1f ms; blank page's load %.0f ms, ratio %.1f), "
      "zoom redraw %.1f ms (draw %.1f ms), requests escaped %d"
      % (f, d["load"]["first_draw_cost_ms"], b, f / b, d["zoom"]["redraw_ms"],
         d["zoom"]["draw_cost_ms"], len(d["escaped"])))
EOF
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
