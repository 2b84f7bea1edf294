#!/usr/bin/env bash
# Stop and remove the server scripts/pg_start.sh started (argument: its folder).
set -euo pipefail
dir=${1:?usage: pg_stop.sh ERGON_PG_DIR}
case "$dir" in /tmp/ergon-pg-*) ;; *) echo "pg_stop: $dir is not a pg_start.sh folder" >&2; exit 2;; esac
bindir=${PG_BINDIR:-}
if [ -z "$bindir" ]; then
  for d in /usr/lib/postgresql/*/bin; do [ -x "$d/pg_ctl" ] && bindir=$d; done
fi
as=()
[ "$(id -u)" -eq 0 ] && as=(runuser -u postgres --)
"${as[@]}" "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
rm -rf "$dir"
