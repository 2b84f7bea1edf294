#!/usr/bin/env bash
# A summary's gate windows are drawn only over the recording they were
# measured on (issue 34): ergon analyze records the recording's size and
# SHA-256 in provenance.recording, and `ergon report --jls` and `ergon view
# --summary` compare them with the recording they are given. The size and
# digest are checked against sha256sum(1) and stat(1), not against ergon;
# the recordings are the shared JLS fixtures (two different captures).
source "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
FX=${ERGON_SHARED_DIR:?}/fixtures/jls
TWO=$FX/shared_two_windows.jls
BASIC=$FX/shared_basic.jls
field() { # field SUMMARY PATH.TO.FIELD: the value, or "missing"
  python3 -c 'import json,sys
o = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    o = o.get(k) if isinstance(o, dict) else None
print("missing" if o is None else o)' "$1" "$2"
}

expect 0 "analyze the two-window recording" -- "$E" analyze --jls "$TWO" --out "$TMP/an"
S=$TMP/an/summary.json
want_sha=$(sha256sum "$TWO" | cut -d' ' -f1)
want_bytes=$(stat -c %s "$TWO")
got_sha=$(field "$S" provenance.recording.sha256)
got_bytes=$(field "$S" provenance.recording.bytes)
[ "$got_sha" = "$want_sha" ] && ok "the summary records the recording's SHA-256 (sha256sum: ${want_sha:0:16}...)" ||
  bad "provenance.recording.sha256 is $got_sha, sha256sum says $want_sha"
[ "$got_bytes" = "$want_bytes" ] && ok "the summary records the recording's size ($want_bytes bytes, stat)" ||
  bad "provenance.recording.bytes is $got_bytes, stat says $want_bytes"
expect 0 "verify the summary (the digest covers the new fields)" -- "$E" verify "$S"

# The right recording, also under another name (content, not name).
expect 0 "report with its own recording" -- "$E" report "$S" --jls "$TWO" --out "$TMP/own.html"
grep -q 'data-jls-forced' "$TMP/own.html" && bad "its own recording is marked forced" || ok "its own recording is not marked"
cp "$TWO" "$TMP/renamed.jls"
expect 0 "report with a copy under another name" -- "$E" report "$S" --jls "$TMP/renamed.jls" --out "$TMP/copy.html"

# Another recording: refused, no page, the message names both and the way out.
expect 1 "report with a foreign recording is refused" -- "$E" report "$S" --jls "$BASIC" --out "$TMP/foreign.html"
contains "$ERR" "$BASIC is not the recording $S was made from" "the refusal names the recording and the summary"
contains "$ERR" "it has $(stat -c %s "$BASIC") bytes and SHA-256 $(sha256sum "$BASIC" | cut -c1-16)..." "it gives the given recording's size and digest"
contains "$ERR" "had $want_bytes bytes and SHA-256 ${want_sha:0:16}..." "it gives the summary's recording's size and digest"
contains "$ERR" "--force-jls" "it names --force-jls"
[ -e "$TMP/foreign.html" ] && bad "a page was written for a foreign recording" || ok "no page for a foreign recording"

# The same recording changed: one byte more; one byte flipped (same size).
cp "$TWO" "$TMP/longer.jls"
printf 'x' >>"$TMP/longer.jls"
expect 1 "one byte appended is refused" -- "$E" report "$S" --jls "$TMP/longer.jls" --out "$TMP/x.html"
contains "$ERR" "it has $((want_bytes + 1)) bytes" "the size differs by one"
cp "$TWO" "$TMP/flipped.jls"
mid=$((want_bytes / 2))
orig=$(od -An -tu1 -j "$mid" -N1 "$TWO" | tr -d ' ')
printf "\\$(printf '%03o' $(((orig ^ 1) & 255)))" | dd of="$TMP/flipped.jls" bs=1 seek="$mid" conv=notrunc status=none
[ "$(stat -c %s "$TMP/flipped.jls")" = "$want_bytes" ] && ! cmp -s "$TWO" "$TMP/flipped.jls" &&
  ok "the flipped copy has the same size and differs at byte $mid" || bad "could not make the flipped copy"
expect 1 "one byte flipped (same size) is refused" -- "$E" report "$S" --jls "$TMP/flipped.jls" --out "$TMP/x.html"
contains "$ERR" "it has $want_bytes bytes and SHA-256 $(sha256sum "$TMP/flipped.jls" | cut -c1-16)" "the digest differs"

# --force-jls draws it, under a banner that says so.
expect 0 "--force-jls draws a foreign recording" -- "$E" report "$S" --jls "$BASIC" --force-jls --out "$TMP/forced.html"
grep -q 'data-jls-forced="1">Recording drawn with --force-jls, NOT shown to be this summary' "$TMP/forced.html" &&
  ok "the page says the recording is not shown to belong" || bad "no banner on the forced page"
# --force-jls does not hide a recording that cannot be read.
expect 3 "--force-jls with a missing recording still fails" -- "$E" report "$S" --jls "$TMP/none.jls" --force-jls --out "$TMP/x.html"
contains "$ERR" "$TMP/none.jls" "the error names the missing recording"

# A summary that records no digest (older ergon): nothing can be shown.
python3 - "$S" "$TMP/old.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["provenance"]["recording"]
del r["sha256"], r["bytes"]
json.dump(d, open(sys.argv[2], "w"))
EOF
expect 1 "a summary without a digest refuses any recording" -- "$E" report "$TMP/old.json" --jls "$TWO" --out "$TMP/x.html"
contains "$ERR" "does not record which recording it was made from" "the refusal says why"
contains "$ERR" "ergon analyze --jls $TWO" "and how to get a summary that does"

# Not a file: a FIFO (never read, never waited on) and a device.
mkfifo "$TMP/fifo.jls"
expect 2 "a FIFO as the recording is refused at once" -- timeout 20 "$E" report "$S" --jls "$TMP/fifo.jls" --out "$TMP/x.html"
contains "$ERR" "$TMP/fifo.jls: is a FIFO" "the refusal says it is a FIFO"
expect 2 "a device as the recording is refused" -- timeout 20 "$E" report "$S" --jls /dev/zero --out "$TMP/x.html"

# ergon view --summary: the same check, before the recording is read.
expect 0 "view with its own recording" -- "$E" view "$TWO" --summary "$S" --out "$TMP/v.html"
expect 1 "view with a foreign recording is refused" -- "$E" view "$BASIC" --summary "$S" --out "$TMP/vf.html"
contains "$ERR" "$BASIC is not the recording $S was made from" "view names both"
[ -e "$TMP/vf.html" ] && bad "view wrote a page for a foreign recording" || ok "view wrote no page"
expect 0 "view --force-jls draws it" -- "$E" view "$BASIC" --summary "$S" --force-jls --out "$TMP/vf.html"
python3 - "$TMP/vf.html" "$TMP/v.html" <<'EOF' && ok "the forced page carries why; its own page does not" || bad "view: not_shown_to_belong"
import json, re, sys
def summary(p):
    page = open(p).read()
    m = re.search(r'<script type="application/json" id="ergon-view-data">(.*?)</script>', page, re.S)
    return json.loads(m.group(1))["recordings"][0]["summary"]
f, own = summary(sys.argv[1]), summary(sys.argv[2])
sys.exit(0 if "is not the recording" in (f["not_shown_to_belong"] or "") and own["not_shown_to_belong"] is None else 1)
EOF

# The virtual bench writes its trace (power/trace.jls: one sample per
# simulated statistics packet, 10 kHz) and the summary names it. By hand
# (docs/internals/sim.md): 5 mA at 1.8 V while the gate is high, so the
# reference JLS library's mean over the gated window's inner samples is
# 5 mA and 9 mW (f32: 1e-6 relative).
REF=$ERGON_SHARED_DIR/tools/jls-ref/jls_dump
expect 0 "profile on the virtual bench with power" -- "$E" profile --board sim --power --out "$TMP/prof"
T=$TMP/prof/power/trace.jls
PS=$TMP/prof/summary.json
[ -s "$T" ] && ok "the power stage wrote its trace ($T)" || bad "no $T"
[ "$(field "$PS" provenance.recording.path)" = "$T" ] && ok "provenance.recording names it" ||
  bad "provenance.recording.path is $(field "$PS" provenance.recording.path)"
[ "$(field "$PS" provenance.recording.sha256)" = "$(sha256sum "$T" | cut -d' ' -f1)" ] &&
  [ "$(field "$PS" provenance.recording.bytes)" = "$(stat -c %s "$T")" ] &&
  ok "with its size and SHA-256 (sha256sum, stat)" || bad "the trace's identity differs from sha256sum/stat"
[ "$(field "$PS" provenance.recording.recording_provenance)" = synthetic ] && ok "the trace says synthetic" || bad "the trace's provenance"
python3 - "$PS" "$T" "$REF" <<'EOF' || fails=$((fails + 1))
import json, subprocess, sys
s = json.load(open(sys.argv[1]))
t, ref = sys.argv[2], sys.argv[3]
bad = 0
def check(cond, what):
    global bad
    print(("ok   - " if cond else "FAIL - ") + what)
    bad += 0 if cond else 1
p = s["power"]
n = p["whole_capture_window"]["packets"]
rate = 1 / p["gate"]["stats_period_s"]
check(s["provenance"]["recording"]["samples"] == n and abs(rate - 10000) < 1e-6,
      "one sample per statistics packet: %d samples at %g Hz" % (n, rate))
vals = subprocess.run([ref, t, "1", str(n)], capture_output=True, text=True)
check(vals.returncode == 0 and len(vals.stdout.split()) == n, "the reference library reads all %d current samples" % n)
w = p["windows"][0]
i0, i1 = round(w["start_s"] * rate) + 10, round(w["end_s"] * rate) - 10
def mean(sig):
    return float(subprocess.check_output([ref, t, sig, str(i0), str(i1 - i0), "1"], text=True).split()[-1])
check(abs(mean("1") - 5e-3) <= 5e-3 * 1e-6, "mean current in the gate window [%d, %d): %.9g A = 5 mA" % (i0, i1, mean("1")))
check(abs(mean("3") - 9e-3) <= 9e-3 * 1e-6, "mean power there: %.9g W = 5 mA x 1.8 V" % mean("3"))
sys.exit(1 if bad else 0)
EOF
expect 0 "report the profile with its trace" -- "$E" report "$PS" --jls "$T" --out "$TMP/prof.html"
grep -q 'id="a0-trace"' "$TMP/prof.html" && ok "the gated waveform is drawn" || bad "no trace plot"
expect 1 "the profile's summary with another recording is refused" -- "$E" report "$PS" --jls "$TWO" --out "$TMP/x.html"
expect 0 "view the trace with the summary" -- "$E" view "$T" --summary "$PS" --out "$TMP/pv.html"
finish
