#!/usr/bin/env bash
# A batch of two artifacts (db_batch_lib.sh), the process killed (SIGKILL)
# just before each write-side call of the ingest in turn: afterwards both
# are stored whole or both absent, the database passes PRAGMA
# integrity_check, and an ingest run again stores them once.
. "$(dirname "$0")/run_lib.sh"
. "$ERGON_SOURCE_DIR/tests/support/faultinj/faultinj_lib.sh"
. "$(dirname "$0")/db_batch_lib.sh"
export FAULTINJ_KILL=1
fi_walk "a batch of two, killed at every write in turn" ergon-ingest check_kill -- "${CMD[@]}"
[ "${FI_LANDED:-0}" -ge 3 ] && ok "kills landed in $FI_LANDED of $FI_RUNS runs" || bad "only ${FI_LANDED:-0} kills landed"
finish
