/* libergon's whole public API in one include: #include <ergon/ergon.h>.
 *
 * Every installed header of include/ergon/ (docs/API.md says what each
 * holds and lists every exported function; scripts/api_symbols.py checks
 * that this file includes them all). C11; link with `pkg-config --libs
 * ergon` or find_package(ergon) (ergon::ergon). The functions return 0 or
 * a negative ERGON_E* code with the first error's message in a struct
 * ergon_err (ergon/error.h); the library never prints and never exits.
 */
#ifndef ERGON_ERGON_H
#define ERGON_ERGON_H

#include "ergon/analyze.h"
#include "ergon/artifact.h"
#include "ergon/bridge.h"
#include "ergon/clock.h"
#include "ergon/compare.h"
#include "ergon/config.h"
#include "ergon/db.h"
#include "ergon/db_types.h"
#include "ergon/doctor.h"
#include "ergon/dynbuf.h"
#include "ergon/error.h"
#include "ergon/figures.h"
#include "ergon/fileio.h"
#include "ergon/gated.h"
#include "ergon/hpx.h"
#include "ergon/hpx_capture.h"
#include "ergon/hpx_report.h"
#include "ergon/instrument.h"
#include "ergon/issue_list.h"
#include "ergon/issues.h"
#include "ergon/jcs.h"
#include "ergon/jls.h"
#include "ergon/jls_writer.h"
#include "ergon/json_alloc.h"
#include "ergon/kernels.h"
#include "ergon/kernels_run.h"
#include "ergon/lifecycle.h"
#include "ergon/live_gate.h"
#include "ergon/live_raw.h"
#include "ergon/model.h"
#include "ergon/model_fw.h"
#include "ergon/model_input.h"
#include "ergon/model_run.h"
#include "ergon/model_shape.h"
#include "ergon/mtime.h"
#include "ergon/parse.h"
#include "ergon/plausible.h"
#include "ergon/plugin.h"
#include "ergon/pmu.h"
#include "ergon/power_csv.h"
#include "ergon/power_on.h"
#include "ergon/profile.h"
#include "ergon/record.h"
#include "ergon/report.h"
#include "ergon/report_html.h"
#include "ergon/reserve.h"
#include "ergon/rtt_gdb.h"
#include "ergon/select.h"
#include "ergon/session.h"
#include "ergon/sha256.h"
#include "ergon/signature.h"
#include "ergon/sim_host.h"
#include "ergon/stats.h"
#include "ergon/stream.h"
#include "ergon/suggest.h"
#include "ergon/transport.h"
#include "ergon/utf8.h"
#include "ergon/validate.h"
#include "ergon/verdict.h"
#include "ergon/workload.h"

#endif
