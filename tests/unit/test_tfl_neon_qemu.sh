#!/usr/bin/env bash
# The interpreter's AArch64 NEON path (target/port/aarch64/tfl_kern_neon.c),
# tested for real on this x86-64 machine: the target runtime and the NEON
# port are cross-built with aarch64-linux-gnu-gcc (UBSan on; ASan does not
# run under qemu-user) and run under qemu-aarch64:
#   - tests/unit/test_tfl_conv_shapes.c (through tests/support/cross's
#     cmocka subset): every path's CONV_2D, DEPTHWISE_CONV_2D,
#     FULLY_CONNECTED, ADD and requantization against the reference loops
#     on the random shapes and the million requantization triples; its
#     digest of the reference outputs must be the native build's;
#   - tests/support/tfl_check/tfl_paths_check.c: the four MLPerf Tiny models
#     on the ten oracle inputs, every operator's output as recorded
#     (tests/oracle/tfl_op_outputs.txt), portable and NEON, filters packed
#     once and per invoke; each model and input must give the same bytes as
#     the native build's paths (portable, SSE4.1, AVX2).
# Both must report the neon path as run. The toolchain is in
# scripts/bootstrap.sh: without it this test fails (it never skips).
set -euo pipefail
src=${ERGON_SOURCE_DIR:?}
build=${ERGON_BUILD_DIR:?}
shared=${ERGON_SHARED_DIR:?}
sysroot=/usr/aarch64-linux-gnu

missing=""
for tool in aarch64-linux-gnu-gcc aarch64-linux-gnu-ar aarch64-linux-gnu-nm qemu-aarch64; do
	command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
[ -d "$sysroot/lib" ] || missing="$missing $sysroot (libc6-dev-arm64-cross)"
if [ -n "$missing" ]; then
	echo "FAIL: missing:$missing; install gcc-aarch64-linux-gnu libc6-dev-arm64-cross" \
		"qemu-user (scripts/bootstrap.sh)" >&2
	exit 1
fi
native_check="$build/ergon_tfl_paths_check"
native_shapes="$build/unit_test_tfl_conv_shapes"
for exe in "$native_check" "$native_shapes"; do
	[ -x "$exe" ] || { echo "FAIL: $exe not built (cmake --build $build)" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ergon-neon-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cc=aarch64-linux-gnu-gcc
flags=(-std=c11 -O1 -g -Wall -Wextra -Wconversion -Werror -D_GNU_SOURCE
	-fsanitize=undefined -fno-sanitize-recover=undefined)
mkdir -p "$tmp/obj"
# The interpreter as ert_host builds it on an AArch64 host
# (target/CMakeLists.txt): its files, the layer hooks and the formatter it
# calls (the link names anything else it comes to need), two compilers at
# a time; a failed one leaves its object missing.
sources=("$src"/target/src/tfl_*.c "$src"/target/src/{layer,fmt}.c
	"$src/target/port/aarch64/tfl_kern_neon.c")
jobs=0
for f in "${sources[@]}"; do
	"$cc" "${flags[@]}" -ffreestanding -DERT_TFL_SIMD_AARCH64=1 -I"$src/target/include" \
		-c "$f" -o "$tmp/obj/$(basename "$f" .c).o" &
	jobs=$((jobs + 1))
	if [ "$jobs" -ge 2 ]; then
		wait -n || true
		jobs=$((jobs - 1))
	fi
done
wait
for f in "${sources[@]}"; do
	[ -f "$tmp/obj/$(basename "$f" .c).o" ] || { echo "FAIL: $f did not compile for AArch64" >&2; exit 1; }
done
aarch64-linux-gnu-ar rcs "$tmp/libert.a" "$tmp"/obj/*.o
# The port was compiled in, not an empty file: the kernel table is there.
aarch64-linux-gnu-nm "$tmp/obj/tfl_kern_neon.o" | grep -Eq ' [DR] tfl_kern_neon$' ||
	{ echo "FAIL: tfl_kern_neon.o has no tfl_kern_neon table" >&2; exit 1; }
"$cc" "${flags[@]}" -I"$src/tests/support/cross" -I"$src/target/include" \
	"$src/tests/unit/test_tfl_conv_shapes.c" "$tmp/libert.a" -o "$tmp/shapes"
"$cc" "${flags[@]}" -I"$src/target/include" \
	"$src/tests/support/tfl_check/tfl_paths_check.c" "$tmp/libert.a" -o "$tmp/check"
file_out=$(od -An -tx1 -j18 -N2 "$tmp/check" | tr -d ' ')
[ "$file_out" = "b700" ] || { echo "FAIL: $tmp/check is not an AArch64 ELF (e_machine $file_out)" >&2; exit 1; }

run() { qemu-aarch64 -L "$sysroot" "$@"; }

# The kernels on random shapes.
run "$tmp/shapes" >"$tmp/shapes.out" || { cat "$tmp/shapes.out"; echo "FAIL: kernel shapes on AArch64" >&2; exit 1; }
cross_ref=$(sed -n 's/^reference outputs: \(fnv1a64 [0-9a-f]* over [0-9]* bytes\); paths \(.*\)$/\1|\2/p' "$tmp/shapes.out")
[ "${cross_ref#*|}" = "portable,neon" ] ||
	{ cat "$tmp/shapes.out"; echo "FAIL: AArch64 kernel paths '${cross_ref#*|}', want portable,neon" >&2; exit 1; }
"$native_shapes" >"$tmp/shapes.native" 2>&1
native_ref=$(sed -n 's/^reference outputs: \(fnv1a64 [0-9a-f]* over [0-9]* bytes\); paths \(.*\)$/\1|\2/p' "$tmp/shapes.native")
[ -n "${native_ref%|*}" ] && [ "${cross_ref%|*}" = "${native_ref%|*}" ] ||
	{ echo "FAIL: reference outputs on AArch64 '${cross_ref%|*}', natively '${native_ref%|*}'" >&2; exit 1; }
echo "shapes: AArch64 portable and neon = reference; ${cross_ref%|*} as on x86-64 (${native_ref#*|})"

# The models, every operator as recorded, and as the native paths give them.
oracle="$src/tests/oracle/tfl_op_outputs.txt"
models="$shared/fixtures/models"
run "$tmp/check" "$oracle" "$models" >"$tmp/cross.txt" || { echo "FAIL: models on AArch64" >&2; exit 1; }
"$native_check" "$oracle" "$models" >"$tmp/native.txt"
n_neon=$(awk '$3 == "neon"' "$tmp/cross.txt" | wc -l)
n_port=$(awk '$3 == "portable"' "$tmp/cross.txt" | wc -l)
[ "$n_neon" -eq 80 ] && [ "$n_port" -eq 80 ] ||
	{ echo "FAIL: AArch64 runs: $n_neon neon, $n_port portable; want 80 each (40 inputs x 2 packings)" >&2; exit 1; }
# One digest per model and input over every path and packing, on both.
awk '{print $1, $2, $5}' "$tmp/cross.txt" | sort -u >"$tmp/cross.u"
awk '{print $1, $2, $5}' "$tmp/native.txt" | sort -u >"$tmp/native.u"
[ "$(wc -l <"$tmp/cross.u")" -eq 40 ] || { echo "FAIL: AArch64 paths disagree:" >&2; cat "$tmp/cross.u" >&2; exit 1; }
diff "$tmp/native.u" "$tmp/cross.u" >&2 || { echo "FAIL: AArch64 outputs differ from x86-64's" >&2; exit 1; }
echo "models: 4 models x 10 inputs, AArch64 portable and neon = x86-64 $(awk '{print $3}' "$tmp/native.txt" | sort -u | tr '\n' ' ')= recorded"
