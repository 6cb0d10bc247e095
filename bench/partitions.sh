#!/usr/bin/env bash
# Partitioned tables and the time window: candidate lookups and trigger inserts on
# a table of N rows (default 1,000,000) spread over one year, unpartitioned and
# partitioned by month (12 partitions), the partitioned one without and with a
# 30-day window (and the unpartitioned one with the window, which filters rows
# but cannot skip any index). Prints, per configuration:
#   - find_original of L stored-like documents dated in the last month (half new
#     texts, half reprints of that month's rows): p50 / p99 latency in ms, and the
#     tables (partitions) searched per lookup;
#   - one INSERT ... SELECT of M new rows of the last month (every 5th a reprint),
#     rolled back after: docs/s, and the backend's CPU time per row (from
#     /proc/PID/stat, which does not depend on the machine's load as wall time does).
# The unpartitioned table is loaded through the trigger (its bulk rate is printed
# too), then copied with its documents into the partitioned one by the owner
# (taken as given), and both are recomputed, so their statistics and signatures are
# the same. Builds and installs the extension (release) unless --skip-build.
#   bash bench/partitions.sh [--rows N] [--lookups L] [--new M] [--skip-build]
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rows=1000000 lookups=1000 new=5000 skip_build=0
while (($#)); do
  case "$1" in
    --rows) rows=$2; shift ;;
    --lookups) lookups=$2; shift ;;
    --new) new=$2; shift ;;
    --skip-build) skip_build=1 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
  shift
done
cd "$REPO"
. "$REPO/bench/common.sh"
TARGET=${CARGO_TARGET_DIR:-/tmp/pg_dedup_bench_target}
if ((skip_build == 0)); then
  bash scripts/setup.sh >/dev/null
  CARGO_TARGET_DIR=$TARGET cargo pgrx install --release --pg-config "${PG_CONFIG:-/usr/bin/pg_config}" >/dev/null
fi
bench_cluster_start
conn=(-h "$BENCH_CLUSTER" -p "$BENCH_PORT" -U postgres -d postgres)
q() { sudo -u postgres psql -X -q -t -A -v ON_ERROR_STOP=1 "${conn[@]}" "$@"; }
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start; $rows rows, $lookups lookups, $new new rows per insert"
q >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS flat, parted, probes, fresh;
DROP TYPE IF EXISTS parted_dedup_key;
DROP EXTENSION IF EXISTS pg_dedup CASCADE;
DROP FUNCTION IF EXISTS story(bigint), published(bigint);
CREATE EXTENSION pg_dedup;
$STORY_SQL
-- Row i is published at i / N of the year 2024; every 5th row reprints row i - 3.
CREATE FUNCTION published(i bigint) RETURNS timestamptz LANGUAGE sql IMMUTABLE AS
  \$\$ SELECT timestamptz '2024-01-01 00:00+00' + (i::float8 / $rows) * interval '365 days' \$\$;
CREATE TABLE flat (id bigint PRIMARY KEY, published timestamptz NOT NULL, body text);
CREATE TABLE parted (id bigint, published timestamptz NOT NULL, body text, PRIMARY KEY (id, published))
  PARTITION BY RANGE (published);
DO \$\$
BEGIN
  FOR m IN 1..12 LOOP
    EXECUTE format('CREATE TABLE parted_%s PARTITION OF parted FOR VALUES FROM (%L) TO (%L)', m,
                   make_timestamptz(2024, m, 1, 0, 0, 0, 'UTC'),
                   CASE WHEN m = 12 THEN make_timestamptz(2025, 1, 1, 0, 0, 0, 'UTC')
                        ELSE make_timestamptz(2024, m + 1, 1, 0, 0, 0, 'UTC') END);
  END LOOP;
END \$\$;
SELECT dedup.enable('flat', 'body', published_at => 'published');
SELECT dedup.enable('parted', 'body', published_at => 'published');
SQL
t0=$(date +%s.%N)
q -c "INSERT INTO flat SELECT i, published(i), story(CASE WHEN i % 5 = 0 THEN i - 3 ELSE i END) FROM generate_series(1, $rows) AS i"
t1=$(date +%s.%N)
printf 'load: %s rows into the unpartitioned table through the trigger in %.0f s = %.0f docs/s\n' \
  "$rows" "$(echo "$t1 - $t0" | bc)" "$(echo "$rows / ($t1 - $t0)" | bc -l)"
q >/dev/null <<'SQL'
SET client_min_messages = warning;
INSERT INTO parted SELECT id, published, body, dedup_doc, dedup_sig, NULL, dedup_verdict FROM flat;
SELECT dedup.recompute('flat'), dedup.recompute('parted');
VACUUM ANALYZE flat;
VACUUM ANALYZE parted;
SQL
echo "sizes: flat $(q -c "SELECT pg_size_pretty(pg_total_relation_size('flat'))"), parted $(q -c "SELECT pg_size_pretty(sum(pg_total_relation_size(relid))) FROM pg_partition_tree('parted')") in $(q -c "SELECT count(*) FROM pg_partition_tree('parted') WHERE isleaf") partitions"
# Probes: documents dated in the last month, half reprints of that month's rows.
q >/dev/null <<SQL
CREATE TABLE probes AS
SELECT g, dedup.to_document(story(CASE WHEN g % 2 = 0 THEN $rows - 1 - g * 7 ELSE 10000000 + g END), NULL,
                            published($rows - 1 - g * 7)) AS doc
FROM generate_series(1, $lookups) AS g;
CREATE TABLE fresh AS
SELECT $rows + g AS id, published($rows) - (g % 1000) * interval '1 minute' AS published,
       story(CASE WHEN g % 5 = 0 THEN $rows - 1 - g * 3 ELSE 20000000 + g END) AS body
FROM generate_series(1, $new) AS g;
SQL
tick=$(getconf CLK_TCK)
run_config() {  # label table window
  local label=$1 tbl=$2 window=$3
  q -c "SELECT dedup.set_time_window('$tbl', $window)" >/dev/null
  local out
  out=$(q <<SQL
SET client_min_messages = warning;
-- Warm the backend's caches (statistics, model, configuration) with the first probes.
SELECT count(*) FROM probes p, dedup.find_original('$tbl', p.doc) f WHERE p.g <= 20;
SELECT dedup._leaves_searched() AS l0 \gset
CREATE TEMP TABLE t AS SELECT g, 0::float8 AS ms FROM probes WHERE false;
DO \$\$
DECLARE r record; t0 timestamptz;
BEGIN
  FOR r IN SELECT g, doc FROM probes ORDER BY g LOOP
    t0 := clock_timestamp();
    PERFORM count(*) FROM dedup.find_original('$tbl', r.doc);
    INSERT INTO t VALUES (r.g, extract(epoch FROM clock_timestamp() - t0) * 1000);
  END LOOP;
END \$\$;
SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2) || ' ' ||
       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 2) || ' ' ||
       round((dedup._leaves_searched() - :l0)::numeric / count(*), 2) FROM t;
SQL
)
  read -r p50 p99 leaves <<<"$(echo "$out" | tail -1)"
  # Inserts, in a transaction rolled back after; the backend's CPU time from /proc.
  local c0 c1
  out=$(q <<SQL
SET client_min_messages = warning;
SELECT pg_backend_pid() AS pid \gset
\setenv BACKEND :pid
\! awk '{print \$14 + \$15}' /proc/\$BACKEND/stat > /tmp/pg_dedup_bench_cpu0
SELECT extract(epoch FROM clock_timestamp()) AS w0 \gset
BEGIN;
INSERT INTO $tbl (id, published, body) SELECT id, published, body FROM fresh ORDER BY id;
SELECT extract(epoch FROM clock_timestamp()) - :w0 AS wall, count(*) FILTER (WHERE dedup_verdict <> 'distinct') AS dup
FROM $tbl WHERE id > $rows;
\! awk '{print \$14 + \$15}' /proc/\$BACKEND/stat > /tmp/pg_dedup_bench_cpu1
ROLLBACK;
SQL
)
  read -r wall dups <<<"$(echo "$out" | tail -1 | tr '|' ' ')"
  c0=$(cat /tmp/pg_dedup_bench_cpu0) c1=$(cat /tmp/pg_dedup_bench_cpu1)
  printf '%-36s lookup p50 %6s ms  p99 %6s ms  tables searched %5s | insert %6.0f docs/s  CPU %5.0f us/row  (%s of %s not distinct)\n' \
    "$label" "$p50" "$p99" "$leaves" "$(echo "$new / $wall" | bc -l)" "$(echo "($c1 - $c0) * 1000000 / $tick / $new" | bc -l)" "$dups" "$new"
}
run_config "unpartitioned, no window" flat NULL
run_config "unpartitioned, 30-day window" flat "interval '30 days'"
run_config "12 partitions, no window" parted NULL
run_config "12 partitions, 30-day window" parted "interval '30 days'"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
