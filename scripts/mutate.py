#!/usr/bin/env python3
"""Mutation testing of ergon's trust-critical code (issue 30).

Each mutation in scripts/mutations.txt is an exact textual patch (one
unique piece of text replaced by another) of a source file: a flipped
comparison, a dropped check, a moved threshold, an off-by-one. Each is
applied in turn to a COPY of the source tree (build-mut/tree by default;
the working tree is never written), the copy is rebuilt incrementally
(non-sanitized Release, only the targets its tests need), the tests the
mutation names are run, and the mutation is "killed" when one of them
fails, "survived" when all pass. The file is restored after each mutation
(also on Ctrl-C or an error), and the copy is re-synced from the working
tree at every start.

Usage: scripts/mutate.sh [--quick] [--only NAME,...] [--list | --check] [-j N]
                         [--build-dir DIR] [--min-kill PCT] [--timeout S]

Prints one line per mutation, then the kill rate and every survivor's
name; writes the same to BUILD_DIR/mutate-report.txt. Exit 0 when the
kill rate is at least --min-kill (default 95) and every mutation applied
and compiled; 1 when not; 2 on a usage or set-up error (a mutation whose
text is no longer in its file exactly once is a set-up error: the list
must follow the code). docs/internals/testing.md, "Mutation testing".
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Mutation:
    def __init__(self, name, lineno):
        self.name = name
        self.lineno = lineno
        self.file = None
        self.tests = []
        self.targets = []
        self.why = ""
        self.quick = False
        self.old = []
        self.new = []


def parse_list(path):
    muts = []
    cur = None
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if line.startswith("== "):
                cur = Mutation(line[3:].strip(), n)
                muts.append(cur)
            elif cur is None or line.startswith("#") or not line.strip():
                continue
            elif line.startswith("file: "):
                cur.file = line[6:].strip()
            elif line.startswith("tests: "):
                cur.tests = line[7:].split()
            elif line.startswith("targets: "):
                cur.targets = line[9:].split()
            elif line.startswith("why: "):
                cur.why = line[5:].strip()
            elif line.startswith("quick: "):
                cur.quick = line[7:].strip() == "yes"
            elif line.startswith("- ") or line == "-":
                cur.old.append(line[2:])
            elif line.startswith("+ ") or line == "+":
                cur.new.append(line[2:])
            else:
                sys.exit(f"{path}:{n}: cannot read this line of mutation {cur.name}: {line!r}")
    names = set()
    for m in muts:
        where = f"{path}:{m.lineno}: mutation {m.name}"
        if m.name in names:
            sys.exit(f"{where}: the name is used twice")
        names.add(m.name)
        if not m.file or not m.tests or not m.old:
            sys.exit(f"{where}: needs file:, tests: and at least one '- ' line")
        if m.old == m.new:
            sys.exit(f"{where}: the patch changes nothing")
    return muts


def git_files():
    out = subprocess.run(
        ["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True, capture_output=True).stdout
    return [p for p in out.decode().split("\0") if p]


def sync_tree(tree):
    """Copy the working tree into `tree`, writing only files whose content
    differs (unchanged files keep their times, so the build stays
    incremental), and remove files that are gone."""
    os.makedirs(tree, exist_ok=True)
    manifest = os.path.join(tree, ".mutate-manifest")
    old = set()
    if os.path.exists(manifest):
        with open(manifest, encoding="utf-8") as f:
            old = set(f.read().split("\0")) - {""}
    files = [p for p in git_files() if os.path.isfile(os.path.join(ROOT, p))
             and not os.path.islink(os.path.join(ROOT, p))]
    copied = 0
    for p in files:
        src, dst = os.path.join(ROOT, p), os.path.join(tree, p)
        with open(src, "rb") as f:
            data = f.read()
        try:
            with open(dst, "rb") as f:
                same = f.read() == data
        except OSError:
            same = False
        if not same:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "wb") as f:
                f.write(data)
            shutil.copymode(src, dst)
            copied += 1
    for p in old - set(files):
        try:
            os.remove(os.path.join(tree, p))
        except OSError:
            pass
    with open(manifest, "w", encoding="utf-8") as f:
        f.write("\0".join(files))
    return copied


def targets_for(m):
    t = set(m.targets)
    for name in m.tests:
        tier, _, test = name.partition("/")
        if os.path.exists(os.path.join(ROOT, "tests", tier, test + ".c")):
            t.add(f"{tier}_{test}")
        if tier != "unit" or not os.path.exists(os.path.join(ROOT, "tests", tier, test + ".c")):
            t.add("ergon")
    return sorted(t)


def run(cmd, log, timeout=None):
    with open(log, "ab") as f:
        f.write(("\n$ " + " ".join(cmd) + "\n").encode())
        f.flush()
        try:
            return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT,
                                  timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            return 124


class Interrupted(Exception):
    pass


def on_signal(signum, frame):
    raise Interrupted(signum)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="only the mutations marked quick")
    ap.add_argument("--only", help="comma-separated mutation names")
    ap.add_argument("--list", action="store_true", help="list the mutations and exit")
    ap.add_argument("--check", action="store_true",
                    help="only check that every mutation's text is in its file exactly once "
                         "(the working tree; nothing is built)")
    ap.add_argument("-j", type=int, default=2, help="build and ctest jobs (default 2)")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build-mut"))
    ap.add_argument("--min-kill", type=float, default=95.0)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per mutation's tests")
    ap.add_argument("--mutations", default=os.path.join(ROOT, "scripts", "mutations.txt"))
    a = ap.parse_args()

    muts = parse_list(a.mutations)
    if a.quick:
        muts = [m for m in muts if m.quick]
    if a.only:
        want = a.only.split(",")
        unknown = [w for w in want if w not in {m.name for m in muts}]
        if unknown:
            sys.exit(f"mutate: no mutation named {', '.join(unknown)} (--list shows them)")
        muts = [m for m in muts if m.name in want]
    if a.check:
        bad = 0
        for m in muts:
            try:
                with open(os.path.join(ROOT, m.file), encoding="utf-8") as f:
                    count = f.read().count("\n".join(m.old))
            except OSError as e:
                print(f"mutation {m.name}: {m.file}: {e.strerror}", file=sys.stderr)
                bad += 1
                continue
            if count != 1:
                print(f"mutation {m.name} (scripts/mutations.txt:{m.lineno}): its text is in "
                      f"{m.file} {count} times, not once; update the list with the code",
                      file=sys.stderr)
                bad += 1
        print(f"{len(muts) - bad} of {len(muts)} mutations apply")
        return 2 if bad else 0
    if a.list:
        for m in muts:
            print(f"{m.name:34} {m.file}  [{' '.join(m.tests)}]  {m.why}")
        print(f"{len(muts)} mutations")
        return 0

    bdir = os.path.abspath(a.build_dir)
    tree, build = os.path.join(bdir, "tree"), os.path.join(bdir, "build")
    log = os.path.join(bdir, "mutate.log")
    os.makedirs(bdir, exist_ok=True)
    open(log, "w").close()
    # Ctrl-C, SIGTERM and SIGHUP stop the run between two statements; the
    # mutated file is restored by the `finally` below. (SIGINT explicitly:
    # a shell starts background jobs with it ignored.)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    t0 = time.monotonic()
    n = sync_tree(tree)
    print(f"mutate: {len(muts)} mutations; source copy {tree} ({n} files updated); "
          f"log {log}", flush=True)

    # Every mutation's text must be in its file exactly once.
    originals = {}
    for m in muts:
        path = os.path.join(tree, m.file)
        if m.file not in originals:
            try:
                with open(path, encoding="utf-8") as f:
                    originals[m.file] = f.read()
            except OSError as e:
                print(f"mutate: mutation {m.name}: {m.file}: {e.strerror}", file=sys.stderr)
                return 2
        count = originals[m.file].count("\n".join(m.old))
        if count != 1:
            print(f"mutate: mutation {m.name} (scripts/mutations.txt:{m.lineno}): its text is "
                  f"in {m.file} {count} times, not once; update the list with the code",
                  file=sys.stderr)
            return 2

    shared = os.environ.get("ERGON_SHARED_DIR") or os.path.normpath(os.path.join(ROOT, "..", "shared"))
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        cfg = ["cmake", "-S", tree, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
               "-DERGON_SANITIZE=OFF", f"-DERGON_SHARED_DIR={shared}"]
        if shutil.which("ccache"):
            cfg.append("-DCMAKE_C_COMPILER_LAUNCHER=ccache")
        if run(cfg, log):
            print(f"mutate: configuring {build} failed; see {log}", file=sys.stderr)
            return 2

    def build_targets(targets):
        return run(["cmake", "--build", build, "-j", str(a.j), "--target"] + targets, log)

    def run_tests(tests):
        rx = "^(" + "|".join(t.replace("+", "\\+") for t in tests) + ")$"
        return run(["ctest", "--test-dir", build, "-R", rx, "-j", str(a.j), "--timeout",
                    str(a.timeout), "--output-on-failure"], log, timeout=a.timeout * 2 + 60)

    # The baseline: every named test passes on the unmutated code, and
    # every named test exists (a mutation "killed" by a missing test
    # would be a lie).
    all_targets = sorted({t for m in muts for t in targets_for(m)})
    all_tests = sorted({t for m in muts for t in m.tests})
    tb = time.monotonic()
    if build_targets(all_targets):
        print(f"mutate: the unmutated build failed; see {log}", file=sys.stderr)
        return 2
    listed = subprocess.run(["ctest", "--test-dir", build, "-N"], capture_output=True,
                            text=True).stdout
    missing = [t for t in all_tests if f": {t}\n" not in listed]
    if missing:
        print(f"mutate: no such test: {', '.join(missing)}", file=sys.stderr)
        return 2
    if run_tests(all_tests):
        print(f"mutate: the tests fail without any mutation; see {log}", file=sys.stderr)
        return 2
    print(f"mutate: baseline built and passed in {time.monotonic() - tb:.0f} s", flush=True)

    results = []
    try:
        for i, m in enumerate(muts, 1):
            path = os.path.join(tree, m.file)
            orig = originals[m.file]
            ts = time.monotonic()
            try:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(orig.replace("\n".join(m.old), "\n".join(m.new), 1))
                with open(log, "a") as f:
                    f.write(f"\n==== {m.name}\n")
                if build_targets(targets_for(m)):
                    res = "build-error"
                else:
                    res = "killed" if run_tests(m.tests) else "survived"
            finally:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(orig)
            dt = time.monotonic() - ts
            results.append((m, res, dt))
            print(f"[{i:2}/{len(muts)}] {res:11} {m.name:34} {dt:5.0f} s  {m.file}", flush=True)
    except (KeyboardInterrupt, Interrupted):
        print("\nmutate: interrupted; the source copy is restored (the working tree was "
              "never changed)", file=sys.stderr)
        return 130

    killed = [m for m, r, _ in results if r == "killed"]
    survived = [m for m, r, _ in results if r == "survived"]
    broken = [m for m, r, _ in results if r == "build-error"]
    judged = len(killed) + len(survived)
    rate = 100.0 * len(killed) / judged if judged else 0.0
    total = time.monotonic() - t0
    lines = [f"mutations: {len(results)}, killed {len(killed)}, survived {len(survived)}, "
             f"did not build {len(broken)}",
             f"kill rate: {rate:.1f} % (of {judged}; at least {a.min_kill:g} % wanted)",
             f"time: {total:.0f} s (-j {a.j})"]
    for m in survived:
        lines.append(f"SURVIVED {m.name}: {m.file}: {m.why}")
    for m in broken:
        lines.append(f"DID NOT BUILD {m.name}: {m.file} (fix the mutation; see {log})")
    print("\n".join(lines))
    with open(os.path.join(bdir, "mutate-report.txt"), "w", encoding="utf-8") as f:
        for m, r, dt in results:
            f.write(f"{r:11} {m.name:34} {dt:5.0f} s  {m.file}\n")
        f.write("\n".join(lines) + "\n")
    return 0 if rate >= a.min_kill and not broken and judged else 1


if __name__ == "__main__":
    sys.exit(main())
