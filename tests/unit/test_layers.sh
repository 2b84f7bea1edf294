#!/usr/bin/env bash
# Arrows point down (docs/internals/layers.md): scripts/check_layers.py must
# find nothing in the tree, and must find each kind of violation in a small
# tree built here to hold one of each (so the check itself can fail).
set -euo pipefail
src=${ERGON_SOURCE_DIR:?}
chk="$src/scripts/check_layers.py"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ergon-layers-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The tree itself.
python3 "$chk" "$src"

# A tree with one of each violation.
t="$tmp/tree"
mkdir -p "$t/include/ergon" "$t/src/core" "$t/src/engines/e" "$t/src/pipelines" \
	"$t/src/cli" "$t/src/drivers/d" "$t/sim/src" "$t/target/src"
cat >"$t/include/ergon/pipe.h" <<'H'
int ergon_pipe_run(void);
H
cat >"$t/include/ergon/eng.h" <<'H'
int ergon_eng_go(void);
H
cat >"$t/src/pipelines/pipe.c" <<'C'
#include "ergon/pipe.h"
#include "ergon/eng.h"
int ergon_pipe_run(void)
{
	return ergon_eng_go();
}
C
# upward include + upward call: an engine uses a pipeline
cat >"$t/src/engines/e/eng.c" <<'C'
#include "ergon/eng.h"
#include "ergon/pipe.h"
int ergon_eng_go(void)
{
	return 0;
}
int ergon_eng_back(void)
{
	return ergon_pipe_run();
}
C
# the CLI runs an engine itself
cat >"$t/src/cli/cmd_x.c" <<'C'
#include "ergon/eng.h"
int cli_x(void)
{
	return ergon_eng_go();
}
C
# a circle of two driver files
cat >"$t/src/drivers/d/a.c" <<'C'
int d_b(void);
int d_a(void)
{
	return d_b();
}
C
cat >"$t/src/drivers/d/b.c" <<'C'
int d_a(void);
int d_b(void)
{
	return d_a();
}
C
# the board calls a pipeline; the target includes a host header
cat >"$t/sim/src/board.c" <<'C'
#include "ergon/pipe.h"
int board(void)
{
	return ergon_pipe_run();
}
C
cat >"$t/target/src/t.c" <<'C'
#include "ergon/eng.h"
int t(void)
{
	return 0;
}
C
set +e
out=$(python3 "$chk" "$t")
rc=$?
set -e
printf '%s\n' "$out"
[ "$rc" -eq 1 ] || { echo "expected exit 1 on the bad tree, got $rc"; exit 1; }
expect() {
	grep -qF -- "$1" <<<"$out" || { echo "missing: $1"; exit 1; }
}
expect "src/engines/e/eng.c:2: upward include: src/engines/e/eng.c (engines) includes include/ergon/pipe.h (pipelines)"
expect "upward call: src/engines/e/eng.c (engines) uses ergon_pipe_run() of src/pipelines/pipe.c (pipelines)"
expect "src/cli/cmd_x.c: the CLI calls pipelines only: ergon_eng_go() is in src/engines/e/eng.c (engines)"
expect "circle of files: src/drivers/d/a.c, src/drivers/d/b.c"
expect "sim/src/board.c:1: upward include: sim/src/board.c (sim) includes include/ergon/pipe.h (pipelines)"
expect "target/src/t.c:1: target runtime includes host header include/ergon/eng.h"
# One header declaring functions of two layers.
cat >"$t/include/ergon/eng.h" <<'H'
int ergon_eng_go(void);
int ergon_pipe_run(void);
H
set +e
out=$(python3 "$chk" "$t")
set -e
expect "include/ergon/eng.h: declares functions of several layers (engines: ergon_eng_go, pipelines: ergon_pipe_run)"
echo "test_layers: ok"
