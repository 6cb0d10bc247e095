#!/usr/bin/env bash
# Rows inserted through a partitioned enabled table while another session changes
# the parent (ALTER TABLE ... SET STATISTICS recurses to the partitions and
# rebuilds their cache entries mid-statement). The row trigger kept the
# partition's tuple descriptor across its lookups; the rebuild freed it, and the
# inserts failed with "column ... no longer has the type dedup.enable gave it" or
# crashed the backend (SIGSEGV). Three rounds; every row must be stored.
# Usage: ddl_under_insert.sh PSQL_ARGS...   (connection options for psql)
set -euo pipefail
psql_() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
psql_ "$@" >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS conc_ddl;
DROP FUNCTION IF EXISTS conc_slow_text(bigint);
SELECT dedup.drop_collection(name) FROM dedup.collections WHERE name = 'conc_ddl';
CREATE FUNCTION conc_slow_text(s bigint) RETURNS text LANGUAGE sql VOLATILE AS $f$
  SELECT pg_sleep(0.2)::text || 'Правительство заявило во вторник о росте цен номер ' || s
         || ' и новой программе строительства метро в районе ' || (s % 13) $f$;
CREATE TABLE conc_ddl (id bigint PRIMARY KEY, body text) PARTITION BY RANGE (id);
CREATE TABLE conc_ddl_a PARTITION OF conc_ddl FOR VALUES FROM (0) TO (1000);
CREATE TABLE conc_ddl_b PARTITION OF conc_ddl FOR VALUES FROM (1000) TO (2000);
SELECT dedup.enable('conc_ddl', 'body');
INSERT INTO conc_ddl SELECT g, 'Новость номер ' || g || ' о погоде в Москве и области' FROM generate_series(1, 200) g;
SQL
for i in 1 2 3; do
  psql_ "$@" -c "INSERT INTO conc_ddl (id, body) SELECT 1000 + $i * 100 + g, conc_slow_text(g) FROM generate_series(1, 15) g" \
    > "/tmp/pg_dedup_conc_ddl_$i.log" 2>&1 &
  insert=$!
  sleep 1
  psql_ "$@" -c "ALTER TABLE conc_ddl ALTER COLUMN body SET STATISTICS $((300 + i))"
  if ! wait "$insert"; then
    echo "round $i: the insert failed:"; cat "/tmp/pg_dedup_conc_ddl_$i.log"; exit 1
  fi
done
n=$(psql_ -t -A "$@" -c "SELECT count(*) FROM conc_ddl_b WHERE dedup_doc IS NOT NULL")
echo "ddl under insert: $n of 45 rows stored with their documents"
[ "$n" = 45 ] || exit 1
psql_ "$@" >/dev/null <<'SQL'
SET client_min_messages = warning;
SELECT dedup.disable('conc_ddl');
DROP TABLE conc_ddl;
DROP FUNCTION conc_slow_text(bigint);
SQL
