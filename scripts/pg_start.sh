#!/usr/bin/env bash
# Start a throw-away PostgreSQL server on loopback only, for the `ergon db`
# PostgreSQL tests (tests/functional/test_db_postgresql.sh), and print the
# shell lines that point the tests at it:
#   eval "$(scripts/pg_start.sh)"      # sets ERGON_PG_URL and ERGON_PG_DIR
#   ...; scripts/pg_stop.sh "$ERGON_PG_DIR"
# The cluster lives in a temporary folder (initdb + pg_ctl from Debian's
# postgresql package), listens on 127.0.0.1 and its own socket folder only,
# trusts loopback connections (nothing else can reach it) and is removed by
# pg_stop.sh. As root it runs as the postgres system user (initdb refuses
# root).
set -euo pipefail
bindir=${PG_BINDIR:-}
if [ -z "$bindir" ]; then
  for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && bindir=$d; done
fi
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
  echo "pg_start: no initdb found (install Debian's postgresql: scripts/bootstrap.sh)" >&2
  exit 1
fi
dir=$(mktemp -d /tmp/ergon-pg-XXXXXX)
as=()
if [ "$(id -u)" -eq 0 ]; then
  chown postgres: "$dir"
  as=(runuser -u postgres --)
fi
port=${PG_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}
"${as[@]}" "$bindir/initdb" -D "$dir/data" -U ergon -A trust -E UTF8 --no-instructions >"$dir/initdb.log" 2>&1 ||
  { cat "$dir/initdb.log" >&2; exit 1; }
"${as[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=50 -c fsync=off" start >/dev/null ||
  { cat "$dir/server.log" >&2; exit 1; }
echo "export ERGON_PG_URL=postgresql://ergon@127.0.0.1:$port/postgres"
echo "export ERGON_PG_DIR=$dir"
