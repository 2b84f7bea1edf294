#!/usr/bin/env bash
# Code and RAM of the target runtime alone for Cortex-M55 (arm-none-eabi),
# profile build and power build, per object and in total, before the
# linker's section GC (an upper bound), plus the linked an547 firmware
# images if a build folder is given. Figures go to docs/PERFORMANCE.md.
#   scripts/target_sizes.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
inc="$(arm-none-eabi-gcc -print-file-name=include)"
flags=(-mcpu=cortex-m55 -mthumb -mfloat-abi=hard -std=c11 -O2 -ffreestanding -nostdinc
       -isystem "$inc" -ffunction-sections -fdata-sections -Wall -Wextra -Wconversion -Werror
       -I"$root/target/include")
for build in profile power; do
  mkdir -p "$tmp/$build"
  extra=()
  [ "$build" = power ] && extra=(-DERT_POWER_BUILD=1)
  for src in "$root"/target/src/*.c; do
    name="$(basename "$src" .c)"
    if [ "$build" = power ] && { [ "$name" = emit ] || [ "$name" = profile ]; }; then continue; fi
    arm-none-eabi-gcc "${flags[@]}" "${extra[@]}" -c "$src" -o "$tmp/$build/$name.o"
  done
  echo "== runtime objects, $build build (text = code + rodata, bss = RAM)"
  arm-none-eabi-size -t "$tmp/$build"/*.o | sed "s|$tmp/$build/||"
done
if [ $# -ge 1 ]; then
  echo "== linked an547 firmware (runtime + port + example network + 16 KiB stack)"
  arm-none-eabi-size "$1"/target/an547/ergon_an547_{profile,power}.elf | sed "s|$1/||"
fi
