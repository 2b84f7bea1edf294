#!/usr/bin/env bash
# `ergon db` on SQLite (the default backend): the shared suite (db_suite.sh),
# then the faults of a file database: default path, corrupt file, foreign
# SQLite database, a schema from a newer ergon; and PostgreSQL unreachable.
. "$(dirname "$0")/run_lib.sh"
DB=$TMP/results.db
sql() { python3 -c 'import sqlite3,sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print("|".join("" if v is None else repr(v) if isinstance(v,float) else str(v) for v in r))' "$DB" "$1"; }
. "$(dirname "$0")/db_suite.sh"
HEX_JSON="hex(json)"
. "$(dirname "$0")/db_batch_suite.sh"

# The default database: $XDG_DATA_HOME/ergon/results.db, folder created.
expect 0 "default --db under XDG_DATA_HOME" -- env XDG_DATA_HOME="$TMP/xdg" "$E" db ingest "$A/r1.json"
[ -f "$TMP/xdg/ergon/results.db" ] && ok "created $TMP/xdg/ergon/results.db" || bad "no default database"
expect 0 "default --db under HOME" -- env -u XDG_DATA_HOME HOME="$TMP/home" "$E" db list
[ -f "$TMP/home/.local/share/ergon/results.db" ] && ok "created ~/.local/share/ergon/results.db" ||
  bad "no ~/.local/share database"

# A file that is not a database at all.
head -c 4096 /dev/urandom >"$TMP/corrupt.db"
expect 3 "a corrupt file is refused" -- "$E" db --db "$TMP/corrupt.db" list
contains "$ERR" "$TMP/corrupt.db" "names the file"
contains "$ERR" "not an ergon (SQLite) database" "says what it is not"
cp "$A/r1.json" "$TMP/json.db"
expect 3 "a JSON file as --db is refused" -- "$E" db --db "$TMP/json.db" ingest "$A/r1.json"
cmp -s "$A/r1.json" "$TMP/json.db" && ok "and left untouched" || bad "the JSON file was changed"

# An SQLite database of something else.
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("CREATE TABLE invoices (n)"); c.commit()' "$TMP/foreign.db"
expect 1 "a foreign SQLite database is refused" -- "$E" db --db "$TMP/foreign.db" list
contains "$ERR" "not ergon's" "says it is not ergon's"
contains "$ERR" "invoices" "names what it holds"

# A schema from a newer ergon: refused with both versions.
cp "$DB" "$TMP/newer.db"
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("UPDATE schema_version SET version = 7"); c.commit()' "$TMP/newer.db"
expect 1 "a newer schema is refused" -- "$E" db --db "$TMP/newer.db" list
contains "$ERR" "schema version 7 was written by a newer ergon" "names the database's version"
contains "$ERR" "reads schema versions up to 6" "names this ergon's version"
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("DELETE FROM schema_version"); c.commit()' "$TMP/newer.db"
expect 3 "an empty schema_version table is refused" -- "$E" db --db "$TMP/newer.db" list
contains "$ERR" "holds no valid version" "says so"

# PostgreSQL unreachable (nothing listens on port 1).
expect 3 "PostgreSQL unreachable" -- "$E" db --db postgresql://ergon:secret@127.0.0.1:1/lab ingest "$A/r1.json"
contains "$ERR" "unreachable" "says unreachable"
contains "$ERR" "port 1" "names the port"
case "$ERR" in *secret*) bad "the password is printed" ;; *) ok "the password is not printed" ;; esac
finish
