# reseal IN OUT PYTHON: a test fixture made from an artifact. The python
# statements edit the parsed artifact `d`; the result is written to OUT and
# sealed again (`ergon digest` gives the new report_id), so it verifies as
# far as its digest goes. Sourced by tests; nothing in OUT was measured.
reseal() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, subprocess, sys, os
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
d.pop("report_id", None)
json.dump(d, open(sys.argv[2], "w"), indent=1)
rid = subprocess.check_output([os.environ["ERGON_BIN"], "digest", sys.argv[2]]).decode().strip()
d["report_id"] = rid
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
}
