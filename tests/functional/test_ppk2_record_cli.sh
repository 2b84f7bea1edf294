#!/usr/bin/env bash
# ergon record / power-on as a user meets them, against the PPK2 simulator
# program (ergon_ppk2_sim): the progress line on a TTY (and only there),
# wrong flags, a missing voltage, help texts, a garbled calibration, R = 0.
. "$(dirname "$0")/run_lib.sh"
SIM=${ERGON_BUILD_DIR:?}/ergon_ppk2_sim
start_sim() { # start_sim ARGS...: sets SIMPID and PORT
  coproc SIMP { exec "$SIM" "$@"; }
  SIMPID=$SIMP_PID
  read -r PORT <&"${SIMP[0]}"
}
stop_sim() { kill "$SIMPID" 2>/dev/null; wait "$SIMPID" 2>/dev/null; }

start_sim --current-a 0.004 --burst-a 0.004 --period-s 0
# A TTY: the progress line shows elapsed, samples, drops, mean current.
script -qfec "$ERGON_BIN record --instrument ppk2:$PORT --instrument-opt vdd_mv=3000 \
  --duration-s 1.2 --out $TMP/tty.jls" /dev/null >"$TMP/tty.out" 2>&1
T=$(tr '\r' '\n' <"$TMP/tty.out")
contains "$T" " samples " "progress line on a TTY"
contains "$T" " dropped  mean " "progress shows drops and the mean current"
# By hand: 4 mA on range 1 (101.65 ohm) = 0.40660 V = 9252.3 steps of
# 4.39453125e-5 V -> 9252 -> 9252 x 4.39453125e-5 / 101.65 = 3.99982 mA.
contains "$T" "recorded 120000 samples (1.200 s, 0 dropped, mean 0.00399982 A)" "summary line"
# Not a TTY: no progress line.
expect 0 "record off a TTY" -- "$ERGON_BIN" record --instrument "ppk2:$PORT" \
  --instrument-opt vdd_mv=3000 --duration-s 0.3 --out "$TMP/plain.jls"
case "$ERR" in *$'\r'*) bad "progress line off a TTY";; *) ok "no progress line off a TTY";; esac
# Usage errors name the fix.
expect 2 "unknown flag" -- "$ERGON_BIN" record --instrument "ppk2:$PORT" --durration 1 --out x.jls
contains "$ERR" "unknown option '--durration'; did you mean '--duration-s'?" "names the bad flag and the nearest"
expect 2 "no --out" -- "$ERGON_BIN" record --instrument "ppk2:$PORT" --duration-s 1
contains "$ERR" "missing required option --out" "asks for --out"
expect 2 "no voltage" -- "$ERGON_BIN" record --instrument "ppk2:$PORT" --duration-s 1 \
  --out "$TMP/v.jls"
contains "$ERR" "vdd_mv=N" "asks for vdd_mv"
expect 2 "bad option" -- "$ERGON_BIN" record --instrument "ppk2:$PORT" \
  --instrument-opt vdd_mv=3000 --instrument-opt mode=both --duration-s 1 --out "$TMP/v.jls"
contains "$ERR" "mode=both: expected ampere" "names the option"
expect 2 "no stop condition off a terminal" -- "$ERGON_BIN" record --instrument "ppk2:$PORT" \
  --instrument-opt vdd_mv=3000 --out "$TMP/v.jls"
expect 3 "not a streaming instrument" -- "$ERGON_BIN" record --instrument synthetic \
  --duration-s 1 --out "$TMP/s.jls"
contains "$ERR" "streams every sample" "says why"
expect 0 "record --help" -- "$ERGON_BIN" record --help
contains "$OUT" "--until-gate-falls" "help lists --until-gate-falls"
expect 0 "power-on --help" -- "$ERGON_BIN" power-on --help
contains "$OUT" "--off-on-exit" "help lists --off-on-exit"
stop_sim

# A garbled calibration is refused at open, naming the line.
start_sim --garbled
expect 3 "garbled calibration" -- "$ERGON_BIN" record --instrument "ppk2:$PORT" \
  --instrument-opt vdd_mv=3000 --duration-s 0.2 --out "$TMP/g.jls"
contains "$ERR" "calibration line 2" "names the line"
stop_sim
# R = 0 on every range: recorded with the default shunts, and said.
start_sim --r-zero --period-s 0
expect 0 "all-zero shunts" -- "$ERGON_BIN" record --instrument "ppk2:$PORT" \
  --instrument-opt vdd_mv=3000 --duration-s 0.2 --out "$TMP/r.jls"
contains "$ERR" "instrument.calibration_defaulted" "reports the defaulted calibration"
stop_sim
finish
