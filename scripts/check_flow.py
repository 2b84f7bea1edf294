#!/usr/bin/env python3
"""A pipeline's flow reads top down (docs/internals/profile.md, "The flow").

Walks the calls from a pipeline's entry point (ergon_profile_run,
ergon_validate_run, ergon_kernels_run) through the files of its own folder,
every call in source order, and prints the sequence of files the walk
stays in (a call into another file of the folder and the return from it
each start a new stay). Calls out of the folder (another pipeline's public
API, an engine, a driver, core) are the floors below and are not followed;
calls through function pointers (callbacks, lifecycle drivers) are not
arrows.

The flow reads top down when every call into another file of the folder
enters a file the walk has not entered before, or one that only the
calling file has entered (a file of the caller's own, called down into
again: the power stage plans, captures and captures once more through
profile_live.c): the entry file calls the stages in order, a stage calls
down into files of its own, and no stage reaches back into a file the
flow has already left from elsewhere (an earlier stage's, a helper
another stage also used) or climbs back up into a file that is still
waiting for a call to return (the entry file, its stage). Such a call is
reported with the function it reaches.

Usage: check_flow.py [--trace] [ROOT]
  --trace  print every flow's sequence of files, also when it is clean
Exit 0 clean, 1 a flow reaches back, 2 usage.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_layers  # noqa: E402

# (entry point, its folder)
FLOWS = [
    ("ergon_profile_run", "src/pipelines/profile/"),
    ("ergon_validate_run", "src/pipelines/validate/"),
    ("ergon_kernels_run", "src/pipelines/kernels/"),
]
MAX_STEPS = 20000
CALL = re.compile(r"(?<!->)(?<!\.)\b([A-Za-z_]\w*)\s*\(")
DEF_HEAD = check_layers.DEF_HEAD


def bodies(code):
    """{name: body text} of the functions code defines at file scope."""
    out = {}
    depth = 0
    start = 0
    head_name = None
    for i, ch in enumerate(code):
        if ch == "{":
            if depth == 0:
                head = code[start:i]
                m = DEF_HEAD.search(head)
                head_name = None
                if m and m.group(1) not in check_layers.KEYWORDS and "=" not in head:
                    head_name = m.group(1)
                    body_start = i
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                if head_name is not None:
                    out[head_name] = code[body_start:i + 1]
                head_name = None
                start = i + 1
        elif ch == ";" and depth == 0:
            start = i + 1
    return out


class Flow:
    def __init__(self, tree, folder):
        self.folder = folder
        self.funcs = {}  # (file, name) -> body
        self.local = {}  # file -> names it defines
        for rel, c in tree.code.items():
            if rel.startswith(folder) and rel.endswith(".c") and "/" not in rel[len(folder):]:
                b = bodies(c)
                self.local[rel] = set(b)
                for name, body in b.items():
                    self.funcs[(rel, name)] = body
        self.glob = {}
        for (rel, name) in self.funcs:
            if name in tree.defs.get(rel, ()):
                self.glob.setdefault(name, rel)

    def resolve(self, rel, name):
        if name in self.local.get(rel, ()):
            return rel
        return self.glob.get(name)

    def calls(self, rel, name):
        out = []
        for m in CALL.finditer(self.funcs[(rel, name)]):
            callee = m.group(1)
            where = self.resolve(rel, callee)
            if where is not None:
                out.append((where, callee))
        return out

    def walk(self, root):
        """The stays, and the calls that reach back: (kind, caller, callee, file)."""
        rel = self.glob.get(root)
        if rel is None:
            return None, None
        stays = [rel]
        bad = []
        entered = {rel: set()}  # file -> the files that entered it
        steps = [0]

        def go(frel, fname, stack_files, active):
            for crel, cname in self.calls(frel, fname):
                if (crel, cname) in active:
                    continue  # recursion inside a file
                steps[0] += 1
                if steps[0] > MAX_STEPS:
                    return
                if crel != frel:
                    if crel in stack_files:
                        bad.append(("climbs back up into", frel, fname, crel, cname))
                    elif crel in entered and entered[crel] != {frel}:
                        bad.append(("reaches back into", frel, fname, crel, cname))
                    entered.setdefault(crel, set()).add(frel)
                    stays.append(crel)
                go(crel, cname, stack_files + ([crel] if crel != frel else []),
                   active | {(crel, cname)})
                if crel != frel:
                    stays.append(frel)

        go(rel, root, [rel], {(rel, root)})
        return stays, bad


def short(rel, folder):
    return rel[len(folder):]


def main():
    args = sys.argv[1:]
    trace = False
    if args and args[0] == "--trace":
        trace = True
        args.pop(0)
    if len(args) > 1 or (args and args[0].startswith("-")):
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    tree = check_layers.Tree(root)
    fails = 0
    for entry, folder in FLOWS:
        fl = Flow(tree, folder)
        stays, bad = fl.walk(entry)
        if stays is None:
            if os.path.isdir(os.path.join(root, folder)):
                print("%s: no %s() in it" % (folder, entry))
                fails += 1
            continue
        files = len(set(stays))
        if trace or bad:
            print("%s (%s): %d stays in %d files:" % (entry, folder, len(stays), files))
            print("  " + " -> ".join(short(s, folder) for s in stays))
        for kind, frel, fname, crel, cname in bad:
            print("%s: %s() %s %s: %s() (%s's flow: a call may only enter a file the flow "
                  "has not entered yet, or one only its caller entered)" % (frel, fname, kind, short(crel, folder), cname, entry))
        if bad:
            fails += 1
        else:
            print("check_flow: %s reads top down (%d files, each entered from one caller)"
                  % (entry, files))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
