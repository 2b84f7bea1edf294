#!/usr/bin/env python3
"""Generate a synthetic HPX PMU stream for bench_hpx_parse and bench_parse_e2e.

  bench/gen_hpx_stream.py OUT [--presets 4] [--iterations 1000] [--layers 400]
                              [--pad 13] [--min-count 1000] [--max-count 2000000]
                              [--size BYTES]
  bench/gen_hpx_stream.py OUT --reference

Deterministic (seeded): 4 counters per preset, each layer's counts drawn
once in [min-count, max-count] plus up to 1 % noise per iteration,
heartbeats between iterations like the firmware. The defaults (4 presets x
1000 iterations x 400 layers, op cells like `CONV_2D:0000000000017`) give
96.6 MB.

--pad N: digits of the AOT op tag after the op name (`CONV_2D:17` for 0
and 1-3 digit layers); --pad -1: no tag, the op name alone (`CONV_2D`).

--size BYTES: the final `HPX_HEARTBEAT phase=flushing` line gets a ` fill=`
field of dots so that the stream is exactly BYTES long; refused when the
stream without it is longer than BYTES, or shorter by more than 8192 bytes
(the counters, not the fill, must carry the size).

--reference: issue 16's reference stream, 4 presets x 1530 iterations x 400
layers in 99,981,419 bytes: op names without tags, counts in [100, 118,560]
(`--pad -1 --min-count 100 --max-count 118560`); the counters make all but
the last 4,876 bytes (0.005 %), the fill the rest.
"""
import argparse
import sys

REFERENCE = dict(presets=4, iterations=1530, layers=400, pad=-1, min_count=100,
                 max_count=118560, size=99_981_419)
FILL_MAX = 8192

p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("--presets", type=int, default=4)
p.add_argument("--iterations", type=int, default=1000)
p.add_argument("--layers", type=int, default=400)
p.add_argument("--pad", type=int, default=13, help="digits of AOT op tags (-1: no tag)")
p.add_argument("--min-count", type=int, default=1000)
p.add_argument("--max-count", type=int, default=2_000_000)
p.add_argument("--size", type=int, default=0, help="exact stream size (fill in the last line)")
p.add_argument("--reference", action="store_true", help="issue 16's reference stream")
a = p.parse_args()
if a.reference:
    for k, v in REFERENCE.items():
        setattr(a, k, v)
if a.min_count < 0 or a.max_count < a.min_count:
    sys.exit("gen_hpx_stream: need 0 <= --min-count <= --max-count")

import random  # noqa: E402  (after the argument check: fails fast)

rng = random.Random(1)
groups = ["cpu", "memory", "mve", "mve"]
counters = [
    ["ARM_PMU_CPU_CYCLES", "ARM_PMU_INST_RETIRED", "ARM_PMU_STALL_FRONTEND", "ARM_PMU_STALL_BACKEND"],
    ["ARM_PMU_MEM_ACCESS", "ARM_PMU_L1D_CACHE_REFILL", "ARM_PMU_BUS_ACCESS", "ARM_PMU_BUS_CYCLES"],
    ["ARM_PMU_MVE_INST_RETIRED", "ARM_PMU_MVE_INT_MAC_RETIRED", "ARM_PMU_MVE_LDST_RETIRED", "ARM_PMU_MVE_STALL"],
    ["ARM_PMU_MVE_PRED", "ARM_PMU_MVE_STALL_RESOURCE", "ARM_PMU_MVE_LD_RETIRED", "ARM_PMU_MVE_ST_RETIRED"],
]
ops = ["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "RESHAPE", "SOFTMAX"]
base = [[rng.randint(a.min_count, a.max_count) for _ in range(4)] for _ in range(a.layers)]
if a.pad < 0:
    opcell = [ops[l % len(ops)] for l in range(a.layers)]
else:
    opcell = [f"{ops[l % len(ops)]}:{l:0{a.pad}d}" for l in range(a.layers)]
written = 0
with open(a.out, "w", newline="\n") as f:

    def w(s):
        global written
        f.write(s)
        written += len(s)  # ASCII only: characters are bytes

    w("HPX_READY\n--- HPX_START ---\nHPX_VERSION=1\nHPX_MODEL_SIZE=1048576\n")
    w("HPX_ARENA_SIZE=2097152\nHPX_ALLOCATED_ARENA=1572864\n")
    names = []
    seen = {}
    for i in range(a.presets):
        g = groups[i % len(groups)]
        n = seen.get(g, 0)
        seen[g] = n + 1
        names.append(f"{g}_{n}")
    w(f"HPX_NUM_PRESETS={a.presets}\nHPX_PRESETS={','.join(names)}\nHPX_ITERATIONS={a.iterations}\n")
    for pi, name in enumerate(names):
        w(f"--- HPX_PRESET {name} ---\n")
        hdr = ",".join(f'"{c}"' for c in counters[pi % len(counters)])
        for it in range(a.iterations):
            w(f"HPX_HEARTBEAT phase=infer pass={pi} iter={it}\n")
            w(f"--- HPX_ITER {it} ---\n")
            w(f'"Layer","Op",{hdr},"overflow"\n')
            rows = []
            for l in range(a.layers):
                b = base[l]
                vals = ",".join(str(v + rng.randint(0, v // 100 + 1)) for v in b)
                rows.append(f"{l},{opcell[l]},{vals},0\n")
            w("".join(rows))
    last = "HPX_HEARTBEAT phase=flushing"
    tail = "\n--- HPX_END ---\n"
    if a.size:
        short = a.size - (written + len(last) + len(tail))
        if short < 0 or short > FILL_MAX:
            f.close()
            sys.exit(f"gen_hpx_stream: the stream is {written + len(last) + len(tail)} bytes "
                     f"without fill; --size {a.size} needs 0..{FILL_MAX} bytes of fill "
                     f"(change --max-count or --iterations)")
        if short:
            # " fill=" and at least one dot
            if short < len(" fill=.") :
                last = last + " " * short  # stripped by the parser like any trailing space
            else:
                last = last + " fill=" + "." * (short - len(" fill="))
    w(last + tail)
print(f"{a.out}: {written} bytes, {a.presets} presets x {a.iterations} iterations x "
      f"{a.layers} layers")
