#!/usr/bin/env bash
# Colour for verdicts and issue severities on a terminal only (issue 35):
# a pty from util-linux `script` gets the escape sequences, a pipe does
# not; NO_COLOR (no-color.org: set and not empty) and TERM=dumb turn it
# off; --color=always|never overrides both, after the command or before
# it. The verdict is a capture cut before HPX_END: DEGRADED, exit 4
# (docs/internals/cli.md). The sequences expected are ECMA-48 SGR 33
# (yellow) and SGR 0 (reset), written here, not taken from ergon.
. "$(dirname "$0")/run_lib.sh"
: "${ERGON_SHARED_DIR:?}"
E=$ERGON_BIN
command -v script >/dev/null || { bad "script (bsdutils) is not installed: scripts/bootstrap.sh"; finish; }
grep -v -- '--- HPX_END ---' "$ERGON_SHARED_DIR/fixtures/hpx/legacy.hpx.txt" >"$TMP/cut.hpx"
ESC=$'\033'
YELLOW="${ESC}[33mDEGRADED${ESC}[0m (exit 4)"
n=0
cap() { n=$((n + 1)); echo "$E $* capture --transport file:$TMP/cut.hpx --out $TMP/c$n --force"; }
on_tty() { # on_tty ENV... -- ARGS...: the capture on a pty, its output in $T
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" script -qfec "$(cap "$@")" /dev/null >"$TMP/tty.out" 2>&1 </dev/null
  T=$(cat "$TMP/tty.out")
}
colored() { case "$T" in *"$YELLOW"*) ok "$1: coloured";; *) bad "$1: not coloured: ${T:0:300}";; esac; }
plain() {
  case "$T" in *"$ESC["*) bad "$1: escape sequences: ${T:0:300}";; *"DEGRADED (exit 4)"*) ok "$1: plain";;
    *) bad "$1: no verdict line: ${T:0:300}";; esac
}
on_tty TERM=xterm -- ; colored "a terminal"
on_tty TERM=xterm NO_COLOR=1 -- ; plain "NO_COLOR=1 on a terminal"
on_tty TERM=xterm NO_COLOR= -- ; colored "NO_COLOR empty (no-color.org: ignored)"
on_tty TERM=dumb -- ; plain "TERM=dumb"
on_tty TERM=xterm -- --color=never ; plain "--color=never before the command"
on_tty TERM=xterm NO_COLOR=1 -- --color=always ; colored "--color=always beats NO_COLOR"
# A pipe: nothing, unless --color=always (after the command this time).
"$E" capture --transport "file:$TMP/cut.hpx" --out "$TMP/p1" >"$TMP/o" 2>"$TMP/e"
T=$(cat "$TMP/e"); plain "a pipe"
"$E" capture --transport "file:$TMP/cut.hpx" --out "$TMP/p2" --color=always >"$TMP/o" 2>"$TMP/e"
T=$(cat "$TMP/e"); colored "--color=always on a pipe"
"$E" capture --transport "file:$TMP/cut.hpx" --out "$TMP/p3" --color >"$TMP/o" 2>"$TMP/e"
T=$(cat "$TMP/e"); colored "a bare --color means always"
# --json never carries escape sequences, even with --color=always.
"$E" capture --transport "file:$TMP/cut.hpx" --out "$TMP/p4" --color=always --json >"$TMP/o" 2>"$TMP/e"
case "$(cat "$TMP/o" "$TMP/e")" in *"$ESC["*) bad "--json with --color=always: escapes";; *) ok "--json: no colour";; esac
# A figure or file name is never coloured: the summary on stdout is plain.
on_tty TERM=xterm -- ; case "$(grep -v DEGRADED "$TMP/tty.out")" in *"$ESC["*) bad "colour outside the verdict word";; *) ok "only the verdict word is coloured";; esac
# verify: OK in green (SGR 32) on a terminal, plain on a pipe.
"$E" run --device d --workload builtin:spin,iters=2000 --idle-s 0.2 --windows 2 --window-s 0.25 \
  --out "$TMP/r.json" >/dev/null 2>&1
TERM=xterm script -qfec "$E verify $TMP/r.json" /dev/null >"$TMP/v.out" 2>&1 </dev/null
case "$(cat "$TMP/v.out")" in *": ${ESC}[32mOK${ESC}[0m: report_id matches"*) ok "verify: OK in green on a terminal";;
  *) bad "verify OK not coloured: $(head -c 300 "$TMP/v.out")";; esac
case "$("$E" verify "$TMP/r.json")" in *"$ESC["*) bad "verify on a pipe: escapes";; *": OK: report_id"*) ok "verify on a pipe: plain OK";;
  *) bad "verify on a pipe: no OK";; esac
# Wrong values: usage errors that name the fix.
expect 2 "--color=alway" -- "$E" capture --color=alway --transport "file:$TMP/cut.hpx"
contains "$ERR" "did you mean 'always'?" "suggests always"
expect 2 "--color=blue before the command" -- "$E" --color=blue capture --transport x
contains "$ERR" "--color=auto, --color=always or --color=never" "names the three values"
expect 0 "every --help lists --color" -- "$E" verify --help
contains "$OUT" "--color[=WHEN]" "verify --help shows --color"
finish
