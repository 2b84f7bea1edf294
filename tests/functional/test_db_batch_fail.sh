#!/usr/bin/env bash
# A batch of two artifacts (db_batch_lib.sh), every write-side call of the
# ingest failing in turn (ENOSPC/EIO): exit 0 with both stored whole, or 3
# with neither; the database always passes PRAGMA integrity_check.
. "$(dirname "$0")/run_lib.sh"
. "$ERGON_SOURCE_DIR/tests/support/faultinj/faultinj_lib.sh"
. "$(dirname "$0")/db_batch_lib.sh"
fi_walk "a batch of two, every write failing in turn" ergon-ingest check_fail -- "${CMD[@]}"
[ "${FI_LANDED:-0}" -ge 3 ] && ok "faults landed in $FI_LANDED of $FI_RUNS runs" || bad "only ${FI_LANDED:-0} faults landed"
finish
