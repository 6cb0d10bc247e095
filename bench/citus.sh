#!/usr/bin/env bash
# One node against a Citus cluster (a coordinator and two workers, all on this
# machine) on the same stream: a table of P rows (loaded by single-row inserts),
# then S single-row inserts, each its own transaction, through one connection, and
# L find_original lookups. Prints docs/s of the inserts and lookup p50 / p99 in ms
# for each. Needs Citus built into the PostgreSQL that PG_CONFIG names
# (../shared/citus/build.sh) and pg_dedup installed there (bench/partitions.sh or
# cargo pgrx install --release). Ports BENCH_PORT .. BENCH_PORT+2 (default 54412).
# --shards sets citus.shard_count for the distributed table (Citus's default 32).
#   bash bench/citus.sh [--preload P] [--stream S] [--lookups L] [--shards N]
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
preload=5000 stream=1000 lookups=500 shards=32
while (($#)); do
  case "$1" in
    --preload) preload=$2; shift ;;
    --stream) stream=$2; shift ;;
    --lookups) lookups=$2; shift ;;
    --shards) shards=$2; shift ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
  shift
done
. "$REPO/bench/common.sh"
PG_CONFIG=${PG_CONFIG:-/usr/bin/pg_config}
BIN=$("$PG_CONFIG" --bindir)
[ -f "$("$PG_CONFIG" --pkglibdir)/citus.so" ] || { echo "citus is not installed in $PG_CONFIG's PostgreSQL: run ../shared/citus/build.sh"; exit 1; }
DIR=${BENCH_CLUSTER:-/tmp/pg_dedup_citus_bench}
FIRST=${BENCH_PORT:-54412}
as_pg() { sudo -u postgres -- "$@"; }
stop_all() { for i in 0 1 2; do as_pg "$BIN/pg_ctl" -D "$DIR/n$i/data" -m fast -w stop >/dev/null 2>&1 || true; done; }
trap stop_all EXIT
stop_all
rm -rf "$DIR"; mkdir -p "$DIR"; chown postgres:postgres "$DIR"
for i in 0 1 2; do
  d=$DIR/n$i; mkdir -p "$d"; chown postgres:postgres "$d"
  as_pg "$BIN/initdb" -D "$d/data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  cat >> "$d/data/postgresql.conf" <<CONF
port = $((FIRST + i))
listen_addresses = 'localhost'
unix_socket_directories = '$d'
shared_preload_libraries = 'citus'
max_worker_processes = 16
max_prepared_transactions = 50
CONF
  as_pg "$BIN/pg_ctl" -D "$d/data" -l "$d/server.log" -w start >/dev/null
done
q() { local n=$1; shift; as_pg "$BIN/psql" -X -q -t -A -v ON_ERROR_STOP=1 -h "$DIR/n$n" -p $((FIRST + n)) -U postgres "$@"; }
q 0 -d postgres -c "CREATE DATABASE single"
for i in 0 1 2; do q "$i" -d postgres -c "CREATE DATABASE dist"; q "$i" -d dist -c "CREATE EXTENSION citus"; done
q 0 -d dist -c "SELECT citus_set_coordinator_host('localhost', $FIRST)" \
  -c "SELECT citus_add_node('localhost', $((FIRST + 1)))" -c "SELECT citus_add_node('localhost', $((FIRST + 2)))" >/dev/null
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start; preload $preload, stream $stream, lookups $lookups, $shards shards"
for db in single dist; do
  q 0 -d "$db" >/dev/null <<SQL
SET client_min_messages = warning;
CREATE EXTENSION pg_dedup;
$STORY_SQL
CREATE TABLE news (id bigint PRIMARY KEY, published timestamptz, body text);
$( [ $db = dist ] && echo "SET citus.shard_count = $shards; SELECT create_distributed_table('news', 'id');" )
SELECT dedup.enable('news', 'body', published_at => 'published');
CREATE TABLE probes AS SELECT g, dedup.to_document(story(CASE WHEN g % 2 = 0 THEN g * 7 ELSE 50000000 + g END)) AS doc
FROM generate_series(1, $lookups) AS g;
SQL
  # The preload too is single-row inserts: on Citus a statement whose rows reach
  # several workers is refused or deadlocks (docs/scale-out.md, Limits).
  q 0 -d "$db" -c "SELECT format('INSERT INTO news VALUES (%s, %L, %L);', i, timestamptz '2024-01-01' + i * interval '1 minute',
                   story(CASE WHEN i % 5 = 0 THEN i - 3 ELSE i END)) FROM generate_series(1, $preload) AS i" > "$DIR/preload_$db.sql"
  q 0 -d "$db" -f "$DIR/preload_$db.sql" >/dev/null
  q 0 -d "$db" -c "SET client_min_messages = warning" -c "SELECT dedup.recompute('news')" >/dev/null
  q 0 -d "$db" -c "SELECT format('INSERT INTO news VALUES (%s, %L, %L);', $preload + i, timestamptz '2024-06-01' + i * interval '1 minute',
                   story(CASE WHEN i % 5 = 0 THEN $preload - i - 1 ELSE 90000000 + i END)) FROM generate_series(1, $stream) AS i" > "$DIR/stream_$db.sql"
done
for db in single dist; do
  t0=$(date +%s.%N)
  q 0 -d "$db" -f "$DIR/stream_$db.sql" >/dev/null
  t1=$(date +%s.%N)
  out=$(q 0 -d "$db" <<'SQL'
SET client_min_messages = warning;
SELECT count(*) FROM probes p, dedup.find_original('news', p.doc) f WHERE p.g <= 20;
CREATE TEMP TABLE t (ms float8);
DO $$
DECLARE r record; t0 timestamptz;
BEGIN
  FOR r IN SELECT doc FROM probes ORDER BY g LOOP
    t0 := clock_timestamp();
    PERFORM count(*) FROM dedup.find_original('news', r.doc);
    INSERT INTO t VALUES (extract(epoch FROM clock_timestamp() - t0) * 1000);
  END LOOP;
END $$;
SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2) || ' ' ||
       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 2) FROM t;
SELECT count(duplicate_of) FROM news;
SQL
)
  read -r p50 p99 <<<"$(echo "$out" | sed -n 2p)"
  marked=$(echo "$out" | sed -n 3p)
  label=$([ $db = single ] && echo "one node" || echo "coordinator + 2 workers")
  printf '%-24s stream %6.0f docs/s (%s single-row inserts) | find_original p50 %6s ms  p99 %6s ms | marked rows %s\n' \
    "$label" "$(echo "$stream / ($t1 - $t0)" | bc -l)" "$stream" "$p50" "$p99" "$marked"
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
