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

Inside the pipelines floor, one folder per pipeline (src/pipelines/<name>/):

  * no file sits directly in src/pipelines/;
  * a folder has at most one private header (.h) and one main file, whose
    first comment starts "<name>/: what it does";
  * a folder uses another only through its public header (include/ergon/):
    never the other's private header, never a function no public header
    declares (an extern of its own); the one exception is common/, whose
    private header common.h every folder may include, and which itself
    uses no other pipeline folder;
  * folders form no circle;
  * outside the pipelines (the CLI) no private pipeline header is included
    and no pipeline function is called that no public header declares.

--picture prints the layers and the pipeline folders as
docs/internals/layers.md shows them (between its "picture" markers), made
from the tree; --update-doc writes it there.

target/ sources may include only target headers. The CLI calls pipelines
only (and core): it never runs an engine or the board itself. The few
functions of lower layers it may call are tables of names, listed with
their reason in CLI_MAY_CALL. The layer of a public
header (include/ergon/*.h) is the layer of the files that define the
functions it declares; a header that declares no function takes the layer
in TYPE_ONLY (core when not listed).

Usage: check_layers.py [--picture | --update-doc] [ROOT]
       (exit 0 clean, 1 violations, 2 usage)
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


PIPES = "src/pipelines/"
COMMON = "common"
# What each layer is, for the picture.
LAYER_WHAT = {
    "cli": "arguments, printing, exit codes",
    "pipelines": "wire drivers to engines; build and write each artifact",
    "engines": "streams in, typed results out; no files",
    "drivers": "instruments, workloads, transports, lifecycles, recordings",
    "sim": "the virtual bench: a board",
    "core": "errors, files, JSON canon, issues",
    "target": "the freestanding runtime; its headers are the wire protocol",
}
PICTURE_BEGIN = "<!-- picture: generated by scripts/check_layers.py --picture; do not edit -->"
PICTURE_END = "<!-- end of picture -->"


def pipe_folder(rel):
    """The pipeline folder of a file ("" directly in src/pipelines/), or None."""
    if not rel.startswith(PIPES):
        return None
    rest = rel[len(PIPES):]
    return rest.split("/")[0] if "/" in rest else ""


def first_comment(text):
    m = re.match(r"\s*/\*(.*?)\*/", text, re.S)
    return m.group(1) if m else ""


class Tree:
    """Every C file of a tree, its definitions and the layer of each file."""

    def __init__(self, root):
        self.root = root
        self.files = {}
        for top in ("src", "sim", "target", "include"):
            for d, _, names in os.walk(os.path.join(root, top)):
                for n in names:
                    if n.endswith((".c", ".h")):
                        rel = os.path.relpath(os.path.join(d, n), root)
                        with open(os.path.join(root, rel), encoding="utf-8",
                                  errors="replace") as f:
                            self.files[rel] = f.read()
        self.code = {rel: strip(t) for rel, t in self.files.items()}
        self.defs, self.statics, self.definer = {}, {}, {}
        for rel, c in self.code.items():
            if rel.endswith(".c"):
                g, s = definitions(c)
                self.defs[rel], self.statics[rel] = g, s
                for name in g:
                    self.definer.setdefault(name, set()).add(rel)
        self.problems = []
        self.layer_of = {}
        # Functions a public header (include/ergon/*.h) declares.
        self.public = set()
        for rel, c in self.code.items():
            if rel.startswith("include/"):
                self.public |= set(re.findall(r"\b(\w+)\s*\(", c)) & set(self.definer)

    def file_layer(self, rel):
        lay = path_layer(rel)
        if lay is not None:
            return lay
        # A public header: the layer of what it declares.
        name = os.path.basename(rel)
        declared = set(re.findall(r"\b(\w+)\s*\(", self.code[rel])) & set(self.definer)
        layers = {path_layer(d) for n in declared for d in self.definer[n]}
        layers.discard(None)
        if not layers:
            return TYPE_ONLY.get(name, "core")
        if len(layers) > 1:
            by = {}
            for n in sorted(declared):
                for d in self.definer[n]:
                    by.setdefault(path_layer(d), n)
            self.problems.append("%s: declares functions of several layers (%s): split it so "
                                 "that each header belongs to one layer" %
                                 (rel, ", ".join("%s: %s" % (l, by[l]) for l in
                                                 sorted(by, key=lambda l: RANK[l]))))
        return max(layers, key=lambda l: RANK[l])

    def layer(self, rel):
        if rel not in self.layer_of:
            self.layer_of[rel] = self.file_layer(rel)
        return self.layer_of[rel]

    def resolve(self, rel, inc):
        cands = [os.path.join(os.path.dirname(rel), inc), os.path.join("src", inc)]
        cands += [os.path.join(d, inc) for d in PUBLIC_DIRS]
        for c in cands:
            c = os.path.normpath(c)
            if c in self.files:
                return c
        return None

    def includes(self, rel):
        """(line number, header) of each include of ours in rel."""
        for lineno, line in enumerate(self.files[rel].split("\n"), 1):
            m = re.match(r'\s*#\s*include\s*"([^"]+)"', line)
            if m:
                hdr = self.resolve(rel, m.group(1))
                if hdr is not None:
                    yield lineno, hdr

    def uses(self, rel):
        """{name: sorted files defining it} of the functions rel uses of other files."""
        c = self.code[rel]
        used = set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", c))
        used |= set(re.findall(r"\b([A-Za-z_]\w*)\b", c)) & set(self.definer)
        out = {}
        for name in sorted(used - self.defs[rel] - self.statics[rel]):
            others = sorted(o for o in self.definer.get(name, ()) if o != rel)
            if others:
                out[name] = others
        return out

    def folders(self):
        """{folder: sorted files} of the pipeline folders."""
        out = {}
        for rel in self.files:
            f = pipe_folder(rel)
            if f:
                out.setdefault(f, []).append(rel)
        return {f: sorted(v) for f, v in sorted(out.items())}

    def main_file(self, folder):
        """The files of folder whose first comment starts "<folder>/:"."""
        tag = folder + "/:"
        return [rel for rel in self.folders().get(folder, [])
                if first_comment(self.files[rel]).strip().startswith(tag)]

    def folder_what(self, folder):
        mains = self.main_file(folder)
        if not mains:
            return ""
        line = first_comment(self.files[mains[0]]).strip().split("\n")[0]
        return line[len(folder) + 2:].strip()

    def folder_uses(self):
        """{folder: {used folder: sorted public headers or private header}}."""
        heads = {}
        for rel in self.files:
            if rel.startswith("include/"):
                for n in set(re.findall(r"\b(\w+)\s*\(", self.code[rel])) & set(self.definer):
                    heads.setdefault(n, set()).add(os.path.basename(rel))
        out = {}
        for folder, rels in self.folders().items():
            out[folder] = {}
            for rel in rels:
                if not rel.endswith(".c"):
                    continue
                for name, others in self.uses(rel).items():
                    for o in others:
                        g = pipe_folder(o)
                        if g and g != folder:
                            via = heads.get(name) or {"(private)"}
                            out[folder].setdefault(g, set()).update(via)
        return out


def check_folders(t, problems):
    """The folder rules of the pipelines floor."""
    folders = t.folders()
    for rel in sorted(t.files):
        if pipe_folder(rel) == "":
            problems.append("%s: a file directly in src/pipelines/: move it into the folder of "
                            "its pipeline (src/pipelines/<name>/)" % rel)
    for folder, rels in folders.items():
        hdrs = [r for r in rels if r.endswith(".h")]
        if len(hdrs) > 1:
            problems.append("src/pipelines/%s/: %d private headers (%s): a folder keeps at most "
                            "one; merge them" % (folder, len(hdrs),
                                                 ", ".join(os.path.basename(h) for h in hdrs)))
        mains = t.main_file(folder)
        if len(mains) != 1:
            problems.append("src/pipelines/%s/: %s: the first comment of the folder's main file "
                            "(and of no other) starts \"%s/: what it does\"" %
                            (folder, "no main file" if not mains else
                             "%d main files (%s)" % (len(mains), ", ".join(mains)), folder))
    for rel in sorted(r for r in t.files if path_layer(r) is not None):
        me = pipe_folder(rel)
        for lineno, hdr in t.includes(rel):
            them = pipe_folder(hdr)
            if them is None or them == me:
                continue
            if me is None:
                problems.append("%s:%d: %s includes the private pipeline header %s: use the "
                                "pipeline's public header (include/ergon/)" % (rel, lineno, rel,
                                                                             hdr))
            elif them != COMMON or me == COMMON:
                problems.append("%s:%d: folder include: %s/ includes %s, private to %s/: use "
                                "%s/'s public header (include/ergon/), or move what both "
                                "need to common/" % (rel, lineno, me, hdr, them, them))
    common_priv = set()
    for rel in folders.get(COMMON, []):
        if rel.endswith(".h"):
            common_priv |= set(re.findall(r"\b(\w+)\s*\(", t.code[rel]))
    edges = {}
    for rel in sorted(t.defs):
        me = pipe_folder(rel)
        if path_layer(rel) is None or me == "":
            continue
        for name, others in t.uses(rel).items():
            for o in others:
                them = pipe_folder(o)
                if not them or them == me:
                    continue
                if me is not None:
                    edges.setdefault(me, {}).setdefault(them, (rel, name, o))
                if me == COMMON:
                    problems.append("%s: common/ uses no other pipeline folder: %s() is in %s "
                                    "(%s/)" % (rel, name, o, them))
                elif name in t.public:
                    continue
                elif them == COMMON and me is not None and name in common_priv:
                    continue
                elif me is None:
                    problems.append("%s: %s() of %s is declared in no public header: the "
                                    "pipelines are used through include/ergon/" % (rel, name, o))
                else:
                    problems.append("%s: folder call: %s/ uses %s() of %s (%s/), which no "
                                    "public header declares: declare it in %s/'s public header "
                                    "(include/ergon/), or move it to common/" %
                                    (rel, me, name, o, them, them))
    # Circles of folders.
    state = {}

    def visit(f, path):
        state[f] = 1
        for g in sorted(edges.get(f, {})):
            if state.get(g) == 1:
                loop = path[path.index(g):] + [g]
                links = ["%s/ -> %s/ (%s uses %s() of %s)" % ((a, b) + edges[a][b])
                         for a, b in zip(loop, loop[1:])]
                problems.append("circle of pipeline folders: %s" % "; ".join(links))
            elif g not in state:
                visit(g, path + [g])
        state[f] = 2

    for f in sorted(edges):
        if f not in state:
            visit(f, [f])


def picture(t):
    """The layers and the pipeline folders, as docs/internals/layers.md shows them."""
    out = []
    count = {}
    for rel in t.files:
        lay = path_layer(rel)
        if lay is not None and rel.endswith(".c"):
            count[lay] = count.get(lay, 0) + 1
    paths = dict((lay, pre) for pre, lay in PATH_LAYERS)
    order = sorted(RANK, key=lambda l: -RANK[l])
    uses = t.folder_uses()
    # Folders by level: a folder sits above every folder it uses.
    level = {}

    def lev(f, seen=()):
        if f not in level:
            below = [lev(g, seen + (f,)) for g in uses.get(f, {}) if g not in seen]
            level[f] = 1 + max(below) if below else 0
        return level[f]

    for f in uses:
        lev(f)
    width = max(len(f) for f in uses) + 2 if uses else 10
    for i, lay in enumerate(order):
        out.append("%-10s %-16s %s" % (lay, paths[lay], LAYER_WHAT[lay]))
        if lay == "pipelines":
            out.append("%10s one folder per pipeline; a folder uses the ones below it, "
                       "through" % "")
            out.append("%10s their public headers (include/ergon/), and common/ through "
                       "common.h:" % "")
            for f in sorted(uses, key=lambda f: (-level[f], f)):
                out.append("%12s%-*s %s" % ("", width, f + "/", t.folder_what(f)))
                below = sorted(uses[f], key=lambda g: (-level[g], g))
                if below:
                    out.append("%12s%-*s   -> %s" % ("", width, "",
                                                     " ".join(g + "/" for g in below)))
        if i + 1 < len(order):
            out.append("%10s |" % "")
            out.append("%10s v" % "")
    return "\n".join(out) + "\n"


def doc_block(text):
    a = text.find(PICTURE_BEGIN)
    b = text.find(PICTURE_END)
    if a < 0 or b < a:
        return None, None, None
    body = text[a + len(PICTURE_BEGIN):b]
    return a, b, body


def main():
    args = sys.argv[1:]
    mode = None
    if args and args[0] in ("--picture", "--update-doc"):
        mode = args.pop(0)
    if len(args) > 1 or (args and args[0].startswith("-")):
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    t = Tree(root)
    if mode == "--picture":
        sys.stdout.write(picture(t))
        return 0
    if mode == "--update-doc":
        doc = os.path.join(root, "docs", "internals", "layers.md")
        with open(doc, encoding="utf-8") as f:
            text = f.read()
        a, b, _ = doc_block(text)
        if a is None:
            print("%s: no picture markers (%s ... %s)" % (doc, PICTURE_BEGIN, PICTURE_END),
                  file=sys.stderr)
            return 1
        text = text[:a] + PICTURE_BEGIN + "\n```\n" + picture(t) + "```\n" + text[b:]
        with open(doc, "w", encoding="utf-8") as f:
            f.write(text)
        print("check_layers: %s: picture updated" % doc)
        return 0
    problems = t.problems

    sources = sorted(r for r in t.files if path_layer(r) is not None)
    for rel in sources:
        me = t.layer(rel)
        for lineno, hdr in t.includes(rel):
            them = t.layer(hdr)
            if me == "target" and not (hdr.startswith("target/")):
                problems.append("%s:%d: target runtime includes host header %s" %
                                (rel, lineno, hdr))
            elif RANK[them] > RANK[me]:
                problems.append("%s:%d: upward include: %s (%s) includes %s (%s)" %
                                (rel, lineno, rel, me, hdr, them))

    # Calls between files.
    edges = {}
    for rel in sorted(t.defs):
        if path_layer(rel) is None:
            continue
        me = t.layer(rel)
        for name, others in t.uses(rel).items():
            for other in others:
                edges.setdefault(rel, {}).setdefault(other, name)
                them = t.layer(other)
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

    check_folders(t, problems)

    for p in problems:
        print(p)
    if problems:
        print("check_layers: %d problem(s); the layers are in docs/internals/layers.md" %
              len(problems))
        return 1
    print("check_layers: %d files, no upward arrow, no circle; %d pipeline folders keep "
          "their rules" % (len(sources), len(t.folders())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
