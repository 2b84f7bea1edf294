#!/usr/bin/env bash
# ergon view --serve in a real browser (issue 34): Debian's Chromium driven
# by playwright-core (tests/browser/view_browser.mjs --served) opens the
# served page, waits for the selection's exact figures from the server,
# zooms in past the embedded bins and checks that the page fetched and
# drew the finer tile. Every request must go to the server, with the token.
#
# The recording: `ergon record` from the PPK2 simulator, 2.5 s at 100 kSPS,
# 1 mA, 5 mA while the gate is high for samples [50000, 150000), 3.0 V.
# The page embeds bins of 1000 samples (--max-bins 1000: 250 bins).
# Worked out by hand: #t0=0.4995&t1=0.5005 is samples [49950, 50050),
# 50 at 1 mA and 50 at 5 mA: 100 samples, 3 uC, 9 uJ, min 1 mA, max 5 mA
# (the embedded bins alone would give [50000, 51000): 50 uC). A view of
# 0.4999..0.5001 s (20 samples) is drawn from a tile of level 0 (samples).
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

coproc SIMP { exec "$SIM" --current-a 0.001 --burst-a 0.005 --gate-at-start \
  --gate-delay-s 0.5 --gate-s 1.0 --fast; }
read -r port <&"${SIMP[0]}"
"$E" record --instrument "ppk2:$port" --instrument-opt vdd_mv=3000 --duration-s 2.5 \
  --out "$TMP/a.jls" >"$TMP/rec.out" 2>"$TMP/rec.err" || { bad "ergon record"; cat "$TMP/rec.err"; }
kill "$SIMP_PID" 2>/dev/null
wait "$SIMP_PID" 2>/dev/null

"$E" view "$TMP/a.jls" --serve --max-bins 1000 >"$TMP/srv.out" 2>"$TMP/srv.err" &
SERVER=$!
URL=""
for _ in $(seq 1 600); do # only against a hang: nothing is asserted on the time
  URL=$(sed -n 's/^  \(http:.*\)$/\1/p' "$TMP/srv.out")
  [ -n "$URL" ] && break
  kill -0 "$SERVER" 2>/dev/null || break
  sleep 0.1
done
[ -n "$URL" ] || { bad "ergon view --serve printed no URL"; cat "$TMP/srv.out" "$TMP/srv.err"; finish; }
ORIGIN=${URL%%/\?*}
if node "$DRIVER" "$URL" --allow "$ORIGIN" --fragment '#t0=0.4995&t1=0.5005' --served 0.4999 0.5001 \
  --shot "$SHOTS/served.png" >"$TMP/served.json" 2>"$TMP/served.err"; then
  ok "the served page loaded in Chromium, screenshots $SHOTS/served.png, served-zoom.png"
else
  bad "the browser run failed"; head -30 "$TMP/served.json" "$TMP/served.err"
fi
REF_MEAN=$("$REF/jls_dump" "$TMP/a.jls" 1 49950 100 1 2>/dev/null | tail -1)
python3 - "$TMP/served.json" "$ORIGIN" "${URL##*token=}" "$REF_MEAN" <<'EOF' || fails=$((fails + 1))
import json, sys
d = json.load(open(sys.argv[1]))
origin, token, ref_mean = sys.argv[2], sys.argv[3], float(sys.argv[4])
bad = 0
def check(cond, what):
    global bad
    print(("ok   - " if cond else "FAIL - ") + what)
    bad += 0 if cond else 1
def near(a, b, rel):
    return abs(a - b) <= rel * abs(b)
check(not d.get("error"), "the driver ran (%s)" % str(d.get("error", ""))[:300])
check(d["escaped"] == [] and all(u.startswith(origin + "/") and ("token=" + token) in u for u in d["requests"]),
      "every request went to the server with the token (%d: %s)" % (len(d["requests"]), [u[len(origin):60] for u in d["requests"]]))
check(d["console_errors"] == [] and d["page_errors"] == [], "no console or page error %s" % (d["console_errors"] + d["page_errors"]))
s = d["served_stats"]["section"]
check(s["source"] == "server" and s["bin-samples"] == 1 and s["resolution-s"] == 1e-5,
      "the selection's figures came from the server at full resolution (%s, %s samples a bin)" % (s.get("source"), s.get("bin-samples")))
check(s["samples"] == 100 and s["t0-s"] == 0.4995 and s["t1-s"] == 0.5005,
      "#t0=0.4995&t1=0.5005 is samples [49950, 50050), edges on samples (%s samples)" % s["samples"])
# By hand: 50 x 1 mA + 50 x 5 mA over 100 kHz = 3 uC (PPK2 step: 1e-4).
check(near(s["charge-c"], 3e-6, 1e-4) and near(s["energy-j"], 9e-6, 1e-4),
      "charge %.9g C = 3 uC, energy %.9g J = 9 uJ by hand" % (s["charge-c"], s["energy-j"]))
check(near(s["charge-c"], ref_mean * 100 / 1e5, 1e-6), "charge = the reference library's mean over [49950, 50050) x 1 ms (%.9g)" % (ref_mean * 1e-3))
check(near(s["min-current-a"], 1e-3, 1e-4) and near(s["max-current-a"], 5e-3, 1e-4), "min 1 mA, max 5 mA across the edge")
check("exact at full resolution" in d["served_stats_text"], "the page says the figures are exact at full resolution")
z = d["served_zoom"]
tiles = [t for t in z["tiles"] if t["level"] == 0 and t["entry_samples"] == 1]
check(any(t["start"] <= 49990 and t["start"] + t["count"] >= 50010 for t in tiles),
      "zoomed to 0.4999..0.5001 s it fetched a tile of samples covering [49990, 50010) (%s)" % z["tiles"])
check(z["drawn_from"] == [{"source": "server", "level": 0, "entry_samples": 1}],
      "the zoomed view is drawn from that tile, not the embedded 1000-sample bins (%s)" % z["drawn_from"])
check(z["fetch_errors"] == [], "no fetch failed %s" % z["fetch_errors"])
sys.exit(1 if bad else 0)
EOF
kill -INT "$SERVER"
wait "$SERVER" && ok "SIGINT: the server exits 0" || bad "the server did not exit 0"
finish
