"""Hand models shared by the PPK2 and marker-line tests (imported by the
Python checks of tests/functional/test_profile_live_ppk2.sh,
test_profile_live_layers.sh, test_analyze_layers.sh and
test_profile_marker_plan.sh; not ergon's code,
and nothing here reads ergon's output).

The PPK2's current as ergon's driver decodes it under the identity
calibration: the PPK2 protocol's raw14 step is 4 x 1.8 V / 163840 across the
range's shunt (range 1: 101.65 ohm, range 2: 10.15 ohm).

The marker-line layer model: n inferences of the layers I[j] amperes for
S[j] samples each at rate samples a second on a V-volt rail, after a lead-in
at lead_a. Each marker edge sits mid-way through the sample before the first
one that shows the new level, so a layer gets half a sample of the layer
before it and loses half a sample of its own; layer 0's first inference
follows the lead-in, the others the last layer."""

STEP_V = 4 * 1.8 / 163840
RANGE1_OHM, RANGE2_OHM = 101.65, 10.15


def decoded(i_a, shunt_ohm=RANGE1_OHM):
    """The current i_a as the driver reads it back: the nearest raw14 step."""
    return round(i_a * shunt_ohm * 163840 / 7.2) * 7.2 / 163840 / shunt_ohm


def layers(V, rate, n, I, S, lead_a):
    """(hand, truth): each layer's energy per inference as ergon must find it
    from the edges, and the layer's own energy (S[j] samples at I[j])."""
    prev = [(lead_a + (n - 1) * I[-1]) / n] + list(I[:-1])
    hand = [V / rate * ((S[j] - 0.5) * I[j] + 0.5 * prev[j]) for j in range(len(I))]
    truth = [V / rate * S[j] * I[j] for j in range(len(I))]
    return hand, truth


def unmarked(V, rate, n, lead_a, last_a, lead_tail_samples=200):
    """The gate's energy per inference outside the layers: the lead-in and
    tail samples at lead_a, less the lead-in's last half sample (inside the
    first edge), plus the last layer's last half sample (after the final
    edge), shared over the n inferences."""
    return V / rate * ((lead_tail_samples - 0.5) * lead_a + 0.5 * last_a) / n


def raw_current(raw14, shunt_ohm):
    """The current of a raw14 count on a range's shunt."""
    return raw14 * STEP_V / shunt_ohm


def switch_filtered(i_before, i_after, samples=3, alpha=0.18):
    """The samples right after a range switch from i_before's range to
    i_after's, through the vendor's spike filter: y_k = alpha i_after +
    (1 - alpha) y_(k-1) from y_(-1) = i_before."""
    y, out = i_before, []
    for _ in range(samples):
        y = alpha * i_after + (1 - alpha) * y
        out.append(y)
    return out
