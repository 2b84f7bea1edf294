#!/usr/bin/env bash
# ergon report's "Energy per layer" chart past 60 layers (issue 33), drawn
# by headless Chromium: a real artifact (ergon profile --board sim --power
# --layer-energy) whose power.layers[] is replaced here by N synthetic
# layers (N = 37, 38, 61, 150, 256: the most marked segments), each with a
# known energy, U and estimate, their energies a permutation so that the
# sort is not the input order. For each N:
#   - every layer's bar is drawn (measured and estimated: N bars each,
#     every one inside the frame, at its category's place, at least 1 px
#     wide), and the table lists all N in the sorted order;
#   - the category names are every k-th layer of the sorted order (rank 0,
#     k, 2k, ...; no other name), the caption says so when k > 1, and k
#     is the smallest step at which two names never overlap: the names are
#     rotated 40 degrees, so names k categories apart (812 / N SVG units a
#     category: the 960-unit plot less its 78 + 70 margins) are
#     k x 812 / N x sin(40 deg) apart across their baselines, which must
#     hold a 14-unit line of the 11 px tick font (Chromium's box of a name
#     is 13.2 units high, checked below): k = ceil(14 / (812 / N x sin 40
#     deg)), by hand 1 at N = 37 (14.1 units apart), 2 at N = 38 (13.7)
#     and 61 (8.6), 5 at 150 (3.5), 7 at 256 (2.0);
#   - no two drawn names overlap, decided from Chromium's own boxes of the
#     names (getBBox, before the rotation) carried into one name's rotated
#     frame (tests/browser/report_layout.mjs);
#   - report_dom_check.py: every figure cell equals the artifact.
source "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
SRC=${ERGON_SOURCE_DIR:?}
HERE=$SRC/tests/functional
DRIVER=$SRC/tests/browser/report_layout.mjs
SHOTS=${ERGON_BUILD_DIR:?}/test-artifacts/report_layer_chart
mkdir -p "$SHOTS"
for t in node chromium; do
  command -v "$t" >/dev/null || { bad "$t is missing: run scripts/bootstrap.sh (this test needs a real browser)"; finish; }
done
[ -f "$SRC/tests/browser/node_modules/playwright-core/package.json" ] ||
  { bad "tests/browser/node_modules has no playwright-core: run scripts/bootstrap.sh"; finish; }
. "$HERE/browse_lib.sh"

expect 0 "profile with layer energy (virtual bench)" -- "$E" profile --board sim --power --layer-energy \
  --out "$TMP/prof" --quiet

for N in 37 38 61 150 256; do
  python3 - "$TMP/prof/summary.json" "$TMP/l$N.json" "$N" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
n = int(sys.argv[3])
ops = ["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "AVERAGE_POOL_2D"]
layers = []
for i in range(n):
    # A permutation of 1..n (37 is prime to every n here): distinct energies.
    e = 1e-7 * (1 + (i * 37) % n)
    layers.append({"index": i, "last_index": i, "op": ops[i % len(ops)], "kind": "measured",
                   "energy_j": e, "energy_U_j": 0.02 * e, "energy_U_known_j": 0.02 * e,
                   "median_energy_j": e, "median_interval_j": [e, e], "duration_s": 1e-4,
                   "power_w": e / 1e-4, "share": e / 1e-7 / (n * (n + 1) / 2),
                   "samples_median": 10.0, "inferences_used": 20, "resolved_alone": True,
                   "estimated_energy": {"energy_j": 0.9 * e, "kind": "estimated",
                                        "method": "the energy per inference split by the PMU stage's cycles",
                                        "measured_over_estimated": 1 / 0.9}})
a["power"]["layers"] = layers
json.dump(a, open(sys.argv[2], "w"))
PY
  expect 0 "report $N layers" -- "$E" report "$TMP/l$N.json" --out "$TMP/l$N.html"
  browse "$TMP/l$N.html" "l$N"
  python3 "$HERE/report_dom_check.py" "$TMP/l$N.dom" "$TMP/l$N.json" && ok "$N layers: DOM equals the artifact" ||
    bad "$N layers: DOM check"
  node "$DRIVER" "file://$TMP/l$N.html" >"$TMP/l$N.layout" 2>"$TMP/l$N.err" ||
    { bad "$N layers: the browser run failed"; head "$TMP/l$N.err"; }
  python3 - "$TMP/l$N.json" "$TMP/l$N.layout" "$TMP/l$N.dom" "$N" <<'PY' || fails=$((fails + 1))
import json, math, re, sys
a = json.load(open(sys.argv[1]))
d = json.load(open(sys.argv[2]))
dom = open(sys.argv[3], encoding="utf-8").read()
n = int(sys.argv[4])
bad = 0
def check(cond, what):
    global bad
    print(("ok   - " if cond else "FAIL - ") + "%d layers: %s" % (n, what))
    bad += 0 if cond else 1
check(not d.get("error") and not d["page_errors"], "the driver ran %s" % (d.get("error") or "")[:300])
L = a["power"]["layers"]
order = sorted(range(n), key=lambda k: -L[k]["energy_j"])
names = ["%d %s" % (L[k]["index"], L[k]["op"]) for k in order]
# The step by hand (see the header): 812 units over n categories.
cat = 812.0 / n
k = math.ceil(14.0 / (cat * math.sin(math.radians(40))) - 1e-9)
P = d["plots"]["a0-layer-energy"]
xc = P["xcat_boxes"]
drawn = [(r, b) for r, b in enumerate(xc) if b["text"]]
check(len(xc) == n, "one category slot per layer (%d)" % len(xc))
check([r for r, _ in drawn] == list(range(0, n, k)), "names at ranks 0, %d, 2 x %d, ... (k = %d by hand): %s" % (k, k, k, [r for r, _ in drawn][:8]))
check([b["text"] for _, b in drawn] == names[::k], "each name is its rank's layer, index and op")
# No overlap: name j's box carried into name i's frame (rotation about
# each name's own anchor): shifted by (dx cos t - dx, dx sin t) for an
# anchor dx to the right (t = 40 deg: SVG's rotate(-40) turned back).
def overlap(bi, bj):
    t = math.radians(-bi["angle"])
    dx, dy = bj["x"] - bi["x"], bj["y"] - bi["y"]
    ox = dx * math.cos(t) - dy * math.sin(t) - dx
    oy = dx * math.sin(t) + dy * math.cos(t) - dy
    x0, x1 = bj["bx"] + ox, bj["bx"] + bj["bw"] + ox
    y0, y1 = bj["by"] + oy, bj["by"] + bj["bh"] + oy
    return x0 < bi["bx"] + bi["bw"] and bi["bx"] < x1 and y0 < bi["by"] + bi["bh"] and bi["by"] < y1
pairs = [(drawn[i][1], drawn[j][1]) for i in range(len(drawn)) for j in range(i + 1, min(len(drawn), i + 4))]
hits = [(p[0]["text"], p[1]["text"]) for p in pairs if overlap(*p)]
check(all(abs(b["angle"] + 40) < 1e-9 for _, b in drawn), "every name rotated by -40 degrees")
check(not hits, "no two drawn names overlap (%d pairs; %s)" % (len(pairs), hits[:3]))
# k is the smallest such step: every (k - 1)-th name would overlap, as the
# browser measured the font (the boxes' height against the spacing).
if k > 1:
    h = min(b["bh"] for _, b in drawn)
    check((k - 1) * cat * math.sin(math.radians(40)) < 14.0 and h <= 14.0,
          "a step of %d would leave %.2f units across the baselines, under the 14-unit line (the browser's: %.2f)" % (k - 1, (k - 1) * cat * math.sin(math.radians(40)), h))
# Every name's box is inside the 14-unit line the rule allows for.
check(all(b["bh"] <= 14.0 for _, b in drawn), "the browser's name boxes are at most 14 units high (%.2f)" % max(b["bh"] for _, b in drawn))
# The bars: N measured and N estimated, each inside the frame, at its
# category's centre, at least 1 unit wide.
m = re.search(r'id="a0-layer-energy".*?</figure>', dom, re.S)
fig = m.group(0) if m else ""
frame = re.search(r'<rect class="frame" x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)"', fig)
fx0, fw = float(frame.group(1)), float(frame.group(2))
for cls, off in (("bars s0", -0.4), ("bars s1", 0.0)):
    pm = re.search(r'<path class="series %s"[^>]*d="([^"]*)"' % cls, fig)
    bars = re.findall(r"M([0-9.]+) [0-9.]+H([0-9.]+)V", pm.group(1)) if pm else []
    ok_place = all(abs((float(x0) + float(x1)) / 2 - (fx0 + (r + off + 0.2 + 0.5) * fw / n)) <= 0.11
                   and float(x1) - float(x0) >= 1.0 and fx0 <= float(x0) and float(x1) <= fx0 + fw
                   for r, (x0, x1) in enumerate(bars))
    check(len(bars) == n and ok_place, "%s: %d bars, each at its category, >= 1 unit wide, inside the frame" % (cls, len(bars)))
# The table: every layer, in the sorted order.
rows = [r for r in d["tables"].get("energy per layer and inference, measured between the marker edges, costliest first", [])][1:]
check([" ".join(r[:2]) for r in rows] == names, "the table lists all %d layers, costliest first (%d rows)" % (n, len(rows)))
cap = re.search(r'<p class="caption">(.*?)</p>', fig, re.S)
captext = cap.group(1) if cap else ""
if k > 1:
    nth = "%d%s" % (k, {1: "st", 2: "nd", 3: "rd"}.get(k % 10 if k % 100 not in (11, 12, 13) else 0, "th"))
    check("every %s;" % nth in captext, "the caption says every %s" % nth)
else:
    check("every" not in captext.split(";")[0], "the caption names every layer")
sys.exit(1 if bad else 0)
PY
done
finish
