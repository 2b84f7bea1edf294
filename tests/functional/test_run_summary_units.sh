#!/usr/bin/env bash
# The terminal summary picks one SI prefix for energy/op and its ± from the
# larger of |value| and ±. Scenario: synthetic idle = load = 1 W, no
# noise, so energy/op above idle is 0 J while its ± is not (1 % + 0.5 W
# resolution on both phases, times the latency): by hand u(ΔP) ≈ 2 x
# (0.01 + 0.5) W = 1.02 W, times a spin latency of microseconds to
# milliseconds, a ± of µJ to mJ. Printing the 0 J value's prefix (n) would
# give a ± with thousands of nJ (the reported "0.00 nJ ± 191382.22 nJ").
. "$(dirname "$0")/run_lib.sh"

expect 0 "run with energy/op 0 and a non-zero ±" -- "$ERGON_BIN" run --device d \
  --instrument synthetic --instrument-opt idle_w=1 --instrument-opt load_w=1 \
  --instrument-opt noise_w=0 --instrument-opt resolution_w=0.5 --instrument-opt accuracy_pct=1 \
  --workload builtin:spin,iters=20000 "${SHORT[@]}" --out "$TMP/r.json"
line=$(printf '%s\n' "$OUT" | grep '^energy/op')
# Same prefix on both, and the ± needs at most three integer digits in it.
# The ± is the budget's: U (k = 2) when complete, else the known terms'
# part after "incomplete"; either way in the value's prefix.
if printf '%s\n' "$line" | grep -Eq '^energy/op   : -?[0-9]+\.[0-9]{2} (m|µ|n|)J above idle ± ([0-9]{1,3}\.[0-9]{2} \1J \(k = 2|\? \(budget incomplete: .* ± [0-9]{1,3}\.[0-9]{2} \1J\)$)'; then
  ok "one prefix from max(|value|, ±): $line"
else
  bad "energy/op line: $line"
fi
case "$line" in *" nJ ± "*) bad "nJ chosen for a 0 J value";; *) ok "not scaled by the zero value";; esac
finish
