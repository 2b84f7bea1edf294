#!/usr/bin/env python3
"""Generate a synthetic HPX PMU stream for bench_hpx_parse.

  bench/gen_hpx_stream.py OUT [--presets 4] [--iterations 100] [--layers 400]

Deterministic (seeded): 4 counters per preset, values in the range a
Cortex-M55 layer produces, heartbeats between iterations like the firmware.
The defaults (4 presets x 1000 iterations x 400 layers) give about 97 MB.
"""
import argparse
import random

p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("--presets", type=int, default=4)
p.add_argument("--iterations", type=int, default=1000)
p.add_argument("--layers", type=int, default=400)
p.add_argument("--pad", type=int, default=13, help="extra digits of AOT op tags")
a = p.parse_args()
rng = random.Random(1)
groups = ["cpu", "memory", "mve", "mve"]
counters = [
    ["ARM_PMU_CPU_CYCLES", "ARM_PMU_INST_RETIRED", "ARM_PMU_STALL_FRONTEND", "ARM_PMU_STALL_BACKEND"],
    ["ARM_PMU_MEM_ACCESS", "ARM_PMU_L1D_CACHE_REFILL", "ARM_PMU_BUS_ACCESS", "ARM_PMU_BUS_CYCLES"],
    ["ARM_PMU_MVE_INST_RETIRED", "ARM_PMU_MVE_INT_MAC_RETIRED", "ARM_PMU_MVE_LDST_RETIRED", "ARM_PMU_MVE_STALL"],
    ["ARM_PMU_MVE_PRED", "ARM_PMU_MVE_STALL_RESOURCE", "ARM_PMU_MVE_LD_RETIRED", "ARM_PMU_MVE_ST_RETIRED"],
]
ops = ["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "RESHAPE", "SOFTMAX"]
base = [[rng.randint(1000, 2_000_000) for _ in range(4)] for _ in range(a.layers)]
with open(a.out, "w", newline="\n") as f:
    w = f.write
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
                op = ops[l % len(ops)]
                rows.append(f"{l},{op}:{l:0{a.pad}d},{vals},0\n")
            w("".join(rows))
    w("HPX_HEARTBEAT phase=flushing\n--- HPX_END ---\n")
