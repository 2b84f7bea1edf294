#!/usr/bin/env bash
# ergon view --serve (issue 34): the page on 127.0.0.1 with tiles and
# figures read from the recording on demand.
#
# The recording is the one a user makes (`ergon record` from the PPK2
# simulator): 2.5 s at 100 kSPS, 1 mA, and 5 mA while the gate (D0) is
# high for samples [50000, 150000), at 3.0 V; ergon's writer keeps summary
# levels of 1000 and 10000 samples per entry. Expected values are worked
# out here from the samples as the reference JLS library reads them
# (../shared/tools/jls-ref/jls_dump), never from ergon's own output:
# a tile's min/mean/max per entry over the dumped samples, a range's
# charge as the sum of the samples / 100 kHz, the gate's bins by hand.
# Requests are made with Python's http.client (raw paths, any method).
. "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
SIM=${ERGON_BUILD_DIR:?}/ergon_ppk2_sim
REF=${ERGON_SHARED_DIR:?}/tools/jls-ref
[ -x "$REF/jls_dump" ] || { bad "$REF/jls_dump is missing (../shared/tools/jls-ref)"; finish; }

record() { # record OUT DURATION_S: the PPK2 simulator, gate high for [0.5, 1.5) s at 5 mA
  coproc SIMP { exec "$SIM" --current-a 0.001 --burst-a 0.005 --gate-at-start \
    --gate-delay-s 0.5 --gate-s 1.0 --fast; }
  local pid=$SIMP_PID port
  read -r port <&"${SIMP[0]}"
  "$E" record --instrument "ppk2:$port" --instrument-opt vdd_mv=3000 --duration-s "$2" \
    --out "$1" >"$TMP/rec.out" 2>"$TMP/rec.err" || { bad "ergon record $1"; cat "$TMP/rec.err"; }
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}
record "$TMP/a.jls" 2.5
# The samples as the reference library reads them: current (1), power (3).
"$REF/jls_dump" "$TMP/a.jls" 1 250000 >"$TMP/current.txt" 2>/dev/null
"$REF/jls_dump" "$TMP/a.jls" 3 250000 >"$TMP/power.txt" 2>/dev/null
[ "$(wc -l <"$TMP/current.txt")" = 250000 ] && ok "the reference library reads 250000 samples" ||
  bad "jls_dump read $(wc -l <"$TMP/current.txt") samples, wanted 250000"

# start_server NAME ARGS...: ergon view --serve in the background; its URL in $URL.
start_server() {
  local name=$1
  shift
  "$E" view "$@" --serve >"$TMP/$name.out" 2>"$TMP/$name.err" &
  SERVER=$!
  URL=""
  # Wait for the URL line (the server reads the recording first); the
  # bound is only against a hang, nothing is asserted on the time.
  for _ in $(seq 1 600); do
    URL=$(sed -n 's/^  \(http:.*\)$/\1/p' "$TMP/$name.out")
    [ -n "$URL" ] && break
    kill -0 "$SERVER" 2>/dev/null || break
    sleep 0.1
  done
}

start_server main "$TMP/a.jls"
if [ -z "$URL" ]; then
  bad "ergon view --serve printed no URL"; cat "$TMP/main.out" "$TMP/main.err"; finish
fi
case "$URL" in
  http://127.0.0.1:*/\?token=????????????????????????????????) ok "the URL is on 127.0.0.1 with a 32-digit token ($URL)";;
  *) bad "unexpected URL: $URL";;
esac
contains "$(cat "$TMP/main.out")" "127.0.0.1 only" "the terminal says it listens on loopback only"
# Only the loopback address listens (the kernel's socket table: local
# address 127.0.0.1 = 0100007F, state 0A = LISTEN).
PORT=${URL#http://127.0.0.1:}; PORT=${PORT%%/*}
listen=$(python3 -c 'import sys; p="%04X" % int(sys.argv[1]); print(" ".join(l.split()[1] for l in open("/proc/net/tcp") if l.split()[1].endswith(":"+p) and l.split()[3] == "0A"))' "$PORT")
[ "$listen" = "0100007F:$(printf %04X "$PORT")" ] && ok "it listens on 127.0.0.1:$PORT only" ||
  bad "listening sockets on port $PORT: '$listen' (wanted 127.0.0.1 only)"

python3 - "$URL" "$TMP/current.txt" "$TMP/power.txt" <<'EOF' || fails=$((fails + 1))
import base64, http.client, json, socket, struct, sys, threading
url, cur_path, pow_path = sys.argv[1:4]
hostport = url.split("/")[2]
host, port = hostport.split(":")
port = int(port)
token = url.split("token=")[1]
cur = [float(x) for x in open(cur_path)]
pw = [float(x) for x in open(pow_path)]
bad = 0
def check(cond, what):
    global bad
    print(("ok   - " if cond else "FAIL - ") + what)
    bad += 0 if cond else 1
def req(path, method="GET", body=None, headers=None):
    c = http.client.HTTPConnection(host, port, timeout=60)
    c.putrequest(method, path, skip_accept_encoding=True)
    for k, v in (headers or {}).items():
        c.putheader(k, v)
    if body is not None:
        c.putheader("Content-Length", str(len(body)))
    c.endheaders()
    if body is not None:
        c.send(body)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, dict((k.lower(), v) for k, v in r.getheaders()), data
def err(data):
    try:
        return json.loads(data)["error"]
    except Exception:
        return repr(data[:200])
def f32(b64):
    raw = base64.b64decode(b64)
    return list(struct.unpack("<%df" % (len(raw) // 4), raw))
def r32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]
T = "token=" + token

# 1. The page, with the token; nothing without it.
st, h, page = req("/?" + T)
check(st == 200 and h.get("content-type", "").startswith("text/html"), "GET /?token: 200 text/html (%d)" % st)
check(b'id="ergon-view-data"' in page and token.encode() in page, "the page holds its data and the run's token")
check(b"connect-src 'self'" in page, "the served page may ask only its own server (CSP connect-src 'self')")
check(h.get("cache-control") == "no-store" and h.get("referrer-policy") == "no-referrer", "no-store, no-referrer (the token leaves in no Referer)")
for path, what in [("/", "no token"), ("/?token=", "an empty token"), ("/?token=" + "0" * 32, "a wrong token of the right length"),
                   ("/?token=" + token[:-1], "the token less a digit"), ("/?token=" + token + "0", "the token and a digit"),
                   ("/api/info", "/api/info without a token"), ("/nope", "an unknown path without a token"),
                   ("/?TOKEN=" + token, "the token under another name")]:
    st, _, data = req(path)
    check(st == 403, "%s: 403 (%d)" % (what, st))
st, _, data = req("/", "POST", b"token=" + token.encode())
check(st == 403, "a token in a POST body is not a token: 403 (%d)" % st)

# 2. Unknown paths (never a file: the paths are matched exactly) and methods.
for path in ["/nope", "/index.html", "/../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/api/", "/api/tile/../info",
             "/api/info/", "//api/info", "/" + "a" * 2000]:
    st, _, data = req(path + "?" + T)
    check(st == 404, "%s: 404 (%d: %s)" % (path[:40], st, err(data)[:80]))
for m in ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"]:
    st, h, data = req("/api/info?" + T, m, b"x" * 10 if m in ("POST", "PUT") else None)
    check(st == 405 and h.get("allow") == "GET, HEAD", "%s /api/info: 405 with Allow: GET, HEAD (%d, %s)" % (m, st, h.get("allow")))
# Bytes that are not UTF-8 in the path and a parameter: quoted as \xNN, never a 500.
def raw(line):
    s = socket.create_connection((host, port), timeout=60)
    s.sendall(line + b"\r\nHost: x\r\nConnection: close\r\n\r\n")
    got = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        got += b
    s.close()
    head, _, body = got.partition(b"\r\n\r\n")
    return int(head.split()[1]), body
st, body = raw(b"GET /\xc9\xff?" + T.encode() + b" HTTP/1.1")
check(st == 404 and "\\xc9" in err(body), "a path of bytes that are not UTF-8: 404 quoting them as \\xNN (%d: %s)" % (st, err(body)[:60]))
st, body = raw(b"GET /api/tile?" + T.encode() + b"&rec=0&level=0&count=1&start=%c9 HTTP/1.1")
check(st == 400 and "\\xc9" in err(body), "a parameter of bytes that are not UTF-8: 400 quoting them (%d: %s)" % (st, err(body)[:60]))
st, h, data = req("/api/info?" + T, "HEAD")
check(st == 200 and data == b"", "HEAD /api/info: 200, no body")

# 3. What the recording holds.
st, _, data = req("/api/info?" + T)
info = json.loads(data)
r0 = info["recordings"][0]
lv = [(l["level"], l["entry_samples"], l["entries"]) for l in r0["levels"]]
check(st == 200 and r0["samples"] == 250000 and r0["sample_rate_hz"] == 100000, "info: 250000 samples at 100 kHz")
check(lv == [(0, 1, 250000), (1, 1000, 250), (2, 10000, 25)],
      "info: the levels the file holds: samples, 1000 and 10000 per entry (%s)" % lv)
check(r0["lines"][0] == "gpi[0]" and info["tile_max"] == 8192, "info: gpi[0] and the tile limit")

# 4. Tiles: each entry's min/mean/max against the samples.
def tile(level, start, count):
    st, _, data = req("/api/tile?%s&rec=0&level=%d&start=%d&count=%d" % (T, level, start, count))
    return st, json.loads(data)
def expect_tile(level, es, start, count, what):
    st, t = tile(level, start, count)
    check(st == 200 and t["entry_samples"] == es and t["start"] == start and t["count"] == count,
          "%s: 200, %d entries of %d samples from %d" % (what, count, es, start))
    worst = 0.0
    exact = True
    for k, (sig, samples) in enumerate([("current", cur), ("power", pw)]):
        s = t["signals"][0 if sig == "current" else 2]
        mn, mx, me = f32(s["min"]), f32(s["max"]), f32(s["mean"])
        for i in range(count):
            x = samples[(start + i) * es:(start + i + 1) * es]
            want_mean = sum(x) / len(x)
            exact &= mn[i] == r32(min(x)) and mx[i] == r32(max(x))
            worst = max(worst, abs(me[i] - want_mean) / abs(want_mean))
    check(exact, "%s: every entry's min and max = those of its samples (current, power)" % what)
    check(worst <= 1e-6, "%s: every entry's mean = its samples' mean to 1e-6 (worst %.2g)" % (what, worst))
    return t
expect_tile(0, 1, 49990, 20, "level 0 across the gate's rise")
t1 = expect_tile(1, 1000, 40, 20, "level 1 (1000 samples) across the rise")
expect_tile(1, 1000, 140, 110, "level 1 across the fall to the last whole entry")
expect_tile(2, 10000, 0, 25, "level 2 (10000 samples), the whole recording")
# The gate line by hand: entries 40..49 low (code 1), 50..59 high (code 2).
codes = list(base64.b64decode(t1["lines"][0]["bins"]))
check(t1["lines"][0]["name"] == "gpi[0]" and codes == [1] * 10 + [2] * 10, "gpi[0] at level 1: low for 40..49, high for 50..59 (%s)" % codes)
st, t = tile(0, 149995, 10)
codes = list(base64.b64decode(t["lines"][0]["bins"]))
check(codes == [2] * 5 + [1] * 5, "gpi[0] at level 0: high to sample 149999, low from 150000 (%s)" % codes)
# A tile is cut at the level's end.
st, t = tile(1, 245, 100)
check(st == 200 and t["count"] == 5, "a tile past the end is cut at the last entry: 5 of 100 (%s)" % t.get("count"))
st, t = tile(0, 0, 8192)
check(st == 200 and t["count"] == 8192, "the largest tile: 8192 entries")

# 5. A range's figures: whole entries where they fit, samples at the edges.
def stats(a, b):
    st, _, data = req("/api/stats?%s&rec=0&start=%d&end=%d" % (T, a, b))
    return st, json.loads(data)
for a, b in [(50000, 150000), (49999, 150001), (12345, 234567), (0, 250000), (77, 78)]:
    st, s = stats(a, b)
    q = sum(cur[a:b]) / 1e5
    e = sum(pw[a:b]) / 1e5
    c = s["signals"]["current"]
    check(st == 200 and abs(s["charge_c"] - q) <= 1e-7 * abs(q) and abs(s["energy_j"] - e) <= 1e-7 * abs(e),
          "[%d, %d): charge %.9g C and energy %.9g J = the samples' sums / 100 kHz (%.9g, %.9g)" % (a, b, s["charge_c"], s["energy_j"], q, e))
    check(c["min"] == r32(min(cur[a:b])) and c["max"] == r32(max(cur[a:b])) and s["samples"] == b - a,
          "[%d, %d): min, max and the sample count exact" % (a, b))
st, s = stats(50000, 150000)
check(abs(s["charge_c"] - 5e-3) <= 5e-7 and s["levels_used"] == [{"level": 2, "entry_samples": 10000, "entries": 10}],
      "0.5-1.5 s: 5 mC by hand (PPK2 step: 1e-4), from 10 entries of level 2 (%s)" % s["levels_used"])

# 6. Bad parameters: 400 with a message naming the parameter.
for q, what in [("rec=0&level=-1&start=0&count=1", "level=-1"), ("rec=0&level=3&start=0&count=1", "level=3"),
                ("rec=0&level=0&start=nan&count=1", "start=nan"), ("rec=0&level=0&start=NaN&count=1", "start=NaN"),
                ("rec=0&level=0&start=1e3&count=1", "start=1e3"), ("rec=0&level=0&start=-0&count=1", "start=-0"),
                ("rec=0&level=0&start=+1&count=1", "start=+1"), ("rec=0&level=0&start=%201&count=1", "start= 1"),
                ("rec=0&level=0&start=0x10&count=1", "start=0x10"), ("rec=0&level=0&start=0&count=0", "count=0"),
                ("rec=0&level=0&start=0&count=8193", "count=8193"), ("rec=0&level=0&start=250000&count=1", "start=250000"),
                ("rec=0&level=1&start=250&count=1", "start=250"),
                ("rec=0&level=0&start=99999999999999999999999999&count=1", "start=99999999999999999999999999"),
                ("rec=0&level=0&start=18446744073709551615&count=1", "start=18446744073709551615"),
                ("rec=1&level=0&start=0&count=1", "rec=1"), ("level=0&start=0&count=1", "rec"),
                ("rec=0&level=0&start=0&count=1&foo=1", "foo"), ("rec=0&level=0&start=0&start=1&count=1", "start"),
                ("rec=0&level=0&start&count=1", "start"), ("rec=0&level=0&start=0&count=1" + "".join("&x%d=1" % i for i in range(20)), "parameters")]:
    st, _, data = req("/api/tile?" + T + "&" + q)
    check(st == 400 and what.split("=")[0] in err(data), "tile %s: 400 naming it (%d: %s)" % (q[:60], st, err(data)[:90]))
for q, what in [("rec=0&start=5&end=5", "end"), ("rec=0&start=6&end=5", "end"), ("rec=0&start=0&end=250001", "end"),
                ("rec=0&start=-1&end=5", "start"), ("rec=0&start=0&end=inf", "end")]:
    st, _, data = req("/api/stats?" + T + "&" + q)
    check(st == 400 and what in err(data), "stats %s: 400 naming '%s' (%d: %s)" % (q, what, st, err(data)[:90]))
st, _, data = req("/api/info?" + T + "&x=1")
check(st == 400 and "x" in err(data), "/api/info with a parameter it does not take: 400")
# A request line or headers larger than the server keeps: a 4xx, not a crash.
st, _, data = req("/api/info?" + T + "&pad=" + "a" * 100000)
check(400 <= st < 500, "a 100 kB query: %d" % st)
st, _, data = req("/api/info?" + T, headers={"X-Big": "b" * 100000})
check(400 <= st < 500, "a 100 kB header: %d" % st)

# 7. Many clients at once, hostile ones among them: every good request is
# answered right, the server keeps serving.
results = []
lock = threading.Lock()
def client(i):
    try:
        if i % 4 == 0:
            # A connection that sends half a request and waits.
            s = socket.create_connection((host, port), timeout=60)
            s.sendall(b"GET /api/info?" + T.encode() + b" HTTP/1.1\r\nHost: x\r\n")
            st, t = tile(1, i % 200, 50)
            s.close()
        elif i % 4 == 1:
            st, _, _ = req("/api/tile?" + T + "&rec=0&level=0&start=-5&count=99999")
            st = 200 if st == 400 else -st
            t = None
        else:
            st, t = tile(0, (i * 977) % 240000, 8192)
        ok = st == 200 and (t is None or t["count"] in (50, 8192))
    except Exception as e:
        ok = False
    with lock:
        results.append(ok)
threads = [threading.Thread(target=client, args=(i,)) for i in range(96)]
for t in threads: t.start()
for t in threads: t.join()
check(len(results) == 96 and all(results), "96 clients at once (a quarter holding half a request): all answered right (%d of %d)" % (sum(results), len(results)))
st, s = stats(50000, 150000)
check(st == 200 and abs(s["charge_c"] - 5e-3) <= 5e-7, "still serving right after them")
sys.exit(1 if bad else 0)
EOF

# 8. Ctrl-C: the daemon stops, exit 0, it says so.
kill -INT "$SERVER"
wait "$SERVER"
rc=$?
[ "$rc" = 0 ] && ok "SIGINT: exit 0" || bad "SIGINT: exit $rc, wanted 0"
contains "$(cat "$TMP/main.out")" "stopped (SIGINT)" "it says it stopped"
python3 -c 'import socket,sys; s=socket.socket(); sys.exit(0 if s.connect_ex(("127.0.0.1", int(sys.argv[1]))) != 0 else 1)' "$PORT" &&
  ok "nothing listens on the port after the stop" || bad "port $PORT still open after the stop"
[ -s "$TMP/main.err" ] && { bad "the server wrote to stderr"; head "$TMP/main.err"; } || ok "nothing on stderr"

# 9. --port: that port; SIGTERM stops it too; a port in use is refused.
FREE=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_server fixed "$TMP/a.jls" --port "$FREE"
case "$URL" in http://127.0.0.1:$FREE/\?token=*) ok "--port $FREE: served there";; *) bad "--port $FREE: URL $URL";; esac
expect 3 "a second server on the same port" -- "$E" view "$TMP/a.jls" --serve --port "$FREE"
contains "$ERR" "127.0.0.1:$FREE" "the error names the port"
kill -TERM "$SERVER"
wait "$SERVER"
rc=$?
[ "$rc" = 0 ] && ok "SIGTERM: exit 0" || bad "SIGTERM: exit $rc, wanted 0"
contains "$(cat "$TMP/fixed.out")" "stopped (SIGTERM)" "it says SIGTERM stopped it"

# 10. A recording of the reference writer (../shared/fixtures/jls): other
# summary factors (128 samples, then x20), sample ids starting at 1234567.
# Expected: its .expected.json, computed by its writer from the samples.
FIX=$ERGON_SHARED_DIR/fixtures/jls/shared_basic
start_server fixture "$FIX.jls"
python3 - "$URL" "$FIX.expected.json" <<'EOF2' || fails=$((fails + 1))
import http.client, json, sys
url, exp = sys.argv[1], json.load(open(sys.argv[2]))
host, port = url.split("/")[2].split(":")
tok = url.split("token=")[1]
bad = 0
def check(cond, what):
    global bad
    print(("ok   - " if cond else "FAIL - ") + what)
    bad += 0 if cond else 1
def get(path):
    c = http.client.HTTPConnection(host, int(port), timeout=60)
    c.request("GET", path + "&token=" + tok if "?" in path else path + "?token=" + tok)
    r = c.getresponse()
    return r.status, json.loads(r.read())
st, info = get("/api/info")
lv = [(l["entry_samples"], l["entries"]) for l in info["recordings"][0]["levels"]]
# By hand: 400000 samples; 400000 // 128 = 3125, // 2560 = 156, // 51200 = 7.
check(lv == [(1, 400000), (128, 3125), (2560, 156), (51200, 7)], "reference file: levels of 1, 128, 2560, 51200 samples (%s)" % lv)
# The whole file and the gate window [100000, 300000): sums to the f32
# rounding of the summary means (relative 6e-8), min and max exact.
for a, b, want in [(0, 400000, exp["total"]), (100000, 300000, exp["gate_windows"][0])]:
    st, s = get("/api/stats?rec=0&start=%d&end=%d" % (a, b))
    rel = abs(s["charge_c"] - want["charge_c"]) / want["charge_c"]
    rel_e = abs(s["energy_j"] - want["energy_j"]) / want["energy_j"]
    check(st == 200 and rel <= 1e-7 and rel_e <= 1e-7, "reference file [%d, %d): charge %.10g C, energy %.10g J = the expected %.10g, %.10g (%.1g, %.1g)" % (a, b, s["charge_c"], s["energy_j"], want["charge_c"], want["energy_j"], rel, rel_e))
st, s = get("/api/stats?rec=0&start=0&end=400000")
c, w = s["signals"]["current"], exp["signal_stats"]["current"]
check(c["min"] == w["min"] and c["max"] == w["max"], "reference file: min and max current exact (%r, %r)" % (c["min"], c["max"]))
sys.exit(1 if bad else 0)
EOF2
kill -INT "$SERVER"
wait "$SERVER" && ok "the fixture's server stopped: exit 0" || bad "the fixture's server did not exit 0"

# 11. --json: one document on stdout when it is ready, the stop as a JSON note.
"$E" view "$TMP/a.jls" --serve --json >"$TMP/json.out" 2>"$TMP/json.err" &
SERVER=$!
URL=""
for _ in $(seq 1 600); do
  URL=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["serving"])' "$TMP/json.out" 2>/dev/null)
  [ -n "$URL" ] && break
  kill -0 "$SERVER" 2>/dev/null || break
  sleep 0.1
done
python3 - "$TMP/json.out" "$URL" <<'EOF2' || fails=$((fails + 1))
import json, sys, urllib.request
d = json.load(open(sys.argv[1]))
ok = d.get("command") == "view" and d["serving"].startswith("http://127.0.0.1:") and d["recordings"][0]["jls"].endswith("a.jls")
print(("ok   - " if ok else "FAIL - ") + "--serve --json: {command, serving, recordings} (%s)" % d)
st = urllib.request.urlopen(sys.argv[2].replace("/?", "/api/info?")).status
print(("ok   - " if st == 200 else "FAIL - ") + "--serve --json: its URL answers (%d)" % st)
sys.exit(0 if ok and st == 200 else 1)
EOF2
kill -INT "$SERVER"
wait "$SERVER" && ok "--serve --json: SIGINT, exit 0" || bad "--serve --json: exit not 0"
python3 -c 'import json,sys; l=[json.loads(x) for x in open(sys.argv[1])]; sys.exit(0 if any("stopped (SIGINT)" in x.get("note", {}).get("message", "") for x in l) else 1)' "$TMP/json.err" &&
  ok "--serve --json: the stop is a JSON note on stderr" || { bad "--serve --json: stderr"; cat "$TMP/json.err"; }

# 12. The served page's bins from the recording's summary levels (no
# sample streamed) when a level is as fine as the bins streaming would
# make: a 2.5037 s PPK2 recording (250370 samples) with --max-bins 300
# embeds level 1 (1000 samples an entry: 250 whole entries and a last bin
# of 370 samples from the samples), which must equal what `ergon view
# --out --max-bins 300` computes from every sample. The reference fixture
# summarises its line in other entries (1024, 20480 samples) than its
# current (128, 2560): it is streamed (--max-bins 200: 40 bins of 10000),
# checked against the samples (jls_dump) and its expected gate edges.
record "$TMP/b.jls" 2.5037
"$REF/jls_dump" "$FIX.jls" 1 400000 >"$TMP/fix_current.txt" 2>/dev/null
expect 0 "the written page with --max-bins 300" -- "$E" view "$TMP/b.jls" --max-bins 300 --out "$TMP/written.html"
start_server lv1 "$TMP/b.jls" --max-bins 300
URL_A=$URL SERVER_A=$SERVER
start_server lv2 "$FIX.jls" --max-bins 200
python3 - "$URL_A" "$URL" "$TMP/written.html" "$TMP/fix_current.txt" "$FIX.expected.json" <<'EOF2' || fails=$((fails + 1))
import base64, json, re, struct, sys, urllib.request
url_a, url_f, written, cur_path, exp_path = sys.argv[1:6]
bad = 0
def check(cond, what):
    global bad
    print(("ok   - " if cond else "FAIL - ") + what)
    bad += 0 if cond else 1
def data_of(html):
    return json.loads(re.search(r'<script type="application/json" id="ergon-view-data">(.*?)</script>', html, re.S).group(1))
def f32(b):
    raw = base64.b64decode(b)
    return list(struct.unpack("<%df" % (len(raw) // 4), raw))
def r32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]
served = data_of(urllib.request.urlopen(url_a).read().decode())["recordings"][0]
ref = data_of(open(written).read())["recordings"][0]
check(served["samples"] == ref["samples"] == 250370, "the recording holds 250370 samples (%s)" % served["samples"])
check(served["bins_from"] == {"source": "summary level", "level": 1, "entry_samples": 1000},
      "--max-bins 300: the served page's bins are level 1's entries (%s)" % served["bins_from"])
check(served["bin_samples"] == ref["bin_samples"] == 1000 and served["bins"] == ref["bins"] == 251,
      "251 bins of 1000 samples (the last of 370), as the written page (%s, %s)" % (served["bins"], ref["bins"]))
same = True
worst = 0.0
for a, b in zip(served["signals"], ref["signals"]):
    same &= f32(a["min"]) == f32(b["min"]) and f32(a["max"]) == f32(b["max"])
    for x, y in zip(f32(a["mean"]), f32(b["mean"])):
        worst = max(worst, abs(x - y) / abs(y))
check(same, "every bin's min and max = the written page's (from every sample), the last bin's too")
check(worst <= 1e-6, "every bin's mean = the written page's to 1e-6 (worst %.2g)" % worst)
check([l["bins"] for l in served["lines"]] == [l["bins"] for l in ref["lines"]] and
      served["lines"][0]["first_rise_index"] == ref["lines"][0]["first_rise_index"] == 50000,
      "the lines' bins and gpi[0]'s first rise (50000) = the written page's")
check(served.get("finite_sparse") == ref.get("finite_sparse") == [], "every bin full of finite samples, as written")
check(all(s["lost_samples"] is None for s in served["signals"]), "lost samples: not known from the levels (null), not 0")

fix = data_of(urllib.request.urlopen(url_f).read().decode())["recordings"][0]
exp = json.load(open(exp_path))
cur = [float(x) for x in open(cur_path)]
check(fix["bins_from"] == {"source": "samples"} and fix["bins"] == 40 and fix["bin_samples"] == 10000,
      "reference file, --max-bins 200: streamed (its line's entries differ), 40 bins of 10000 (%s, %s)" % (fix["bins_from"], fix["bins"]))
s = fix["signals"][0]
mn, mx, me = f32(s["min"]), f32(s["max"]), f32(s["mean"])
exact, worst = True, 0.0
for i in range(40):
    x = cur[i * 10000:(i + 1) * 10000]
    exact &= mn[i] == r32(min(x)) and mx[i] == r32(max(x))
    worst = max(worst, abs(me[i] - sum(x) / len(x)) / abs(sum(x) / len(x)))
check(exact and worst <= 1e-6, "every bin = min/mean/max of its samples (mean worst %.2g)" % worst)
hi = list(zip(exp["edges"]["rising"], exp["edges"]["falling"]))
want = []
for i in range(40):
    a, b = i * 10000, (i + 1) * 10000
    h = any(r < b and f > a for r, f in hi)
    l = any(not any(r <= k < f for r, f in hi) for k in (a, b - 1)) or any(a < f < b or a < r < b for r, f in hi)
    want.append((1 if l else 0) | (2 if h else 0))
got = list(base64.b64decode(fix["lines"][0]["bins"]))
check(got == want, "gpi[0]'s bins = the expected edges' (%d of 40 differ)" % sum(1 for p, q in zip(got, want) if p != q))
check(fix["lines"][0]["first_rise_index"] == exp["edges"]["rising"][0] == 40000, "gpi[0]'s first rise = the first expected edge, 40000 (%s)" % fix["lines"][0]["first_rise_index"])
sys.exit(1 if bad else 0)
EOF2
kill -INT "$SERVER" "$SERVER_A"
wait "$SERVER" && wait "$SERVER_A" && ok "both servers stopped: exit 0" || bad "a server did not exit 0"

# 13. Usage.
expect 2 "--serve with --out" -- "$E" view "$TMP/a.jls" --serve --out "$TMP/x.html"
expect 2 "--port without --serve" -- "$E" view "$TMP/a.jls" --port 8080 --out "$TMP/x.html"
expect 2 "--port 0" -- "$E" view "$TMP/a.jls" --serve --port 0
expect 2 "--port 65536" -- "$E" view "$TMP/a.jls" --serve --port 65536
expect 3 "a missing recording" -- "$E" view "$TMP/none.jls" --serve
contains "$ERR" "$TMP/none.jls" "the error names the recording"
finish
