#!/usr/bin/env bash
# ergon report reads at a glance (issue 34), checked in Chromium as drawn
# (tests/browser/report_layout.mjs: playwright-core driving Debian's
# chromium): a headline first (energy per operation or inference ± U,
# integrity, date) and the issues before the figures; latency on a log
# axis whose ticks sit where log10 puts them, with percentile labels that
# never overlap; the power and throughput plots on one time origin; the
# per-layer chart sorted, named by op, with the emulated instruction count
# when that is what was measured; table keys as words. The artifacts are
# real ones (ergon run, ergon profile --power) with the fields under test
# set here to values whose rendering is worked out by hand below.
source "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
SRC=${ERGON_SOURCE_DIR:?}
HERE=$SRC/tests/functional
DRIVER=$SRC/tests/browser/report_layout.mjs
for t in node /usr/bin/chromium; do
  command -v "$t" >/dev/null || { bad "$t is missing: run scripts/bootstrap.sh (this test needs a real browser)"; finish; }
done
[ -f "$SRC/tests/browser/node_modules/playwright-core/package.json" ] ||
  { bad "tests/browser/node_modules has no playwright-core: run scripts/bootstrap.sh"; finish; }

expect 0 "run (synthetic, throttled)" -- "$E" run --device d --workload builtin:spin --idle-s 0.3 --windows 4 \
  --window-s 0.3 --instrument-opt throttle_s=0.6 --out "$TMP/run.json"
expect 0 "profile with power (virtual bench)" -- "$E" profile --board sim --power --out "$TMP/prof"

# The latencies: 90 invocations of 2 ms and 10 of 400 ms. By hand (nearest
# rank over 100): p50 = p90 = 2 ms (ranks 50, 90), p95 = p99 = 400 ms.
python3 - "$TMP/run.json" "$TMP/lat.json" <<'EOF'
import json, sys
a = json.load(open(sys.argv[1]))
inv = a["series"]["invocations"]
n = 100
lat = [0.002] * 90 + [0.4] * 10
for k in list(inv):
    if isinstance(inv[k], list) and len(inv[k]) == len(inv["latency_s"]):
        inv[k] = inv[k][:1] * n
inv["latency_s"] = lat
inv["failed_index"] = []
# The throttle onset at the start of window 1 (the synthetic throttle's own
# onset depends on this host's timing).
th = a["figures"]["throughput"]
th["onset_window"] = 1
th["onset_t_s"] = th["windows"][1]["t_start_s"]
a["figures"]["latency"].update({"count": n, "min_s": 0.002, "max_s": 0.4, "p50_s": 0.002,
                                "p90_s": 0.002, "p95_s": 0.4, "p99_s": 0.4})
json.dump(a, open(sys.argv[2], "w"))
EOF
expect 0 "report the run" -- "$E" report "$TMP/lat.json" --out "$TMP/run.html"
node "$DRIVER" "file://$TMP/run.html" >"$TMP/run.layout" 2>"$TMP/run.err" || { bad "the browser run failed"; head "$TMP/run.err"; }

python3 - "$TMP/run.layout" "$TMP/lat.json" <<'EOF' || fails=$((fails + 1))
import json, math, sys
d = json.load(open(sys.argv[1]))
a = json.load(open(sys.argv[2]))
bad = 0
def check(cond, what):
    global bad
    print(("ok   - " if cond else "FAIL - ") + what)
    bad += 0 if cond else 1
check(not d.get("error"), "the driver ran %s" % d.get("error", "")[:300])
check(d["escaped"] == [] and not d["page_errors"] and not d["console_errors"],
      "no request left the page, no error (%s %s)" % (d["escaped"][:2], d["page_errors"][:2]))
P = d["plots"]
# 1. Latency on a log axis: between 2 and 400 ms a tick at T ms sits at
#    log10(T/2) / log10(400/2) of the frame's width (20 ms: 0.4346, 200 ms:
#    0.8692; on a linear axis 20 ms would be at 0.0452).
h = P["a0-latency-hist"]
check(h["xscale"] == "log" and P["a0-latency-cdf"]["xscale"] == "log", "histogram and CDF: log x axis")
f = h["frame"]
ticks = {t["text"]: (t["x"] - f["x0"]) / (f["x1"] - f["x0"]) for t in h["xticks"]}
check(set(["2", "5", "10", "20", "50", "100", "200"]) <= set(ticks), "ticks at 1, 2, 5 x 10^k from 2 to 400 ms (%s)" % sorted(ticks, key=float))
for t in ("20", "200"):
    want = math.log10(float(t) / 2) / math.log10(200)
    check(t in ticks and abs(ticks[t] - want) < 1.5 / (f["x1"] - f["x0"]) + 0.002,
          "tick %s ms at %.4f of the width (log10 by hand: %.4f)" % (t, ticks.get(t, -1), want))
check("log scale" in h["xlabel"], "the axis says log scale (%s)" % h["xlabel"])
# 2. The four percentile labels: all drawn, none overlapping another.
for pid in ("a0-latency-hist", "a0-latency-cdf", "a0-power", "a0-throughput"):
    L = P[pid]["labels"]
    over = [(p["text"], q["text"]) for i, p in enumerate(L) for q in L[i + 1:]
            if p["x0"] < q["x1"] and q["x0"] < p["x1"] and p["y0"] < q["y1"] and q["y0"] < p["y1"]]
    check(over == [], "%s: %d labels drawn, none overlapping %s" % (pid, len(L), over[:3]))
texts = [l["text"] for l in P["a0-latency-hist"]["labels"]]
check(sorted(t.split()[0] for t in texts) == ["p50", "p90", "p95", "p99"] and P["a0-latency-hist"]["hidden_labels"] == 0,
      "p50 and p90 (both 2 ms), p95 and p99 (both 400 ms) all labelled: %s" % texts)
check("p50 2 ms" in texts and "p99 400 ms" in texts, "the labels give the values (%s)" % texts)
# 3. One time origin: the power and throughput plots share the x axis; the
#    throttle onset (load start + onset_t_s) is at the same pixel in both.
pw, tp = P["a0-power"], P["a0-throughput"]
check(pw["xlabel"] == tp["xlabel"] == "time since the idle baseline started (s)", "one x label: %s / %s" % (pw["xlabel"], tp["xlabel"]))
check(pw["frame"]["x0"] == tp["frame"]["x0"] and pw["frame"]["x1"] == tp["frame"]["x1"], "the two frames line up")
def mark_x(p, word):
    xs = [m["x"] for m in p["marks"] if word in m["title"]]
    return xs[0] if xs else None
on_p, on_t = mark_x(pw, "throttle onset"), mark_x(tp, "throttle onset")
check(on_p is not None and on_t is not None and abs(on_p - on_t) < 0.6,
      "the throttle onset at the same pixel in both (%s, %s)" % (on_p, on_t))
t0 = a["series"]["phases"]["load"]["t_start_s"] + a["figures"]["throughput"]["onset_t_s"]
tt = {t["text"]: t["x"] for t in tp["xticks"]}
ts = sorted((float(k), v) for k, v in tt.items())
(ta, xa), (tb, xb) = ts[0], ts[-1]
want = xa + (t0 - ta) / (tb - ta) * (xb - xa)
check(on_t is not None and abs(on_t - want) < 1.0, "the onset line at t = %.4f s on the shared axis (%.1f px, by the ticks %.1f px)" % (t0, on_t or -1, want))
# 4. The headline first, the issues before the figures.
o = d["order"]
check(o.index("headline") < o.index("banner:digest"), "the headline before the status banners (%s)" % o[:6])
check(o.index("issues") < o.index("h3:Figures"), "the issues before the figures")
def si(v, unit):
    for f, p in ((1, ""), (1e-3, "m"), (1e-6, "\u00b5"), (1e-9, "n")):
        if abs(v) >= f * 0.9995:
            return "%.4g %s%s" % (v / f, p, unit)
    return "%.4g n%s" % (v / 1e-9, unit)
e = a["figures"]["energy_per_op"]
rows = {r[0]: r for r in d["headline"]}
U = e["total_budget"]["U"] if e["total_budget"]["complete"] else None
check(rows["energy per operation"][1] == si(e["total_j"], "J"), "headline: energy per operation %s (%s)" % (rows["energy per operation"][1], si(e["total_j"], "J")))
check(U is None or rows["energy per operation"][2] == si(U, "J"), "headline: \u00b1 %s is the budget's U, k = 2 (%s)" % (rows["energy per operation"][2], U and si(U, "J")))
check(rows["integrity"][1] == a["integrity"], "headline: integrity %s" % rows["integrity"][1])
check(rows["date"][1] == "not recorded", "headline: a run report carries no date, and says so")
# 5. Keys as words; the field's name kept in data-key.
th = d["th"]
check(th.get("mean_power_w") == "mean power" and th.get("p99_s") == "p99" and th.get("duty_cycle") == "duty cycle",
      "keys as words: %s, %s, %s" % (th.get("mean_power_w"), th.get("p99_s"), th.get("duty_cycle")))
sys.exit(1 if bad else 0)
EOF

# The per-layer chart of a profile measured on QEMU: cycles absent, the
# emulated instruction count what was measured. Layers 0, 1, 2 get 10000,
# 50000, 30000 instructions: largest first is 1, 2, 0. Then with cycles
# 10000, 30000, 20000 (cycles first): 1, 2, 0 again only by cycles.
python3 - "$TMP/prof/summary.json" "$TMP/emu.json" "$TMP/cyc.json" <<'EOF'
import json, sys
a = json.load(open(sys.argv[1]))
p = a["profile"]
for L, n in zip(p["layers"], (10000, 50000, 30000)):
    L["pmu.emulated_instruction_count"] = n
    del L["cycles"]
    L["counters"].pop("ARM_PMU_CPU_CYCLES", None)
p["emulated_instruction_count"] = {"label": "pmu.emulated_instruction_count", "per_window_us": 62.5,
                                   "resolution_instructions": 62.5, "total_per_inference": 90000, "basis": "set by the test"}
json.dump(a, open(sys.argv[2], "w"))
b = json.load(open(sys.argv[1]))
for L, c in zip(b["profile"]["layers"], (10000.0, 30000.0, 20000.0)):
    L["cycles"] = c
json.dump(b, open(sys.argv[3], "w"))
EOF
expect 0 "report the QEMU-like profile" -- "$E" report "$TMP/emu.json" --out "$TMP/emu.html"
expect 0 "report the profile with cycles" -- "$E" report "$TMP/cyc.json" --out "$TMP/cyc.html"
node "$DRIVER" "file://$TMP/emu.html" >"$TMP/emu.layout" 2>"$TMP/emu.err" || { bad "the browser run failed"; head "$TMP/emu.err"; }
node "$DRIVER" "file://$TMP/cyc.html" >"$TMP/cyc.layout" 2>"$TMP/cyc.err" || { bad "the browser run failed"; head "$TMP/cyc.err"; }
python3 - "$TMP/emu.layout" "$TMP/cyc.layout" "$TMP/emu.json" <<'EOF' || fails=$((fails + 1))
import json, sys
e, c = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
a = json.load(open(sys.argv[3]))
bad = 0
def check(cond, what):
    global bad
    print(("ok   - " if cond else "FAIL - ") + what)
    bad += 0 if cond else 1
for d in (e, c):
    check(not d.get("error") and d["escaped"] == [] and not d["page_errors"], "loaded, nothing left the page")
ce, cc = e["plots"]["a0-layers-all"], c["plots"]["a0-layers-all"]
check(ce["xcats"] == ["1 DEPTHWISE_CONV_2D", "2 FULLY_CONNECTED", "0 CONV_2D"],
      "QEMU: sorted by emulated instructions 50000, 30000, 10000: %s" % ce["xcats"])
check(cc["xcats"] == ["1 DEPTHWISE_CONV_2D", "2 FULLY_CONNECTED", "0 CONV_2D"],
      "with cycles: sorted by cycles 30000, 20000, 10000: %s" % cc["xcats"])
rows = e["tables"]["layers (aggregated over every preset)"]
col = rows[0].index("emulated instructions (QEMU -icount)") if "emulated instructions (QEMU -icount)" in rows[0] else None
check(col is not None and [r[col] for r in rows[1:]] == ["10000", "50000", "30000"],
      "the layer table shows the emulated instructions (%s)" % ([r[col] for r in rows[1:]] if col else rows[0]))
check("emulated instructions (QEMU -icount)" not in c["tables"]["layers (aggregated over every preset)"][0],
      "no such column where it was not measured")
h = {r[0]: r for r in e["headline"]}
p = a["power"]
check(h["energy per inference"][1] == "%.4g \u00b5J" % (p["energy_per_inference_j"] * 1e6),
      "headline: energy per inference %s" % h["energy per inference"][1])
th = e["th"]
check(th.get("energy_per_inference_j") == "energy per inference" and th.get("gated_window_count") == "gated window count",
      "power keys as words: %s, %s" % (th.get("energy_per_inference_j"), th.get("gated_window_count")))
sys.exit(1 if bad else 0)
EOF
finish
