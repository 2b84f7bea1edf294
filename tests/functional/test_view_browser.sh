#!/usr/bin/env bash
# ergon view in a real browser (issue 34): Debian's Chromium driven by
# playwright-core (tests/browser/view_browser.mjs; scripts/bootstrap.sh
# installs both) loads each page kind offline, zooms, drags a selection
# and reads #selection-stats; every request the page makes is listed and
# none may leave it. Screenshots: $ERGON_BUILD_DIR/test-artifacts/view/.
#
# The recording is the one a user makes (`ergon record` from the PPK2
# simulator): 2.5 s at 100 kSPS, 1 mA, and 5 mA while the gate (D0) is high
# for samples [50000, 150000), at 3.0 V. Worked out by hand:
#   selection 0.5-1.5 s: 100000 samples x 5 mA / 100 kHz = 5 mC, 15 mJ;
#   selection [t0, t1): 1 mA x (time outside [0.5, 1.5)) + 5 mA x (time
#   inside), x 3.0 V for the energy;
#   the second recording (gate [0.8, 1.8) s at 4 mA) is shifted by -0.3 s
#   so that both first gate edges line up, and the same selection holds
#   its whole gate window: 4 mC.
# The PPK2 decodes 5 mA as 5.000211 mA (its ADC's step): figures are
# compared with a relative 1e-4 band for that, and with the reference JLS
# library's own mean over the selection's samples (jls_dump) to 1e-6.
. "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
SIM=${ERGON_BUILD_DIR:?}/ergon_ppk2_sim
REF=${ERGON_SHARED_DIR:?}/tools/jls-ref
SRC=${ERGON_SOURCE_DIR:?}
DRIVER=$SRC/tests/browser/view_browser.mjs
SHOTS=$ERGON_BUILD_DIR/test-artifacts/view
mkdir -p "$SHOTS"
for t in node /usr/bin/chromium; do
  command -v "$t" >/dev/null || { bad "$t is missing: run scripts/bootstrap.sh (this test needs a real browser)"; finish; }
done
[ -f "$SRC/tests/browser/node_modules/playwright-core/package.json" ] ||
  { bad "tests/browser/node_modules has no playwright-core: run scripts/bootstrap.sh"; finish; }
[ -x "$REF/jls_dump" ] || { bad "$REF/jls_dump is missing (../shared/tools/jls-ref)"; finish; }
echo "screenshots: $SHOTS"

record() { # record OUT DELAY_S BURST_A: 2.5 s from the PPK2 simulator
  coproc SIMP { exec "$SIM" --current-a 0.001 --burst-a "$3" --gate-at-start \
    --gate-delay-s "$2" --gate-s 1.0 --fast; }
  local pid=$SIMP_PID port
  read -r port <&"${SIMP[0]}"
  "$E" record --instrument "ppk2:$port" --instrument-opt vdd_mv=3000 --duration-s 2.5 \
    --out "$1" >"$TMP/rec.out" 2>"$TMP/rec.err" || { bad "ergon record $1"; cat "$TMP/rec.err"; }
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}
browse() { # browse NAME URL [DRIVER ARGS]: the driver's JSON in $TMP/NAME.json
  local name=$1 url=$2
  shift 2
  if node "$DRIVER" "$url" --shot "$SHOTS/$name.png" "$@" >"$TMP/$name.json" 2>"$TMP/$name.err"; then
    ok "$name: loaded in Chromium, screenshot $SHOTS/$name.png"
  else
    bad "$name: the browser run failed"; head -30 "$TMP/$name.json" "$TMP/$name.err"
  fi
}
ref_mean() { # ref_mean FILE SIGNAL_ID S0 N: the reference library's mean over [S0, S0+N)
  "$REF/jls_dump" "$1" "$2" "$3" "$4" 1 2>/dev/null | tail -1
}

record "$TMP/a.jls" 0.5 0.005
record "$TMP/b.jls" 0.8 0.004
expect 0 "analyze A" -- "$E" analyze --jls "$TMP/a.jls" --out "$TMP/an_a"
expect 0 "analyze B" -- "$E" analyze --jls "$TMP/b.jls" --out "$TMP/an_b"

# 1. One recording with its summary: the fragment's selection, a drag, a zoom.
expect 0 "view A" -- "$E" view "$TMP/a.jls" --summary "$TMP/an_a/summary.json" --out "$TMP/a.html"
contains "$OUT" "wrote $TMP/a.html (1 recording)" "view says what it wrote"
browse single "file://$TMP/a.html" --fragment '#t0=0.5&t1=1.5' --drag 0.3 0.7 --zoom-at 1.0
python3 - "$TMP/single.json" "$(ref_mean "$TMP/a.jls" 1 50000 100000)" \
  "$(ref_mean "$TMP/a.jls" 3 50000 100000)" "$TMP/a.jls" "$REF/jls_dump" <<'EOF' || fails=$((fails + 1))
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
ref_i, ref_p = float(sys.argv[2]), float(sys.argv[3])
jls, dump = sys.argv[4], sys.argv[5]
bad = 0
def check(cond, what):
    global bad
    print(("ok   - " if cond else "FAIL - ") + what)
    bad += 0 if cond else 1
def near(a, b, rel):
    return abs(a - b) <= rel * abs(b)
check(not d.get("error"), "single: the driver ran (%s)" % d.get("error", "")[:200])
check(d["escaped"] == [], "single: no request left the page (%d made: %s)" % (len(d["requests"]), d["requests"][:3]))
check(d["console_errors"] == [] and d["page_errors"] == [], "single: no console or page error %s" % (d["console_errors"] + d["page_errors"]))
s = d["fragment_stats"]["section"]
res = s["resolution-s"]
check(s["state"] == "ok" and s["t0-s"] == 0.5 and s["t1-s"] == 1.5 and s["samples"] == 100000,
      "#t0=0.5&t1=1.5 selects 0.5-1.5 s: samples [50000, 150000) (%s..%s, %s samples)" % (s["t0-s"], s["t1-s"], s["samples"]))
check(s["bin-samples"] == 10 and res == 1e-4, "the selection level is stated: bins of 10 samples, 100 us (%s, %s)" % (s["bin-samples"], res))
# By hand: 5 mC, within the level's resolution (one bin's worth of the
# largest current at the edges: 5 mA x 100 us = 0.5 uC).
q = s["charge-c"]
check(abs(q - 5e-3) <= s["max-current-a"] * res, "charge %.9g C is 5 mC within one bin of 5 mA (%.3g C)" % (q, s["max-current-a"] * res))
check(near(q, 5e-3, 1e-4) and near(s["energy-j"], 15e-3, 1e-4), "charge 5 mC and energy 15 mJ by hand (PPK2 step: 1e-4)")
check(near(q, ref_i * 1.0, 1e-6), "charge = the reference library's mean current x 1 s (%.9g vs %.9g)" % (q, ref_i))
check(near(s["energy-j"], ref_p * 1.0, 1e-6), "energy = the reference library's mean power x 1 s (%.9g vs %.9g)" % (s["energy-j"], ref_p))
check(near(s["min-current-a"], 5e-3, 1e-4) and near(s["max-current-a"], 5e-3, 1e-4) and near(s["mean-voltage-v"], 3.0, 1e-6),
      "min = max = 5 mA, 3.0 V in the gate window")
check(s["dt-s"] == 1.0 and s["lost-samples"] == 0, "dt 1 s, no lost sample")
# The drag: Shift+drag from 0.3 s to 0.7 s; the page reports the snapped range.
g = d["drag_stats"]["section"]
t0, t1 = g["t0-s"], g["t1-s"]
px = 2.5 / (1280 - 16 - 84 - 14)  # seconds per pixel at the full view (page width - margins)
check(abs(t0 - 0.3) <= 2 * px and abs(t1 - 0.7) <= 2 * px, "the drag selected %.6f..%.6f s (0.3..0.7 within 2 px)" % (t0, t1))
inside = max(0.0, min(t1, 1.5) - max(t0, 0.5))
q_hand = 1e-3 * ((t1 - t0) - inside) + 5e-3 * inside
check(near(g["charge-c"], q_hand, 1e-4), "drag: charge %.9g C = 1 mA x %.5f s + 5 mA x %.5f s by hand (%.9g)" % (g["charge-c"], t1 - t0 - inside, inside, q_hand))
check(near(g["energy-j"], 3.0 * q_hand, 1e-4), "drag: energy = 3.0 V x the charge by hand")
check(g["min-current-a"] < 1.001e-3 and g["max-current-a"] > 4.999e-3, "drag: min 1 mA, max 5 mA across the gate edge")
s0, n = round(t0 * 1e5), round((t1 - t0) * 1e5)
ref = float(subprocess.check_output([dump, jls, "1", str(s0), str(n), "1"], text=True).split()[-1])
check(near(g["charge-c"], ref * n / 1e5, 1e-6), "drag: charge = the reference library's mean over [%d, %d) (%.9g)" % (s0, s0 + n, ref * n / 1e5))
check(d["hash"].startswith("#t0=0.3") or d["hash"].startswith("#t0=0.29"), "the URL fragment follows the selection (%s)" % d["hash"])
z = d["zoom"]
b, a = z["before"], z["after"]
check(a["v1"] - a["v0"] < (b["v1"] - b["v0"]) / 2 and a["v0"] < 1.0 < a["v1"], "a wheel zoom at 1.0 s narrows the view around it (%s)" % a)
print("single: first draw %.0f ms after navigation, redraw after zoom %.1f ms" % (d["load"]["first_draw_ms"], z["redraw_ms"]))
sys.exit(1 if bad else 0)
EOF

# 2. Two recordings side by side, aligned on their first gate edge.
expect 0 "view A and B" -- "$E" view "$TMP/a.jls" --summary "$TMP/an_a/summary.json" "$TMP/b.jls" \
  --summary "$TMP/an_b/summary.json" --out "$TMP/ab.html"
browse side_by_side "file://$TMP/ab.html" --fragment '#t0=0.5&t1=1.5'
python3 - "$TMP/side_by_side.json" <<'EOF' || fails=$((fails + 1))
import json, sys
d = json.load(open(sys.argv[1]))
bad = 0
def check(cond, what):
    global bad
    print(("ok   - " if cond else "FAIL - ") + what)
    bad += 0 if cond else 1
check(not d.get("error") and d["escaped"] == [] and not d["console_errors"] and not d["page_errors"],
      "side by side: loaded, no request left, no error")
recs = d["load"]["recordings"]
check(len(recs) == 2 and abs(recs[1]["shift_s"] + 0.3) < 1e-12, "B is shifted by -0.3 s (%s)" % [r["shift_s"] for r in recs])
a, b = d["fragment_stats"]["recordings"]
check(a["samples"] == 100000 and abs(a["charge-c"] - 5e-3) <= 5e-7, "A: 0.5-1.5 s holds 5 mC (%.9g)" % a["charge-c"])
check(b["t0-s"] == 0.5 and b["samples"] == 100000 and abs(b["charge-c"] - 4e-3) <= 4e-7,
      "B: the same selection is B's own gate window [0.8, 1.8) s: 4 mC (%.9g)" % b["charge-c"])
check("aligned on the summary's first gate window" in d["notes_text"], "the page says how B was aligned")
sys.exit(1 if bad else 0)
EOF

# 3. A summary with layer markers (power.layers[], as per-layer energy
# writes them) and ignored gate pulses: drawn, no error.
python3 - "$TMP/an_a/summary.json" "$TMP/layers.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["power"]
p["layers"] = [{"index": i, "name": "conv_%d" % i, "op": "CONV_2D", "start_s": 0.5 + 0.1 * i,
                "end_s": 0.6 + 0.1 * i, "energy_j": 1.5e-3} for i in range(10)]
p["gate"]["glitches"] = [{"start_s": 2.0, "duration_s": 2e-5}]
p["short_gate_pulses_ignored"] = 1
json.dump(d, open(sys.argv[2], "w"))
EOF
expect 0 "view with layers" -- "$E" view "$TMP/a.jls" --summary "$TMP/layers.json" --out "$TMP/layers.html"
browse layers.out "file://$TMP/layers.html" --fragment '#t0=0.45&t1=1.55'
python3 - "$TMP/layers.html" <<'EOF' || fails=$((fails + 1))
import json, re, sys
page = open(sys.argv[1]).read()
data = json.loads(re.search(r'<script type="application/json" id="ergon-view-data">(.*?)</script>', page, re.S).group(1))
s = data["recordings"][0]["summary"]
ok = len(s["layers"]) == 10 and s["layers"][3]["name"] == "conv_3" and len(s["ignored_pulses"]) == 1
print(("ok   - " if ok else "FAIL - ") + "layers: 10 layer markers and 1 ignored pulse embedded")
sys.exit(0 if ok else 1)
EOF
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if not d.get("error") and d["escaped"]==[] and not d["page_errors"] and not d["console_errors"] else 1)' \
  "$TMP/layers.out.json" && ok "layers: loaded, no request left, no error" || bad "layers: browser run"

# 4. Bad input: a clear error naming the input, no page.
expect 3 "a missing recording" -- "$E" view "$TMP/none.jls" --out "$TMP/x.html"
contains "$ERR" "$TMP/none.jls" "the error names the missing recording"
printf 'not json' >"$TMP/bad.json"
expect 3 "a summary that is not JSON" -- "$E" view "$TMP/a.jls" --summary "$TMP/bad.json" --out "$TMP/x.html"
contains "$ERR" "$TMP/bad.json:1:" "the error names the summary and the place"
expect 2 "three recordings" -- "$E" view "$TMP/a.jls" "$TMP/a.jls" "$TMP/a.jls" --out "$TMP/x.html"
expect 2 "--summary before a recording" -- "$E" view --summary "$TMP/an_a/summary.json" "$TMP/a.jls" --out "$TMP/x.html"
expect 3 "an existing page without --force" -- "$E" view "$TMP/a.jls" --out "$TMP/a.html"
[ -e "$TMP/x.html" ] && bad "a page was written for bad input" || ok "no page for bad input"
finish
