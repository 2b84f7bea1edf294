#!/usr/bin/env python3
"""Check a DOM dumped by headless Chromium from an `ergon report` page
against the artifacts it was made from (read here with Python's json, not
through ergon).

    report_dom_check.py DOM.html ARTIFACT[:JLS_SAMPLES] ...

For section a<i> (the i-th artifact):
  - every table cell with data-path/data-value holds exactly the artifact's
    value at that path, and its text shows it (4 significant digits, SI
    prefix parsed here independently);
  - every text cell with data-text-path shows exactly the artifact's value
    at that path: the string itself, yes/no for a boolean, an integer in
    full;
  - the page's own self-check ran and says ok;
  - the plots exist with the number of series and points the artifact
    implies (computed here from the artifact's arrays).
Exit 0 when everything holds; otherwise every finding is printed.
"""
import json
import math
import re
import sys
from html.parser import HTMLParser

HP_MAX_RAW = 2400  # src/pipelines/report/report_internal.h: raw points drawn as they are
PREFIX = {"G": 1e9, "M": 1e6, "k": 1e3, "m": 1e-3, "µ": 1e-6, "n": 1e-9, "p": 1e-12}


class Dom(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.section = None
        self.cells = []  # (section, path, value, text)
        self.plots = {}  # id -> {"series": n, "points": n, "elems": [(tag, n, count)]}
        self.fig = None
        self.plot = None
        self.cell = None
        self.tcells = []  # (section, path, text)
        self.tcell = None
        self.selfcheck = None
        self.external = []
        self.xcat = None  # the text of a category name under a plot's axis

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("src", "href"):
            if k in a:
                self.external.append((tag, k, a[k]))
        if tag == "section" and a.get("class") == "artifact":
            self.section = a["id"]
        if tag == "figure" and "plotbox" in a.get("class", ""):
            self.fig = a["id"]
        if tag == "svg" and a.get("class") == "plot":
            self.plot = {"series": int(a["data-series"]), "points": int(a["data-points"]),
                         "elems": [], "xcat": []}
            self.plots[self.fig] = self.plot
        if self.plot is not None and "series" in a.get("class", "").split():
            if tag == "path":
                count = a["d"].count("M")
            else:
                pts = a.get("points", "").split()
                count = len(pts)
            self.plot["elems"].append((tag, a.get("class"), int(a["data-n"]), count))
        if self.plot is not None and tag == "text" and "xcat" in a.get("class", "").split():
            self.xcat = ""
        if tag == "td" and "data-path" in a and "data-value" in a:
            self.cell = [self.section, a["data-path"], a["data-value"], ""]
        if tag == "td" and "data-text-path" in a:
            self.tcell = [self.section, a["data-text-path"], ""]
        if tag == "div" and a.get("id") == "ergon-selfcheck":
            self.selfcheck = a

    def handle_endtag(self, tag):
        if tag == "text" and self.xcat is not None:
            self.plot["xcat"].append(self.xcat)
            self.xcat = None
        if tag == "svg":
            self.plot = None
        if tag == "td" and self.cell is not None:
            self.cells.append(tuple(self.cell))
            self.cell = None
        if tag == "td" and self.tcell is not None:
            self.tcells.append(tuple(self.tcell))
            self.tcell = None

    def handle_data(self, data):
        if self.xcat is not None:
            self.xcat += data
        if self.cell is not None:
            self.cell[3] += data
        if self.tcell is not None:
            self.tcell[2] += data


def jpath(root, path):
    cur = root
    for part in path.split("."):
        m = re.fullmatch(r"([^\[]+)((?:\[\d+\])*)", part)
        if m is None or not isinstance(cur, dict):
            return None
        cur = cur.get(m.group(1))
        for idx in re.findall(r"\[(\d+)\]", m.group(2)):
            if not isinstance(cur, list) or int(idx) >= len(cur):
                return None
            cur = cur[int(idx)]
    return cur


def shown(text):
    """The number a cell shows, with its SI prefix applied."""
    parts = text.strip().split()
    x = float(parts[0])
    if len(parts) > 1 and len(parts[1]) > 1 and parts[1][0] in PREFIX:
        x *= PREFIX[parts[1][0]]
    return x


def run_plots(pre, s, fig):
    """The plots of one run (its series and figures)."""
    exp = {}
    rails = s.get("rails")
    series = points = 0
    for r in (rails or [s]):
        n = len(r.get("samples", {}).get("t_s", []))
        if n <= HP_MAX_RAW:
            series += 1
            points += n
        else:
            series += 2
            points = None
    exp[pre + "power"] = (series, points)
    w = fig.get("throughput", {}).get("windows", [])
    if w:
        ns, np_ = 1, len(w)
        th = fig["throughput"]
        if th.get("first_ops_per_s") is not None:
            ns, np_ = ns + 1, np_ + 2
        if s.get("samples", {}).get("temp_c"):
            ns, np_ = ns + 1, np_ + len(w)
        exp[pre + "throughput"] = (ns, np_)
    inv = s.get("invocations", {})
    failed = set(inv.get("failed_index", []))
    ok = [x for k, x in enumerate(inv.get("latency_s", [])) if k not in failed]
    if ok:
        exp[pre + "latency-hist"] = (1, 50)
        m = len(ok) if len(ok) <= HP_MAX_RAW else 1200
        exp[pre + "latency-cdf"] = (1, 2 * m - 1)
    return exp


def layer_energy_plot(pre, power):
    """The energy-per-layer chart: {id: (series, points, names)}; names are
    the category labels in the order drawn, costliest first (power.layers[]
    measured, else power.layers_estimated), read here from the artifact."""
    meas = power.get("layers") or []
    layers = meas or power.get("layers_estimated") or []
    num = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    energies = [l.get("energy_j") for l in layers]
    if not layers or not any(num(e) and e > 0 for e in energies):
        return {}
    order = sorted(range(len(layers)),
                   key=lambda k: (-(energies[k] if num(energies[k]) else -math.inf), k))
    # Every k-th name (rank 0, k, 2k, ...): names slanted 40 degrees, k
    # categories (812 / n SVG units each: the 960-unit plot less its 78 +
    # 70 margins) apart across their baselines must hold a 14-unit line
    # of the 11 px tick font.
    n = len(layers)
    step = max(1, math.ceil(14.0 / (812.0 / n * math.sin(math.radians(40))) - 1e-9))
    names = []
    for r, k in enumerate(order):
        l = layers[k]
        i0, i1 = l["index"], l.get("last_index", l["index"])
        names.append("%s %s" % ("%d-%d" % (i0, i1) if i1 > i0 else "%d" % i0, l.get("op") or "?")
                     if r % step == 0 else "")
    n_est = sum(1 for l in meas if num((l.get("estimated_energy") or {}).get("energy_j")))
    pts = sum(1 for e in energies if num(e))
    if meas and n_est:
        return {pre + "layer-energy": (2, pts + n_est, names)}
    return {pre + "layer-energy": (1, pts, names)}


def expected_plots(i, art, jls_samples):
    """{plot id: (series, points or None[, category names])} implied by the
    artifact."""
    exp = {}
    pre = "a%d-" % i
    if art.get("schema") == "ergon.profile" and isinstance(art.get("power"), dict) and \
            isinstance(art["power"].get("measurement_scope"), str):
        exp.update(layer_energy_plot(pre, art["power"]))
    if art.get("schema") == "ergon.report" and "repetitions" in art:
        # A repeated run: each repetition's plots, ids a<i*1000+k>-...
        figs = art.get("figures", {}).get("repetitions", [])
        for k, rep in enumerate(art["repetitions"]):
            fig = figs[k] if k < len(figs) else {}
            exp.update(run_plots("a%d-" % (i * 1000 + k + 1), rep.get("series", {}), fig))
    elif art.get("schema") == "ergon.report":
        exp.update(run_plots(pre, art.get("series", {}), art.get("figures", {})))
    elif art.get("schema") == "ergon.profile":
        if jls_samples is not None:
            exp[pre + "trace"] = (1, jls_samples) if jls_samples <= HP_MAX_RAW else (2, None)
            exp[pre + "distribution"] = (1, 60)
        prof = art.get("profile")
        if isinstance(prof, dict):
            groups = prof.get("groups") or {"all": prof.get("layers", [])}
            for g, layers in groups.items():
                names = []
                for l in layers:
                    for k, v in l.get("counters", {}).items():
                        if k not in names and isinstance(v, (int, float)):
                            names.append(k)
                # cycles, the counters, and the emulated instruction count
                # when that is what was measured (QEMU)
                nc = len(names) + 1 + isinstance(prof.get("emulated_instruction_count"), dict)
                exp[pre + "layers-" + re.sub(r"[^a-z0-9-]", "_", g)] = (nc, nc * len(layers))
    elif art.get("schema") == "ergon.kernels":
        # One bar series per implementation with a value in some case; one
        # bar per (case, implementation) value (kernels.cases[], read here).
        cases = art.get("kernels", {}).get("cases", [])
        for name, member, key in (("median", "impls", "median"), ("speedup", "speedups", "speedup")):
            impls, points = [], 0
            for c in cases:
                for m in c.get(member, []):
                    v = m.get(key)
                    if isinstance(v, (int, float)) and math.isfinite(v):
                        points += 1
                        if m["impl"] not in impls:
                            impls.append(m["impl"])
            if points:
                exp[pre + "kernels-" + name] = (len(impls), points)
    elif art.get("schema") == "ergon.trend":
        pts = [p for p in art.get("trend", {}).get("points", [])
               if isinstance(p.get("value"), (int, float))]
        counted = [p for p in pts if p.get("counted") is True]
        ns = (len(counted) > 0) + (len(pts) > len(counted))
        if ns:
            exp[pre + "trend"] = (ns, len(pts))
    return exp


def main():
    dom_path, specs = sys.argv[1], sys.argv[2:]
    with open(dom_path, encoding="utf-8") as f:
        dom = Dom()
        dom.feed(f.read())
    bad = []
    arts = []
    for spec in specs:
        path, _, jls = spec.partition(":")
        with open(path, encoding="utf-8") as f:
            arts.append((json.load(f), int(jls) if jls else None))
    if dom.external:
        bad.append("external references: %s" % dom.external[:5])
    sc = dom.selfcheck or {}
    if sc.get("data-status") != "ok":
        bad.append("page self-check: %s" % sc.get("data-status"))
    checked = 0
    for section, path, value, text in dom.cells:
        i = int(section[1:])
        want = jpath(arts[i][0], path)
        if not isinstance(want, (int, float)) or isinstance(want, bool):
            bad.append("%s %s: the artifact holds %r" % (section, path, want))
            continue
        if float(value) != float(want):
            bad.append("%s %s: data-value %s, artifact %r" % (section, path, value, want))
        try:
            x = shown(text)
        except (ValueError, IndexError):
            bad.append("%s %s: shows %r" % (section, path, text))
            continue
        if not math.isclose(x, want, rel_tol=6e-4, abs_tol=0):
            bad.append("%s %s: shows %r for %r" % (section, path, text, want))
        checked += 1
    texts = 0
    for section, path, text in dom.tcells:
        want = jpath(arts[int(section[1:])][0], path)
        if isinstance(want, bool):
            want = "yes" if want else "no"
        elif isinstance(want, int):
            want = "%d" % want
        if not isinstance(want, str):
            bad.append("%s %s: the artifact holds %r" % (section, path, want))
        elif text != want:
            bad.append("%s %s: shows %r, artifact %r" % (section, path, text, want))
        texts += 1
    plots = 0
    for i, (art, jls) in enumerate(arts):
        for pid, want in expected_plots(i, art, jls).items():
            ns, npts = want[0], want[1]
            p = dom.plots.get(pid)
            if p is None:
                bad.append("plot %s missing" % pid)
                continue
            plots += 1
            if p["series"] != ns or len(p["elems"]) != ns:
                bad.append("plot %s: %d series (%d drawn), expected %d" %
                           (pid, p["series"], len(p["elems"]), ns))
            if npts is not None and p["points"] != npts:
                bad.append("plot %s: %d points, expected %d" % (pid, p["points"], npts))
            if len(want) > 2 and p["xcat"] != want[2]:
                bad.append("plot %s: categories %s, expected %s" % (pid, p["xcat"], want[2]))
            for tag, cls, n, count in p["elems"]:
                if n != count:
                    bad.append("plot %s: %s.%s says %d points, holds %d" % (pid, tag, cls, n, count))
    for b in bad:
        print("FAIL -", b)
    print("checked %d figure cells, %d text cells and %d plots against %d artifacts" %
          (checked, texts, plots, len(arts)))
    if checked == 0:
        print("FAIL - no figure cells at all")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
