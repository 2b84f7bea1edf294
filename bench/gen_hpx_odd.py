#!/usr/bin/env python3
"""Generate odd HPX streams for output comparisons of `ergon parse` builds.

  bench/gen_hpx_odd.py DIR N      writes DIR/odd01.hpx .. DIR/oddNN.hpx

Deterministic (seed = the file's number). Each stream has 2-4 presets of
20-220 iterations and 1-40 layers, with header changes (counter sets, tag
instead of Op, a padded Layer name), layer-count changes, heartbeats,
refused, negative, fractional, padded, leading-zero, 17-digit and
wrapping (>= 2^31) cells, quoted Op cells holding commas, spaced and
per-iteration Op text, extra cells, overflow flags, CRLF line ends (every
fifth seed), a preset seen again (odd seeds), and no END or a cut last
line (seeds 1, 4, 7, ...). Used with bench/cmp_parse_bins.sh.
"""
import random
import sys


def gen(seed, path):
    r = random.Random(seed)
    cols = ["ARM_PMU_CPU_CYCLES","ARM_PMU_INST_RETIRED","ARM_PMU_STALL_FRONTEND","ARM_PMU_X","ARM_PMU_MEM_ACCESS"]
    ops = ["CONV_2D","ADD","DEPTHWISE_CONV_2D","FULLY_CONNECTED_LONG_NAME_XYZ","SOFTMAX","A","CONV_2D:0000000000017"]
    out = ["HPX_READY","--- HPX_START ---","HPX_VERSION=1","HPX_PRESETS=p0,p1,p2"]
    np_ = 2 + r.randrange(3)
    eol = "\r\n" if seed % 5 == 0 else "\n"
    for pr in range(np_ + 1):
        out.append("--- HPX_PRESET %s_%d ---" % (["cpu","mem","mve"][pr % 3], pr if pr < np_ else 0))
        nl = 1 + r.randrange(40); ni = 20 + r.randrange(200)
        hc = [0,1,2]; textcol = "Op"
        for it in range(ni):
            if r.randrange(30) == 0:
                hc = [r.randrange(len(cols)) for _ in range(1 + r.randrange(5))]
                textcol = r.choice(["Op","tag","Op"])
            if r.randrange(50) == 0:
                out.append("HPX_HEARTBEAT phase=infer pass=0 iter=%d" % it)
            out.append("--- HPX_ITER %d ---" % it)
            hdr = '"Layer","%s"' % textcol + "".join(',"%s"' % cols[k] for k in hc) + ',"overflow"'
            if r.randrange(60) == 0:
                hdr = hdr.replace('"Layer"', ' "Layer" ')
            out.append(hdr)
            rows = nl if r.randrange(10) else r.randrange(nl + 5)
            for l in range(rows):
                zero = r.randrange(25) == 0
                op = ops[l % len(ops)]
                if r.randrange(40) == 0: op = op + "_v%d" % it
                if r.randrange(200) == 0: op = '"' + op + ',q"'
                if r.randrange(300) == 0: op = " " + op + " "
                cells = [str(l), op]
                for k in hc:
                    x = r.randrange(120)
                    if zero: cells.append("0")
                    elif x == 0: cells.append("bad")
                    elif x == 1: cells.append(str(2147483648 + r.randrange(1000)))
                    elif x == 2: cells.append("-%d" % r.randrange(100))
                    elif x == 3: cells.append("%d.5" % r.randrange(1000))
                    elif x == 4: cells.append(" %d " % r.randrange(1000))
                    elif x == 5: cells.append("0000%d" % r.randrange(100))
                    elif x == 6: cells.append(str(r.randrange(10**17)))
                    else: cells.append(str(r.randrange(1, 120000)))
                cells.append("1" if r.randrange(150) == 0 else "0")
                line = ",".join(cells)
                if r.randrange(400) == 0: line = line + ",extra"
                out.append(line)
    data = eol.join(out) + eol
    if seed % 3 != 1:
        data += "--- HPX_END ---" + eol
    elif seed % 2:
        data = data[: len(data) - r.randrange(1, 30)]
    open(path, "w", newline="").write(data)
if len(sys.argv) != 3 or not sys.argv[2].isdigit():
    sys.exit("usage: gen_hpx_odd.py DIR N")
for s in range(1, int(sys.argv[2]) + 1):
    gen(s, "%s/odd%02d.hpx" % (sys.argv[1], s))
