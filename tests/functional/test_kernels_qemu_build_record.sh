#!/usr/bin/env bash
# The full build record of `ergon kernels run --board qemu-an547` (issue 37,
# docs/METHOD.md "Kernels"): the ELF's SHA-256 and the link map's (written
# into DIR/firmware with -Wl,-Map) checked with sha256sum; where code, data,
# bss, the stack and the scratch column were placed checked against
# arm-none-eabi-size -A and arm-none-eabi-nm -S of the same ELF (ergon reads
# the ELF itself); the output buffer worked out by hand: after the case blob
# in DDR (0x60000000 + the blob's size rounded up to 16) and as large as the
# largest output, conv c1's 8 x 8 x 8 = 512 bytes. Then `ergon report` of
# the artifact in headless Chromium: the placement table and the regr
# column, every cell equal to the artifact (report_dom_check.py reads the
# JSON itself). Needs arm-none-eabi-gcc, qemu-system-arm and chromium
# (scripts/bootstrap.sh).
. "$(dirname "$0")/run_lib.sh"
command -v arm-none-eabi-gcc >/dev/null || { bad "arm-none-eabi-gcc missing (scripts/bootstrap.sh)"; finish; }
command -v qemu-system-arm >/dev/null || { bad "qemu-system-arm missing (scripts/bootstrap.sh)"; finish; }

printf 'conv c1 in=8x8x4 out_c=8 filter=3x3 pad=same\nfc f1 accum=16 units=8\n' >"$TMP/s.txt"
expect 0 "kernels run on qemu-an547" -- "$ERGON_BIN" kernels run --board qemu-an547 \
  --shapes "$TMP/s.txt" --impl ref,mve --iterations 3 --warmup 1 --quiet --out "$TMP/k"
ELF="$TMP/k/firmware/ergon_an547_kernels.elf"
MAP="$TMP/k/firmware/ergon_an547_kernels.map"
[ -s "$MAP" ] && ok "the link map is in the output folder" || bad "no $MAP"
arm-none-eabi-size -A -x "$ELF" >"$TMP/size.txt" || bad "arm-none-eabi-size"
arm-none-eabi-nm -S "$ELF" >"$TMP/nm.txt" || bad "arm-none-eabi-nm"
python3 - "$TMP" "$(sha256sum "$ELF" | cut -d' ' -f1)" "$(sha256sum "$MAP" | cut -d' ' -f1)" \
  "$(stat -c %s "$TMP/k/firmware/cases.bin")" <<'PY' && ok "digests, link map and placement agree with sha256sum, size and nm" || bad "build record"
import json, os, sys
t, elf_sha, map_sha, blob_bytes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
b = json.load(open(t + "/k/kernels.json"))["build"]
assert os.path.samefile(b["elf"], t + "/k/firmware/ergon_an547_kernels.elf"), b["elf"]
assert os.path.samefile(b["link_map"], t + "/k/firmware/ergon_an547_kernels.map"), b["link_map"]
assert b["elf_sha256"] == elf_sha and b["link_map_sha256"] == map_sha, (b["elf_sha256"], b["link_map_sha256"])
p = b["placement"]
assert "elf32" in p["tool"], p["tool"]
# arm-none-eabi-size -A -x: "name size addr" rows in hex.
size = {}
for line in open(t + "/size.txt"):
    f = line.split()
    if len(f) == 3 and f[0].startswith("."):
        size[f[0]] = (int(f[2], 16), int(f[1], 16))
for key, sec in (("code", ".text"), ("data", ".data"), ("bss", ".bss"), ("stack", ".stack")):
    assert p[key]["section"] == sec and (p[key]["addr"], p[key]["size"]) == size[sec], (key, p[key], size[sec])
    assert p[key]["addr_hex"] == "0x%08x" % size[sec][0], p[key]
assert p["code"]["addr"] == 0 and p["bss"]["addr"] == 0x20000000  # ITCM, DTCM (an547.ld)
# arm-none-eabi-nm -S: "addr size type name"; col is the Helium conv's column.
col = [l.split() for l in open(t + "/nm.txt") if l.split()[-1:] == ["col"]]
assert len(col) == 1 and col[0][2] in ("b", "B"), col
assert (p["scratch"]["symbol"], p["scratch"]["addr"], p["scratch"]["size"]) == ("col", int(col[0][0], 16), int(col[0][1], 16)), p["scratch"]
bss = size[".bss"]
assert p["scratch"]["section"] == ".bss" and bss[0] <= p["scratch"]["addr"] < bss[0] + bss[1], p["scratch"]
o = p["output_buffer"]
assert o["addr"] == 0x60000000 + (blob_bytes + 15) // 16 * 16 and o["size"] == 8 * 8 * 8, (o, blob_bytes)
PY

command -v chromium >/dev/null || { bad "chromium missing (scripts/bootstrap.sh)"; finish; }
HERE=$(cd "$(dirname "$0")" && pwd)
SHOTS=${ERGON_BUILD_DIR:?}/test-artifacts/kernels_qemu_build_record
mkdir -p "$SHOTS"
. "$HERE/browse_lib.sh"
expect 0 "report of the qemu-an547 artifact" -- "$ERGON_BIN" report "$TMP/k/kernels.json" --out "$TMP/k.html"
browse "$TMP/k.html" kq
python3 "$HERE/report_dom_check.py" "$TMP/kq.dom" "$TMP/k/kernels.json" >"$TMP/dom.txt" &&
  ok "report: every cell equals the artifact" || { bad "report: DOM check"; cat "$TMP/dom.txt"; }
# The placement rows: code, data, bss, stack with section, address, size and
# memory; scratch with its symbol too; the output buffer with address, size
# and memory: 4 x 4 + 5 + 3 = 24 cells, each checked above.
n=$(grep -o 'data-text-path="build.placement\.[a-z_]*\.[a-z_]*"' "$TMP/kq.dom" | wc -l)
[ "$n" = 24 ] && ok "report: the placement table (24 cells)" || bad "report: $n placement cells, wanted 24"
grep -q 'data-text-path="build.placement.scratch.symbol">col<' "$TMP/kq.dom" &&
  ok "report: the scratch column named" || bad "report: no scratch symbol"
# regr: 2 cases x ref,mve; 3 iterations are too few (n >= 6), so "no".
[ "$(grep -o 'valid_for_regression">no<' "$TMP/kq.dom" | wc -l)" = 4 ] &&
  ok "report: regr no for the 4 pairs (n = 3 < 6)" || bad "report: regr cells"
# PMU: the five default events, unsupported on QEMU, per pair: 20 cells.
[ "$(grep -o '\.pmu\.ARM_PMU_[A-Z_]*">unsupported<' "$TMP/kq.dom" | wc -l)" = 20 ] &&
  ok "report: PMU unsupported per case, impl and event" || bad "report: PMU cells"
finish
