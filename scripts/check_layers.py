#!/usr/bin/env python3
"""Arrows point down: the layering check (docs/internals/layers.md).

Reads every C file under src/, sim/ and target/ and fails when

  * a file includes a header of a higher layer (an upward include),
  * a file calls a function defined in a higher layer (an upward call that
    an extern declaration or a mixed header would hide),
  * a public header declares functions of more than one layer (it would
    hide upward arrows from the include check),
  * files form a circle: A uses a function defined in B and B (directly or
    through others) uses one defined in A.

Layers, bottom to top (a file may use its own layer and any below):

  target     target/          the freestanding runtime (its headers are the
                              wire protocol both sides share)
  core       src/core/        errors, files, canonical JSON, issues
  sim        sim/             the virtual bench: a board, driven by the sim
                              lifecycle driver; calls no engine or pipeline
  drivers    src/drivers/     instruments, workloads, transports,
                              lifecycles, recordings: devices -> streams
  engines    src/engines/     streams in, typed results out
  pipelines  src/pipelines/   wire drivers to engines, build the JSON
  cli        src/cli/         arguments, printing, exit codes

target/ sources may include only target headers. The CLI calls pipelines
only (and core): it never runs an engine or the board itself. The few
functions of lower layers it may call are tables of names, listed with
their reason in CLI_MAY_CALL. The layer of a public
header (include/ergon/*.h) is the layer of the files that define the
functions it declares; a header that declares no function takes the layer
in TYPE_ONLY (core when not listed).

Usage: check_layers.py [ROOT]   (exit 0 clean, 1 violations, 2 usage)
"""
import os
import re
import sys

RANK = {"target": 0, "core": 1, "sim": 2, "drivers": 3, "engines": 4, "pipelines": 5, "cli": 6}
# Public headers that declare types only.
TYPE_ONLY = {"plugin.h": "drivers", "stream.h": "core"}
PATH_LAYERS = [
    ("src/cli/", "cli"),
    ("src/pipelines/", "pipelines"),
    ("src/engines/", "engines"),
    ("src/drivers/", "drivers"),
    ("src/core/", "core"),
    ("sim/", "sim"),
    ("target/", "target"),
]
PUBLIC_DIRS = ["include", "target/include", "sim/include"]
# Lower-layer functions the CLI may call: vocabularies and catalogues (they
# look names up; they compute no figure and drive no device).
CLI_MAY_CALL = {
    "ergon_sim_scenarios": "the scenario names (completion, `ergon __complete`)",
    "ergon_workload_drivers": "the workload kinds (completion, `ergon __complete`)",
    "ergon_hpx_aggregation_parse": "a name to its enum (--aggregation)",
    "ergon_instrument_drivers": "the driver table (`ergon instruments`)",
    "ergon_pmu_events": "the PMU event catalogue (`ergon counters list`)",
    "ergon_pmu_plan": "splitting counter names into passes (`ergon counters plan`)",
    "ergon_pmu_plan_cleanup": "its cleanup",
}
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined", "do", "else"}


def path_layer(rel):
    for prefix, layer in PATH_LAYERS:
        if rel.startswith(prefix):
            return layer
    return None


def strip(text):
    """Comments, string and character literals and preprocessor lines out."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"'(\\.|[^'\\\n])*'", "''", text)
    out = []
    cont = False
    for line in text.split("\n"):
        is_pp = cont or line.lstrip().startswith("#")
        cont = is_pp and line.endswith("\\")
        out.append("" if is_pp else line)
    return "\n".join(out)


DEF_HEAD = re.compile(r"(\w+)\s*\((?:[^()]|\([^()]*\))*\)\s*$", re.S)


def definitions(code):
    """(global, static) function names defined at file scope."""
    glob, stat = set(), set()
    depth = 0
    start = 0
    for i, ch in enumerate(code):
        if ch == "{":
            if depth == 0:
                head = code[start:i]
                m = DEF_HEAD.search(head)
                if m and m.group(1) not in KEYWORDS and "=" not in head:
                    (stat if re.search(r"\bstatic\b", head) else glob).add(m.group(1))
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                start = i + 1
        elif ch == ";" and depth == 0:
            start = i + 1
    return glob, stat


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    files = {}
    for top in ("src", "sim", "target", "include"):
        for d, _, names in os.walk(os.path.join(root, top)):
            for n in names:
                if n.endswith((".c", ".h")):
                    rel = os.path.relpath(os.path.join(d, n), root)
                    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                        files[rel] = f.read()
    code = {rel: strip(t) for rel, t in files.items()}
    defs, statics = {}, {}
    definer = {}
    for rel, c in code.items():
        if rel.endswith(".c"):
            g, s = definitions(c)
            defs[rel], statics[rel] = g, s
            for name in g:
                definer.setdefault(name, set()).add(rel)

    problems = []

    def file_layer(rel):
        lay = path_layer(rel)
        if lay is not None:
            return lay
        # A public header: the layer of what it declares.
        name = os.path.basename(rel)
        declared = set(re.findall(r"\b(\w+)\s*\(", code[rel])) & set(definer)
        layers = {path_layer(d) for n in declared for d in definer[n]}
        layers.discard(None)
        if not layers:
            return TYPE_ONLY.get(name, "core")
        if len(layers) > 1:
            by = {}
            for n in sorted(declared):
                for d in definer[n]:
                    by.setdefault(path_layer(d), n)
            problems.append("%s: declares functions of several layers (%s): split it so that "
                            "each header belongs to one layer" %
                            (rel, ", ".join("%s: %s" % (l, by[l]) for l in
                                            sorted(by, key=lambda l: RANK[l]))))
        return max(layers, key=lambda l: RANK[l])

    layer_of = {}

    def layer(rel):
        if rel not in layer_of:
            layer_of[rel] = file_layer(rel)
        return layer_of[rel]

    def resolve(rel, inc):
        cands = [os.path.join(os.path.dirname(rel), inc), os.path.join("src", inc)]
        cands += [os.path.join(d, inc) for d in PUBLIC_DIRS]
        for c in cands:
            c = os.path.normpath(c)
            if c in files:
                return c
        return None

    sources = sorted(r for r in files if path_layer(r) is not None)
    for rel in sources:
        me = layer(rel)
        for lineno, line in enumerate(files[rel].split("\n"), 1):
            m = re.match(r'\s*#\s*include\s*"([^"]+)"', line)
            if not m:
                continue
            hdr = resolve(rel, m.group(1))
            if hdr is None:
                continue  # generated or system header: not ours
            them = layer(hdr)
            if me == "target" and not (hdr.startswith("target/")):
                problems.append("%s:%d: target runtime includes host header %s" %
                                (rel, lineno, hdr))
            elif RANK[them] > RANK[me]:
                problems.append("%s:%d: upward include: %s (%s) includes %s (%s)" %
                                (rel, lineno, rel, me, hdr, them))

    # Calls between files.
    edges = {}
    for rel in sorted(defs):
        if path_layer(rel) is None:
            continue
        me = layer(rel)
        used = set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", code[rel]))
        used |= set(re.findall(r"\b([A-Za-z_]\w*)\b", code[rel])) & set(definer)
        for name in sorted(used - defs[rel] - statics[rel]):
            for other in sorted(definer.get(name, ())):
                if other == rel:
                    continue
                edges.setdefault(rel, {}).setdefault(other, name)
                them = layer(other)
                if (me == "cli" and them not in ("cli", "pipelines", "core", "target") and
                        name not in CLI_MAY_CALL):
                    problems.append("%s: the CLI calls pipelines only: %s() is in %s (%s); "
                                    "call a pipeline that does it" % (rel, name, other, them))
                elif RANK[them] > RANK[me]:
                    problems.append("%s: upward call: %s (%s) uses %s() of %s (%s)" %
                                    (rel, rel, me, name, other, them))

    # Circles: strongly connected components of the file graph (Tarjan).
    index, low, on, stack, sccs = {}, {}, set(), [], []
    counter = [0]

    def strong(v):
        work = [(v, iter(sorted(edges.get(v, {}))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        sccs.append(sorted(comp))
            elif nxt not in index:
                index[nxt] = low[nxt] = counter[0]
                counter[0] += 1
                stack.append(nxt)
                on.add(nxt)
                work.append((nxt, iter(sorted(edges.get(nxt, {})))))
            elif nxt in on:
                low[node] = min(low[node], index[nxt])

    for v in sorted(edges):
        if v not in index:
            strong(v)
    for comp in sccs:
        links = ["%s -> %s (%s)" % (a, b, edges[a][b]) for a in comp
                 for b in sorted(edges.get(a, {})) if b in comp]
        problems.append("circle of files: %s; links: %s" % (", ".join(comp), "; ".join(links)))

    for p in problems:
        print(p)
    if problems:
        print("check_layers: %d problem(s); the layers are in docs/internals/layers.md" %
              len(problems))
        return 1
    print("check_layers: %d files, no upward arrow, no circle" % len(sources))
    return 0


if __name__ == "__main__":
    sys.exit(main())
