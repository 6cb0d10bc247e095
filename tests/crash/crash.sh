#!/usr/bin/env bash
# Crashes lose nothing: kill -9 of a backend in the middle of a bulk INSERT ...
# SELECT through the trigger, and an immediate shutdown in the middle of a
# recompute, and kill -9 of the background fold worker. After the restart every
# committed row is there, none of the interrupted transaction's is, and the
# collection statistics equal a recompute (after the fold worker's death, once
# dedup.flush_stats folded what it left pending).
#   tests/crash/crash.sh CLUSTER_DIR PORT   (run as root; restarts that cluster)
set -euo pipefail
dir=$1 port=$2
BIN=$("${PG_CONFIG:-/usr/bin/pg_config}" --bindir)
conn=(-h "$dir" -p "$port" -U postgres -d pg_dedup_crash)
as_pg() { sudo -u postgres -- "$@"; }
q() { as_pg psql -X -q -t -A -v ON_ERROR_STOP=1 "${conn[@]}" "$@"; }
wait_up() { for _ in $(seq 1 60); do as_pg psql -X -q -h "$dir" -p "$port" -U postgres -d postgres -c 'SELECT 1' >/dev/null 2>&1 && return 0; sleep 1; done; return 1; }
# The statistics as stored, and as a recompute gives them.
stats() {
  q -c "SELECT s.n_docs || ' ' || s.total_len || ' ' || coalesce((SELECT md5(string_agg(term || ':' || df || ':' || cf, ',' ORDER BY term))
        FROM dedup.term_stats_by_name WHERE collection = 'crash'), '-')
        FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'crash'"
}
check() {
  local what=$1 before after
  before=$(stats)
  q -c "SET client_min_messages = warning" -c "SELECT dedup.recompute('crash')" >/dev/null
  after=$(stats)
  [ "$before" = "$after" ] || { echo "$what: statistics differ from a recompute ($before vs $after)"; exit 1; }
  echo "$what: statistics equal a recompute"
}

as_pg psql -X -q -h "$dir" -p "$port" -U postgres -d postgres -c "DROP DATABASE IF EXISTS pg_dedup_crash" -c "CREATE DATABASE pg_dedup_crash"
q >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION pg_dedup;
CREATE FUNCTION story(s bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg('w' || (abs(hashtext(s || ':' || j)) % 5000), ' ' ORDER BY j) || '. Итог ' || (s % 97) || '.'
  FROM generate_series(1, 30) AS j $$;
CREATE TABLE crash (id bigint PRIMARY KEY, body text);
SELECT dedup.enable('crash', 'body');
INSERT INTO crash SELECT i, story(i % 700) FROM generate_series(1, 1000) AS i;
SQL

# 1. kill -9 of a backend in the middle of a bulk insert.
q -c "INSERT INTO crash SELECT i, story(i % 700) FROM generate_series(1001, 1000000) AS i" >/dev/null 2>&1 &
loader=$!
for _ in $(seq 1 50); do
  pid=$(q -c "SELECT pid FROM pg_stat_activity WHERE query LIKE 'INSERT INTO crash SELECT%' AND pid <> pg_backend_pid()" 2>/dev/null || true)
  [ -n "$pid" ] && break
  sleep 0.2
done
[ -n "$pid" ] || { echo "the bulk insert did not start"; exit 1; }
sleep 3
kill -9 "$pid"
wait "$loader" || true
wait_up
rows=$(q -c "SELECT count(*) FROM crash")
[ "$rows" = 1000 ] || { echo "after kill -9: $rows rows, expected the 1000 committed"; exit 1; }
echo "kill -9 of a backend during a bulk insert: the 1000 committed rows, none of the killed transaction's"
check "after kill -9"

# 2. immediate shutdown in the middle of a recompute.
q -c "INSERT INTO crash SELECT i, story(i % 700) FROM generate_series(1001, 5000) AS i" >/dev/null
q -c "SET client_min_messages = warning" -c "SELECT dedup.recompute('crash')" >/dev/null 2>&1 &
rec=$!
sleep 1
as_pg "$BIN/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
wait "$rec" || true
as_pg "$BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start \
  -o "-p $port -k $dir -c listen_addresses='' -c max_parallel_workers_per_gather=2 -c max_prepared_transactions=8" >/dev/null
wait_up
rows=$(q -c "SELECT count(*) FROM crash")
[ "$rows" = 5000 ] || { echo "after an immediate shutdown: $rows rows, expected 5000"; exit 1; }
echo "immediate shutdown during a recompute: all 5000 committed rows"
check "after an immediate shutdown"
# 3. kill -9 of the background fold worker (dedup.stats_batch > 1): the server
# restarts; the changes whose fold was killed are still pending, and
# dedup.flush_stats folds them (README, "Settings").
# A batch is counted in documents: with a batch of 1,000, the second of two
# loading transactions of 600 rows starts a worker when it commits. A hundred
# words of its own per row give the fold ~120,000 terms to write.
q -c "ALTER DATABASE pg_dedup_crash SET dedup.stats_batch = 1000" >/dev/null
uniq="(SELECT string_agg(translate(md5(i || ':' || g), '0123456789', 'ghijklmnop'), ' ') FROM generate_series(1, 100) AS g)"
watch_sql="DO \$\$ DECLARE p int; BEGIN
  FOR i IN 1..20000 LOOP
    PERFORM pg_stat_clear_snapshot();
    SELECT pid INTO p FROM pg_stat_activity WHERE backend_type = 'pg_dedup fold';
    IF p IS NOT NULL THEN RAISE NOTICE 'fold worker %', p; RETURN; END IF;
    PERFORM pg_sleep(0.002);
  END LOOP; END \$\$"
killed=
next=5001
watch=$(mktemp)
for attempt in 1 2 3; do
  q -c "INSERT INTO crash SELECT i, story(i % 700) || ' ' || $uniq FROM generate_series($next, $((next + 599))) AS i" >/dev/null
  next=$((next + 600))
  q -c "$watch_sql" >"$watch" 2>&1 &
  watcher=$!
  q -c "INSERT INTO crash SELECT i, story(i % 700) || ' ' || $uniq FROM generate_series($next, $((next + 599))) AS i" >/dev/null
  next=$((next + 600))
  wait "$watcher" || true
  wpid=$(grep -o 'fold worker [0-9][0-9]*' "$watch" | awk '{print $3}' | head -n 1 || true)
  if [ -n "$wpid" ] && kill -9 "$wpid" 2>/dev/null; then
    killed=1
    break
  fi
done
rm -f "$watch"
[ -n "$killed" ] || { echo "no fold worker was caught running in 3 attempts"; exit 1; }
sleep 1
wait_up
expected=$((next - 1))
rows=$(q -c "SELECT count(*) FROM crash")
[ "$rows" = "$expected" ] || { echo "after kill -9 of the fold worker: $rows rows, expected $expected"; exit 1; }
echo "kill -9 of the fold worker: all $expected committed rows"
q -c "SELECT dedup.flush_stats('crash')" >/dev/null
check "after kill -9 of the fold worker and dedup.flush_stats"

as_pg psql -X -q -h "$dir" -p "$port" -U postgres -d postgres -c "DROP DATABASE pg_dedup_crash"
echo "crashes lose nothing"
