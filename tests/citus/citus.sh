#!/usr/bin/env bash
# Citus: pg_dedup on a distributed table of a real cluster, a coordinator and two
# workers on this machine. Builds Citus 13.2 from ../shared/citus into the
# PostgreSQL that PG_CONFIG names (../shared/citus/build.sh, once), starts the three
# nodes, runs tests/citus/citus.sql on the coordinator and compares its output with
# tests/citus/expected/citus.out, checks that an insert fails while a worker is
# down and works again once it is back, and stops the nodes.
# Skipped, with a line saying so, when ../shared/citus is absent.
#   tests/citus/citus.sh WORK_DIR FIRST_PORT   (as root; ports FIRST_PORT .. FIRST_PORT+2)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${1:?usage: tests/citus/citus.sh WORK_DIR FIRST_PORT}
FIRST=${2:?usage: tests/citus/citus.sh WORK_DIR FIRST_PORT}
SHARED=${PG_DEDUP_SHARED:-$ROOT/../shared}
if [ ! -f "$SHARED/citus/build.sh" ]; then
  echo "citus tier skipped: $SHARED/citus is absent (it carries the Citus source this tier builds)"
  exit 0
fi
export PG_CONFIG=${PG_CONFIG:-/usr/bin/pg_config}
PG_CONFIG=$PG_CONFIG CITUS_BUILD_DIR="$WORK/citus-build" bash "$SHARED/citus/build.sh"
BIN=$("$PG_CONFIG" --bindir)
DB=pg_dedup_citus
as_pg() { sudo -u postgres -- "$@"; }
node_dir() { echo "$WORK/citus/n$1"; }
port_of() { echo $((FIRST + $1)); }
start_node() {
  local d; d=$(node_dir "$1")
  as_pg "$BIN/pg_ctl" -D "$d/data" -l "$d/server.log" -w start >/dev/null
}
stop_node() {
  local d; d=$(node_dir "$1")
  [ -f "$d/data/PG_VERSION" ] && as_pg "$BIN/pg_ctl" -D "$d/data" -m fast -w stop >/dev/null 2>&1 || true
}
stop_all() { for i in 0 1 2; do stop_node "$i"; done; }
trap stop_all EXIT
mkdir -p "$WORK/citus"
chown postgres:postgres "$WORK" "$WORK/citus"
for i in 0 1 2; do
  d=$(node_dir "$i")
  stop_node "$i"
  rm -rf "$d"
  mkdir -p "$d"
  chown postgres:postgres "$d"
  as_pg "$BIN/initdb" -D "$d/data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  cat >> "$d/data/postgresql.conf" <<CONF
port = $(port_of "$i")
listen_addresses = 'localhost'
unix_socket_directories = '$d'
shared_preload_libraries = 'citus'
max_worker_processes = 16
max_prepared_transactions = 50
CONF
  start_node "$i"
done
q() {  # q NODE [psql args]
  local n=$1; shift
  as_pg "$BIN/psql" -X -q -t -A -v ON_ERROR_STOP=1 -h "$(node_dir "$n")" -p "$(port_of "$n")" -U postgres "$@"
}
# One node for comparison: a database of the coordinator's server without Citus.
q 0 -d postgres -c "CREATE DATABASE pg_dedup_single"
for i in 0 1 2; do
  q "$i" -d postgres -c "CREATE DATABASE $DB"
  q "$i" -d "$DB" -c "CREATE EXTENSION citus"
done
q 0 -d "$DB" >/dev/null <<SQL
SELECT citus_set_coordinator_host('localhost', $(port_of 0));
SELECT citus_add_node('localhost', $(port_of 1));
SELECT citus_add_node('localhost', $(port_of 2));
SQL
echo "citus $(q 0 -d "$DB" -c "SELECT extversion FROM pg_extension WHERE extname = 'citus'"): coordinator on $(port_of 0), workers on $(port_of 1) and $(port_of 2)"
out="$WORK/citus/citus.out"
as_pg "$BIN/psql" -X -a -v ON_ERROR_STOP=1 -h "$(node_dir 0)" -p "$(port_of 0)" -U postgres -d "$DB" \
  -f "$ROOT/tests/citus/citus.sql" > "$out" 2>&1 || { cat "$out" | tail -40; exit 1; }
# The ports and the checkout's path differ from run to run.
sed -i "s/$(port_of 1)/PORT1/g; s/$(port_of 2)/PORT2/g; s|psql:$ROOT/|psql:|g" "$out"
if ! diff -u "$ROOT/tests/citus/expected/citus.out" "$out"; then
  echo "citus tier: output differs from tests/citus/expected/citus.out (above)"
  exit 1
fi
echo "citus: same verdicts, pairs, groups and statistics as a single node, across shards on both workers"
# A worker down: inserts fail (nothing is stored unchecked); once it is back they work.
stop_node 2
if q 0 -d "$DB" -c "INSERT INTO news VALUES (900001, now(), 'Пока один рабочий узел лежит, вставка не проходит.')" 2>"$WORK/citus/down.err"; then
  echo "citus tier: an insert succeeded while a worker was down"; exit 1
fi
echo "with a worker down an insert fails: $(head -1 "$WORK/citus/down.err")"
start_node 2
q 0 -d "$DB" -c "INSERT INTO news VALUES (900001, now(), 'Пока один рабочий узел лежит, вставка не проходит.')"
echo "with the worker back the insert works: verdict $(q 0 -d "$DB" -c "SELECT dedup_verdict FROM news WHERE id = 900001")"
