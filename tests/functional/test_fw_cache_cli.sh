#!/usr/bin/env bash
# The firmware object cache (docs/internals/fw_cache.md) as a user meets it,
# through `ergon profile MODEL.tflite --board qemu-an547` on kws_ref_model:
#   two profiles started at once on one cold cache both succeed, each object
#   is compiled once between them, and both firmwares have the same digest
#   (elf_sha256, checked here against sha256 of the ELF file itself);
#   a truncated and a corrupted cache entry are detected and rebuilt (the
#   same firmware), after which every object is a hit again;
#   --no-cache compiles every object and leaves the cache untouched (every
#   entry's name, size and mtime), and creates no cache at all when none is
#   there; a cache folder that cannot be made builds uncached and says why;
#   a profile killed while it builds leaves nothing that a later one uses
#   wrongly (the same firmware);
#   a wrong spelling of the flag is refused.
# The unit count is counted here from target/src (plus the four port files
# and the model's data), not taken from ergon. Needs arm-none-eabi-gcc and
# qemu-system-arm (scripts/bootstrap.sh).
. "$(dirname "$0")/run_lib.sh"
command -v arm-none-eabi-gcc >/dev/null || { bad "arm-none-eabi-gcc missing (scripts/bootstrap.sh)"; finish; }
command -v qemu-system-arm >/dev/null || { bad "qemu-system-arm missing (scripts/bootstrap.sh)"; finish; }
MODEL=${ERGON_SHARED_DIR:?}/fixtures/models/kws_ref_model.tflite
SRC=${ERGON_SOURCE_DIR:?}
export ERGON_TARGET_DIR=$SRC/target
export XDG_CACHE_HOME=$TMP/xdg
OBJ=$XDG_CACHE_HOME/ergon/firmware/v1/objects
N=$(( $(ls "$SRC"/target/src/*.c | wc -l) + 4 + 1 ))

# check FOLDER... : every summary.json bit-exact, its ELF's digest recorded
# truly; prints "ELF_SHA BUILT HIT OFF UNITS" per folder.
check() {
  python3 - "$@" <<'PY'
import hashlib, json, sys
for d in sys.argv[1:]:
    s = json.load(open(d + "/summary.json"))
    assert s["correctness"]["bit_exact"] is True, d
    b = s["model"]["builds"][0]
    sha = hashlib.sha256(open(b["elf"], "rb").read()).hexdigest()
    assert sha == b["elf_sha256"], (d, sha, b["elf_sha256"])
    hows = [u["cache"] for u in b["compile"]["units"]]
    print(sha, hows.count("built"), hows.count("hit"), hows.count("off"), len(hows))
PY
}
listing() { (cd "$XDG_CACHE_HOME" 2>/dev/null && find . -printf '%p %s %T@\n' | sort); }

# 1. Two at once on a cold cache.
"$ERGON_BIN" profile "$MODEL" --board qemu-an547 --out "$TMP/a" >"$TMP/a.out" 2>&1 &
pa=$!
"$ERGON_BIN" profile "$MODEL" --board qemu-an547 --out "$TMP/b" >"$TMP/b.out" 2>&1 &
pb=$!
wait $pa; ra=$?
wait $pb; rb=$?
[ $ra = 0 ] && [ $rb = 0 ] && ok "two concurrent profiles on a cold cache both succeed" ||
  { bad "concurrent profiles: exit $ra and $rb"; tail -5 "$TMP/a.out" "$TMP/b.out"; }
R=$(check "$TMP/a" "$TMP/b") || bad "summaries of a and b"
echo "$R"
A=$(echo "$R" | sed -n 1p); B=$(echo "$R" | sed -n 2p)
SHA=${A%% *}
[ -n "$SHA" ] && [ "$SHA" = "${B%% *}" ] && ok "both firmwares have the same digest" || bad "digests differ: $A / $B"
read -r _ ba ha _ ua <<<"$A"; read -r _ bb hb _ ub <<<"$B"
[ "$ua" = $N ] && [ "$ub" = $N ] && ok "$N units each" || bad "units: $ua $ub, wanted $N"
[ $((ba + bb)) = $N ] && [ $((ha + hb)) = $N ] && ok "each object compiled once between them" ||
  bad "built $ba+$bb, hit $ha+$hb (wanted $N and $N)"
[ "$(find "$OBJ" -name '*.o' | wc -l)" = $N ] && ok "$N entries in the cache" || bad "entries: $(find "$OBJ" -name '*.o' | wc -l)"

# 2. A truncated and a corrupted entry: never used, rebuilt.
e1=$(find "$OBJ" -name '*.o' | sort | sed -n 2p)
e2=$(find "$OBJ" -name '*.o' | sort | sed -n 9p)
truncate -s $(( $(stat -c %s "$e1") / 2 )) "$e1"
python3 - "$e2" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) - 64] ^= 0x01
open(p, "wb").write(bytes(b))
PY
expect 0 "profile after two entries were damaged" -- "$ERGON_BIN" profile "$MODEL" --board qemu-an547 --out "$TMP/c"
read -r sha bc hc _ _ <<<"$(check "$TMP/c")"
[ "$bc" = 2 ] && [ "$hc" = $((N - 2)) ] && ok "the two damaged entries rebuilt, the rest hits" || bad "built $bc hit $hc"
[ "$sha" = "$SHA" ] && ok "the same firmware after the rebuild" || bad "digest $sha, wanted $SHA"
expect 0 "profile once more" -- "$ERGON_BIN" profile "$MODEL" --board qemu-an547 --out "$TMP/d"
read -r sha bd hd _ _ <<<"$(check "$TMP/d")"
[ "$bd" = 0 ] && [ "$hd" = $N ] && [ "$sha" = "$SHA" ] && ok "the rebuilt entries are used" || bad "built $bd hit $hd $sha"

# 3. --no-cache: every object compiled, the cache untouched.
before=$(listing)
sleep 1.1 # an mtime changed now would differ from one written before
expect 0 "profile --no-cache" -- "$ERGON_BIN" profile "$MODEL" --board qemu-an547 --out "$TMP/e" --no-cache
read -r sha be he oe _ <<<"$(check "$TMP/e")"
[ "$oe" = $N ] && [ "$be" = 0 ] && [ "$he" = 0 ] && ok "--no-cache compiles every object" || bad "built $be hit $he off $oe"
[ "$sha" = "$SHA" ] && ok "--no-cache links the same firmware" || bad "digest $sha, wanted $SHA"
[ "$(listing)" = "$before" ] && ok "--no-cache leaves the cache untouched" || bad "the cache changed under --no-cache"
XDG_CACHE_HOME=$TMP/xdg-none expect 0 "profile --no-cache, no cache there" -- \
  "$ERGON_BIN" profile "$MODEL" --board qemu-an547 --out "$TMP/f" --no-cache
[ ! -e "$TMP/xdg-none" ] && ok "--no-cache creates no cache" || bad "--no-cache created $TMP/xdg-none"

# 4. A cache that cannot be made: built uncached, the record says why.
: >"$TMP/a-file"
XDG_CACHE_HOME=$TMP/a-file expect 0 "profile with XDG_CACHE_HOME a plain file" -- \
  "$ERGON_BIN" profile "$MODEL" --board qemu-an547 --out "$TMP/g"
python3 - "$TMP/g" "$SHA" <<'PY' && ok "built uncached, the same firmware, cache_note says why" || bad "record of an unusable cache"
import json, sys
b = json.load(open(sys.argv[1] + "/summary.json"))["model"]["builds"][0]
assert b["elf_sha256"] == sys.argv[2]
c = b["compile"]
assert "cache" not in c and "a-file" in c["cache_note"], c.get("cache_note")
assert all(u["cache"] == "off" for u in c["units"])
PY

# 5. Killed while building (the kill lands wherever it lands): a later
# profile succeeds with the same firmware.
export XDG_CACHE_HOME=$TMP/xdg-kill
for delay in 0.3 1.0 2.0; do
  "$ERGON_BIN" profile "$MODEL" --board qemu-an547 --out "$TMP/k$delay" >/dev/null 2>&1 &
  pk=$!
  sleep $delay
  kill -KILL $pk 2>/dev/null
  wait $pk 2>/dev/null
done
expect 0 "profile after three killed ones" -- "$ERGON_BIN" profile "$MODEL" --board qemu-an547 --out "$TMP/h"
read -r sha _ _ _ uh <<<"$(check "$TMP/h")"
[ "$sha" = "$SHA" ] && [ "$uh" = $N ] && ok "the same firmware after killed builders" || bad "digest $sha, wanted $SHA"
expect 0 "and once more" -- "$ERGON_BIN" profile "$MODEL" --board qemu-an547 --out "$TMP/i"
read -r sha bi hi _ _ <<<"$(check "$TMP/i")"
[ "$bi" = 0 ] && [ "$hi" = $N ] && [ "$sha" = "$SHA" ] && ok "every object a hit" || bad "built $bi hit $hi"

# 6. A wrong flag.
expect 2 "--no-cach is refused" -- "$ERGON_BIN" profile "$MODEL" --board qemu-an547 --out "$TMP/j" --no-cach
contains "$ERR" "--no-cach" "the error names the wrong flag"
finish
