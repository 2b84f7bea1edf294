# The --json contract, checked the way a script relies on it (sourced by
# test_cli_json.sh and test_cli_json_warnings.sh after run_lib.sh; needs $TMP
# and a variable `covered`).
covered=${covered:- }

# check WANT_RC NAME -- CMD...: run CMD (it must hold --json) and check the
# contract; the document is left in $TMP/doc.json.
check() {
  local want=$1 name=$2
  shift 3
  covered="$covered$name "
  "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
  local rc=$?
  [ "$rc" = "$want" ] && ok "$name: exit $rc" || { bad "$name: exit $rc, wanted $want"; head -c 600 "$TMP/err"; }
  python3 - "$TMP/out" "$TMP/err" "$rc" "$TMP/doc.json" <<'PY' && ok "$name: stdout one JSON document, stderr JSON lines" || bad "$name: not the --json contract"
import json, sys
out = open(sys.argv[1], "rb").read().decode()
err = open(sys.argv[2], "rb").read().decode()
rc = int(sys.argv[3])
def fail(msg):
    print("   ", msg); print("    stdout:", out[:300]); print("    stderr:", err[:600]); sys.exit(1)
if "\x1b" in out or "\x1b" in err:
    fail("an escape sequence")
if out.strip():
    try:
        doc = json.loads(out)
    except ValueError as e:
        fail("stdout is not one JSON document: %s" % e)
    json.dump(doc, open(sys.argv[4], "w"))
elif rc == 0:
    fail("exit 0 and no document")
else:
    open(sys.argv[4], "w").write("null")
exits = []
for line in err.splitlines():
    try:
        o = json.loads(line)
    except ValueError:
        fail("a stderr line is not JSON: %r" % line[:200])
    if not isinstance(o, dict) or len(o) != 1 or next(iter(o)) not in ("error", "verdict", "warning", "note"):
        fail("a stderr line is not {error|verdict|warning|note: ...}: %r" % line[:200])
    k, v = next(iter(o.items()))
    if k in ("warning", "note") and not v.get("message"):
        fail("a %s line without its message" % k)
    if k in ("error", "verdict"):
        exits.append(v.get("exit"))
        if not v.get("message", v.get("why")):
            fail("an %s line without its message" % k)
if rc != 0 and rc not in exits:
    fail("exit %d without an error or verdict line saying so (%r)" % (rc, exits))
if rc == 0 and exits:
    fail("exit 0 with an error line")
PY
}
# doc EXPR WHAT: a Python expression on the document d is true (stderr's JSON
# lines are e, a list of {kind: body}).
doc() {
  python3 -c "import json,sys; d=json.load(open('$TMP/doc.json')); e=[json.loads(l) for l in open('$TMP/err')]; sys.exit(0 if ($1) else 1)" &&
    ok "$2" || { bad "$2"; head -c 400 "$TMP/doc.json"; echo; }
}

