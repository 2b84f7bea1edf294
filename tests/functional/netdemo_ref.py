#!/usr/bin/env python3
"""Independent reference of the an547 example network
(target/port/an547/netdemo.c), written from its description: prints
"<class> <checksum>" for the fixed input. Integer semantics as in C on
Arm: int32 accumulators, arithmetic right shifts, uint32 wrap-around."""

H, W, C, K, CLASSES = 8, 8, 4, 3, 10
M32 = 0xFFFFFFFF

state = 12345


def lcg_i8():
    global state
    state = (state * 1103515245 + 12345) & M32
    return ((state >> 16) % 15) - 7


def relu8(v):
    return 0 if v < 0 else min(v, 127)


inp = [((i * 37 + 11) % 97) - 48 for i in range(H * W)]
conv_w = [[[0] * K for _ in range(K)] for _ in range(C)]
dw_w = [[[0] * K for _ in range(K)] for _ in range(C)]
for c in range(C):
    for y in range(K):
        for x in range(K):
            conv_w[c][y][x] = lcg_i8()
            dw_w[c][y][x] = lcg_i8()
fc_w = [[lcg_i8() for _ in range(H * W * C)] for _ in range(CLASSES)]
step = 1008687096  # exp(-1/16) in Q30
exp_q30, v = [], 1 << 30
for _ in range(256):
    exp_q30.append(v)
    v = (v * step) >> 30


def conv3x3(src, weights, shift):
    out = [[[0] * C for _ in range(W)] for _ in range(H)]
    for y in range(H):
        for x in range(W):
            for c in range(C):
                acc = 0
                for ky in range(K):
                    for kx in range(K):
                        iy, ix = y + ky - 1, x + kx - 1
                        if 0 <= iy < H and 0 <= ix < W:
                            acc += src(iy, ix, c) * weights[c][ky][kx]
                out[y][x][c] = relu8(acc >> shift)
    return out


act1 = conv3x3(lambda y, x, c: inp[y * W + x], conv_w, 4)
act2 = conv3x3(lambda y, x, c: act1[y][x][c], dw_w, 3)
flat = [act2[y][x][c] for y in range(H) for x in range(W) for c in range(C)]
logits = [sum(f * w for f, w in zip(flat, fc_w[o])) >> 6 for o in range(CLASSES)]
best = max(range(CLASSES), key=lambda o: (logits[o], -o))
mx = logits[best]
e = [exp_q30[mx - l] if mx - l <= 255 else 0 for l in logits]
total = sum(e)
h = 2166136261
for o in range(CLASSES):
    p = (e[o] << 15) // total
    h = ((h ^ p) * 16777619) & M32
print(best, h)
