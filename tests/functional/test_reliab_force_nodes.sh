#!/usr/bin/env bash
# Issue 30, case 2: --force replaces only regular files. Before, every
# writing command renamed its temporary file over whatever held the output
# name: `ergon run --out /dev/null --force` as root turned the machine's
# /dev/null into a regular file. Now a device node, FIFO, socket, symbolic
# link or folder is refused with what it is (exit 3) and left as it was,
# by every command that writes (the check is ergon_path_replaceable in
# src/core/fileio.c, called by ergon_file_check_writable before measuring
# and again just before the final rename). The device is a clone of
# /dev/null made here with mknod (root only); the real /dev/null is never
# touched. FIFOs, sockets and links need no root.
. "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
S=${ERGON_SHARED_DIR:-$ERGON_SOURCE_DIR/../shared}

# --- fixtures: a run report, a stats CSV, an HPX log, kernel samples, a db
"$E" run --device d --workload builtin:spin "${SHORT[@]}" --out "$TMP/r.json" >/dev/null 2>&1 ||
  bad "fixture run"
python3 - "$TMP/s.csv" <<'PY'
import sys
rows = ["t_start_s,t_end_s,i_avg_a,v_avg_v,digital"]
for k in range(300):
    d = 1 if 50 <= k < 250 else 0
    rows.append(f"{k/100:.2f},{(k+1)/100:.2f},{0.012 if d else 0.002},1.8,{d}")
open(sys.argv[1], "w").write("\n".join(rows) + "\n")
PY
printf 'case,impl,correct,count\nfc_a,ref,pass,100\nfc_a,ref,pass,110\n' >"$TMP/ks.csv"
"$E" db --db "$TMP/x.db" ingest "$TMP/r.json" >/dev/null 2>&1 || bad "fixture db ingest"
head -c 490 /dev/zero >"$TMP/zero490.bin"
LOG=$S/fixtures/hpx/basic.hpx.txt

make_node() { # KIND PATH
  rm -rf "$2"
  mkdir -p "$(dirname "$2")"
  case $1 in
    dev) $MKNOD "$2" c 1 3 ;;
    fifo) mkfifo "$2" ;;
    sock) python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$2" ;;
    link) echo keep >"$TMP/link_target"; ln -s "$TMP/link_target" "$2" ;;
    dir) mkdir "$2" ;;
  esac
}
still() { # KIND PATH -> 0 when PATH is still that kind of thing
  case $1 in
    dev) [ -c "$2" ] ;;
    fifo) [ -p "$2" ] ;;
    sock) [ -S "$2" ] ;;
    link) [ -L "$2" ] && [ "$(cat "$TMP/link_target")" = keep ] ;;
    dir) [ -d "$2" ] ;;
  esac
}
declare -A WHAT=([dev]="a character device" [fifo]="a FIFO" [sock]="a socket"
  [link]="a symbolic link" [dir]="a folder")

# refuse KIND NODE NAME -- command...: NODE is made KIND, the command must
# exit 3 within 60 s (a FIFO must never block it), say what NODE is, and
# leave it as it was.
refuse() {
  local kind=$1 node=$2 name=$3
  shift 4
  make_node "$kind" "$node"
  expect 3 "$name: $kind refused" -- timeout 60 "$@"
  contains "$ERR" "${WHAT[$kind]}" "$name: the message says it is ${WHAT[$kind]}"
  [ "$kind" = dir ] || contains "$ERR" "replaces only regular files" "$name: the message gives the rule"
  still "$kind" "$node" && ok "$name: the $kind is untouched" || bad "$name: the $kind was replaced"
  rm -rf "$node"
}

every_command() { # KIND
  local k=$1 D="$TMP/$1"
  refuse "$k" "$D/run.json" "run" -- "$E" run --device d --workload builtin:spin "${SHORT[@]}" \
    --out "$D/run.json" --force
  refuse "$k" "$D/key" "keygen" -- "$E" keygen --out "$D/key" --force
  rm -rf "$D/key2"*
  refuse "$k" "$D/key2.pub" "keygen (KEY.pub)" -- "$E" keygen --out "$D/key2" --force
  [ -e "$D/key2" ] && bad "keygen: the secret key was written without its .pub" || ok "keygen: nothing half-written"
  refuse "$k" "$D/r.html" "report" -- "$E" report "$TMP/r.json" --out "$D/r.html" --force
  refuse "$k" "$D/an/summary.json" "analyze" -- "$E" analyze --stats "$TMP/s.csv" --out "$D/an" --force
  refuse "$k" "$D/an2/detailed/power_summary.csv" "analyze (CSV)" -- "$E" analyze --stats "$TMP/s.csv" \
    --out "$D/an2" --force
  refuse "$k" "$D/pa/summary.json" "parse" -- "$E" parse "$LOG" --out "$D/pa" --force
  refuse "$k" "$D/pr/summary.json" "profile" -- "$E" profile --board sim --power --out "$D/pr" --force
  refuse "$k" "$D/cmp/compare.json" "compare" -- "$E" compare "$TMP/r.json" "$TMP/r.json" --out "$D/cmp" --force
  refuse "$k" "$D/trend.json" "db trend --out" -- "$E" db --db "$TMP/x.db" trend load.mean_power_w \
    --device d --out "$D/trend.json" --force
  refuse "$k" "$D/trend.html" "db trend --html" -- "$E" db --db "$TMP/x.db" trend load.mean_power_w \
    --device d --html "$D/trend.html" --force
  refuse "$k" "$D/em.json" "energy-model" -- "$E" energy-model "$TMP/r.json" --action infer \
    --allow-synthetic --out "$D/em.json" --force
  refuse "$k" "$D/kr/kernels.json" "kernels report" -- "$E" kernels report "$TMP/ks.csv" --out "$D/kr" --force
  refuse "$k" "$D/out.bin" "model infer" -- "$E" model infer "$S/fixtures/models/kws_ref_model.tflite" \
    --input "$TMP/zero490.bin" --out "$D/out.bin" --force
  refuse "$k" "$D/cap.log" "capture --log" -- "$E" capture --transport "file:$LOG" --out "$D/cap" \
    --log "$D/cap.log" --force
}

# mknod needs root: as root, or through sudo without a password (CI's
# bootstrap may run with sudo); the node lives in our own temp folder, so
# the commands (and rm) need no privilege to act on its name.
MKNOD=
if [ "$(id -u)" = 0 ]; then MKNOD=mknod
elif sudo -n true 2>/dev/null; then MKNOD="sudo -n mknod"; fi
if [ -n "$MKNOD" ]; then
  every_command dev
else
  skip_section "device nodes: mknod needs root (or sudo without a password)"
fi
every_command fifo
for k in sock link dir; do
  refuse "$k" "$TMP/$k/run.json" "run" -- "$E" run --device d --workload builtin:spin "${SHORT[@]}" \
    --out "$TMP/$k/run.json" --force
done
refuse sock "$TMP/sock/key" "keygen" -- "$E" keygen --out "$TMP/sock/key" --force

# A regular file is still replaced.
echo old >"$TMP/reg.json"
expect 0 "a regular file is replaced with --force" -- "$E" run --device d --workload builtin:spin \
  "${SHORT[@]}" --out "$TMP/reg.json" --force
"$E" verify "$TMP/reg.json" >/dev/null 2>&1 && ok "the replacement verifies" || bad "no report"
finish
