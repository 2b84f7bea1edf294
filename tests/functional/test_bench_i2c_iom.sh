#!/usr/bin/env bash
# power.ina228.i2c_iom acts on the virtual bench (issue 37: the key
# appeared only in a hint). The bench's INA228 is wired to I2C master 1
# (ERGON_SIM_INA228_IOM, the key's default); a firmware configured for
# another master finds nothing there, as on a board: ina228_init fails
# (a NACK), the power stage fails (exit 1) and the hint names the key.
. "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
int=(--board sim --power --set power.mode=internal --set power.ina228.board=adafruit-ina228)
expect 0 "i2c_iom 1, the bench's wiring" -- "$E" profile "${int[@]}" --set power.ina228.i2c_iom=1 --out "$TMP/i1"
expect 1 "i2c_iom 2: nothing answers" -- "$E" profile "${int[@]}" --set power.ina228.i2c_iom=2 --out "$TMP/i2"
python3 - "$TMP/i2/summary.json" <<'PY' && ok "profile.ina228_init_failed, the hint names power.ina228.i2c_iom" || bad "i2c_iom 2: summary"
import json, sys
d = json.load(open(sys.argv[1]))
iss = [i for i in d["issues"] if i["code"] == "profile.ina228_init_failed"]
sys.exit(0 if iss and "power.ina228.i2c_iom" in iss[0]["message"] else 1)
PY
finish
