#!/usr/bin/env bash
# Ingest benchmark with PostgreSQL's default settings (only the port and socket
# directory are set): a bulk INSERT ... SELECT and a COPY of N short documents into
# an enabled table against the same into a plain table, and 1, 2 and 4 concurrent
# single-row writers (pgbench) against an enabled table of N rows (each run on a
# fresh copy of it). Prints docs/s, the trigger's share of plain (trigger rate /
# plain rate), a floor for the bulk load (the analysis, and storing the trigger's
# documents and signatures with the same GIN index, without the trigger), the
# writers' ratio to one writer, the WAL and the machine's CPU per insert, and what
# the writers waited on. Builds and installs the extension (release) unless --skip-build.
#   bash bench/ingest.sh [--rows N] [--seconds S] [--isolation LEVEL] [--skip-build] [--floor-only]
# --isolation runs the single-row writers' transactions at that level ("repeatable
# read", "serializable"; default the server's, read committed) and counts their
# failed transactions (a serialization failure is not retried). --floor-only prints
# only plain and the floor, with the documents and signatures made outside the
# trigger (a collection recomputed over them): minutes, where the trigger's load of
# 1,000,000 rows takes most of an hour.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CLUSTER=${BENCH_CLUSTER:-/tmp/pg_dedup_ingest_bench} PORT=${BENCH_PORT:-54332} TARGET=/tmp/pg_dedup_bench_target
rows=100000 seconds=20 skip_build=0 isolation='' floor_only=0
while (($#)); do
  case "$1" in
    --rows) rows=$2; shift ;;
    --seconds) seconds=$2; shift ;;
    --isolation) isolation=$2; shift ;;
    --skip-build) skip_build=1 ;;
    --floor-only) floor_only=1 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
  shift
done
cd "$REPO"
. "$REPO/bench/common.sh"
if ((skip_build == 0)); then
  bash scripts/setup.sh >/dev/null
  CARGO_TARGET_DIR=$TARGET cargo pgrx install --release --pg-config "${PG_CONFIG:-/usr/bin/pg_config}" >/dev/null
fi
stop() { bash scripts/cluster.sh stop "$CLUSTER"; }
trap stop EXIT
rm -rf "$CLUSTER"
bash scripts/cluster.sh start "$CLUSTER" "$PORT"
conn=(-h "$CLUSTER" -p "$PORT" -U postgres -d postgres)
q() { sudo -u postgres psql -X -q -t -A -v ON_ERROR_STOP=1 "${conn[@]}" "$@"; }
csv=/tmp/pg_dedup_ingest_bench.csv
# Short documents (40-80 words, ~400 characters, like the Telegram posts), every
# 5th a reprint of an earlier one.
q >/dev/null <<SQL
CREATE EXTENSION pg_dedup;
$STORY_SQL
CREATE TABLE stream AS SELECT i, story(CASE WHEN i % 5 = 0 THEN i - 3 ELSE i END) AS body
FROM generate_series(1, $rows) AS i;
SQL
q -c "\\copy (SELECT i, body FROM stream ORDER BY i) TO '$csv' WITH (FORMAT csv)"
chmod 644 "$csv"
echo "settings: max_locks_per_transaction=$(q -c 'SHOW max_locks_per_transaction'), shared_buffers=$(q -c 'SHOW shared_buffers'), synchronous_commit=$(q -c 'SHOW synchronous_commit'); $rows rows of $(q -c 'SELECT round(avg(length(body))) FROM stream') characters on average"
timed() { local t0 t1; t0=$(date +%s.%N); q "$@" >/dev/null; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
rate() { echo "scale=1; $rows / $1" | bc; }
if ((floor_only)); then
  # The trigger's documents and signatures, made outside it (untimed): the
  # documents, a collection's statistics recomputed over them, their signatures.
  q >/dev/null <<SQL
SET client_min_messages = warning;
SELECT dedup.create_collection('floor');
CREATE TABLE made AS SELECT i, body, dedup.to_document(body) AS doc FROM stream;
SELECT dedup.recompute('made'::regclass, 'doc', 'floor');
ALTER TABLE made ADD COLUMN sig dedup.signature;
UPDATE made SET sig = dedup.signature(doc, 'floor');
VACUUM ANALYZE made;
CHECKPOINT;
SQL
  tp=$(timed -c "CREATE TABLE plain (id bigint PRIMARY KEY, body text)" -c "INSERT INTO plain SELECT i, body FROM stream ORDER BY i")
  ta=$(timed -c "SELECT count(dedup.to_document(body)) FROM stream")
  q >/dev/null -c "CREATE TABLE floor (id bigint PRIMARY KEY, body text, dedup_doc dedup.document, dedup_sig dedup.signature)" \
    -c "CREATE INDEX ON floor USING gin (dedup_sig) WITH (fastupdate = off)"
  ts=$(timed -c "INSERT INTO floor SELECT i, body, doc, sig FROM made ORDER BY i")
  tf=$(echo "$ta + $ts" | bc)
  printf 'plain INSERT ... SELECT of %s rows: %.2f s = %s docs/s\n' "$rows" "$tp" "$(rate "$tp")"
  printf 'floor of %s rows (analysis %.2f s + storing the documents and indexed signatures %.2f s, no trigger): %s docs/s, share of plain %s %%\n' \
    "$rows" "$ta" "$ts" "$(rate "$tf")" "$(echo "scale=1; 100 * $tp / $tf" | bc)"
  rm -f "$csv"
  exit 0
fi
for how in select copy; do
  q >/dev/null -c "DROP TABLE IF EXISTS plain, enabled" \
    -c "CREATE TABLE plain (id bigint PRIMARY KEY, body text)" \
    -c "CREATE TABLE enabled (id bigint PRIMARY KEY, body text)" \
    -c "SELECT dedup.enable('enabled', 'body')"
  if [ $how = select ]; then
    tp=$(timed -c "INSERT INTO plain SELECT i, body FROM stream ORDER BY i")
    te=$(timed -c "INSERT INTO enabled SELECT i, body FROM stream ORDER BY i")
    label="INSERT ... SELECT"
  else
    tp=$(timed -c "\\copy plain FROM '$csv' WITH (FORMAT csv)")
    te=$(timed -c "\\copy enabled (id, body) FROM '$csv' WITH (FORMAT csv)")
    label="COPY"
  fi
  marked=$(q -c "SELECT count(*) FROM enabled WHERE duplicate_of IS NOT NULL")
  printf '%s of %s rows: trigger %.2f s = %s docs/s (%s marked), plain %.2f s = %s docs/s, trigger share %s %%\n' \
    "$label" "$rows" "$te" "$(rate "$te")" "$marked" "$tp" "$(rate "$tp")" "$(echo "scale=1; 100 * $tp / $te" | bc)"
  if [ $how = select ]; then
    # The floor: what any trigger must do for a row before it looks anything up,
    # timed without the trigger. The analysis alone (to_document of every text), plus
    # storing the documents and signatures the trigger made into a table with the
    # same GIN index (no lookup, no decision, no statistics, and the signatures
    # not even computed): a lower bound of a trigger insert's cost.
    ta=$(timed -c "SELECT count(dedup.to_document(body)) FROM stream")
    q >/dev/null -c "DROP TABLE IF EXISTS floor" \
      -c "CREATE TABLE floor (id bigint PRIMARY KEY, body text, dedup_doc dedup.document, dedup_sig dedup.signature)" \
      -c "CREATE INDEX ON floor USING gin (dedup_sig) WITH (fastupdate = off)"
    ts=$(timed -c "INSERT INTO floor SELECT id, body, dedup_doc, dedup_sig FROM enabled ORDER BY id")
    tf=$(echo "$ta + $ts" | bc)
    printf 'floor of %s rows (analysis %.2f s + storing the documents and indexed signatures %.2f s, no trigger): %s docs/s, share of plain %s %%; the trigger runs at %s %% of the floor\n' \
      "$rows" "$ta" "$ts" "$(rate "$tf")" "$(echo "scale=1; 100 * $tp / $tf" | bc)" "$(echo "scale=1; 100 * $tf / $te" | bc)"
    q >/dev/null -c "DROP TABLE floor"
  fi
done
# Concurrent single-row writers, each insert its own autocommit transaction, of
# texts that are mostly new, into the tables just loaded. Each run starts from the
# same state: a copy of the loaded database (a run adds 15,000-30,000 rows, and a
# later run on a larger table would be slower for that alone). While pgbench runs,
# a sampler reads what its backends wait on (pg_stat_activity, every 20 ms), and
# pg_stat_wal gives the WAL written per insert (the fold worker's included).
cat > /tmp/pg_dedup_ingest_bench.sql <<'SQL'
\set k random(1000000000, 2000000000)
INSERT INTO enabled (id, body) VALUES (:k, story(:k)) ON CONFLICT DO NOTHING;
SQL
cat > /tmp/pg_dedup_ingest_bench_plain.sql <<'SQL'
\set k random(1000000000, 2000000000)
INSERT INTO plain (id, body) VALUES (:k, story(:k)) ON CONFLICT DO NOTHING;
SQL
q -c "CHECKPOINT"
wq() { sudo -u postgres psql -X -q -t -A -v ON_ERROR_STOP=1 -h "$CLUSTER" -p "$PORT" -U postgres -d writers "$@"; }
sampler() {
  wq <<SQL
CREATE TEMP TABLE waits (ev text);
DO \$\$ DECLARE t0 timestamptz := clock_timestamp(); BEGIN
  WHILE clock_timestamp() < t0 + make_interval(secs => $1) LOOP
    PERFORM pg_stat_clear_snapshot();
    INSERT INTO waits SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') FROM pg_stat_activity
     WHERE application_name = 'pgbench' AND state = 'active';
    PERFORM pg_sleep(0.02);
  END LOOP; END \$\$;
SELECT string_agg(ev || ' ' || round(100.0 * n / t) || '%', ', ' ORDER BY n DESC)
  FROM (SELECT ev, count(*) AS n, sum(count(*)) OVER () AS t FROM waits GROUP BY ev ORDER BY n DESC LIMIT 4) s;
SQL
}
declare -A base
for f in plain enabled; do
  script=/tmp/pg_dedup_ingest_bench.sql
  [ $f = plain ] && script=/tmp/pg_dedup_ingest_bench_plain.sql
  for c in 1 2 4; do
    # The copy needs the source database to itself (a fold worker may still be in it).
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      q >/dev/null 2>&1 -c "DROP DATABASE IF EXISTS writers" \
        -c "CREATE DATABASE writers TEMPLATE postgres STRATEGY file_copy" && break
      sleep 1
    done
    wal0=$(wq -c "SELECT pg_current_wal_lsn()")
    read -r _ u0 n0 s0 i0 w0 q0 r0 _ <<<"$(head -1 /proc/stat)"
    sampler "$seconds" > /tmp/pg_dedup_ingest_waits &
    out=$(sudo -u postgres env PGOPTIONS="${isolation:+-c default_transaction_isolation=${isolation// /\\ }}" \
      pgbench -n -c $c -j $c -T "$seconds" --max-tries=1 -f $script -h "$CLUSTER" -p "$PORT" -U postgres writers 2>/dev/null)
    wait
    # The whole machine's CPU while they ran (all processes: the backends,
    # pgbench, the WAL writer, fold workers): busy share and milliseconds of CPU
    # per insert. One writer's busy share b bounds what more writers can reach on
    # these cores at the same CPU per insert: 1 / b times one writer.
    read -r _ u1 n1 s1 i1 w1 q1 r1 _ <<<"$(head -1 /proc/stat)"
    busy=$(( (u1 - u0) + (n1 - n0) + (s1 - s0) + (q1 - q0) + (r1 - r0) )) idle=$(( (i1 - i0) + (w1 - w0) ))
    tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out")
    n=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
    failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out")
    walkb=$(wq -c "SELECT round(pg_wal_lsn_diff(pg_current_wal_lsn(), '$wal0') / 1024.0 / greatest($n, 1), 1)")
    [ $c = 1 ] && base[$f]=$tps
    # /proc/stat counts clock ticks of every CPU of the host.
    share=$(echo "scale=3; $busy / ($busy + $idle + 1)" | bc)
    cpums=$(echo "scale=3; $busy * 1000 / $(getconf CLK_TCK) / ${n:-1}" | bc)
    [ "${n:-0}" -gt 0 ] && [ "$busy" -gt 0 ] || { share=1; cpums=0; }
    printf '%s: %d single-row writers%s: %s inserts/s (%.2fx one writer), %s failed; WAL %s kB per insert; machine CPU busy %.0f %%, %.2f ms CPU per insert%s; waits: %s\n' \
      "$f" $c "${isolation:+ ($isolation)}" "$tps" "$(echo "$tps / ${base[$f]}" | bc -l)" "${failed:-0}" "$walkb" \
      "$(echo "100 * $share" | bc)" "$cpums" \
      "$([ $c = 1 ] && printf ' (CPU bound for more writers on %d CPUs: %.2fx)' "$(grep -c '^cpu[0-9]' /proc/stat)" "$(echo "1 / $share" | bc -l)")" \
      "$(tail -1 /tmp/pg_dedup_ingest_waits)"
  done
done
q >/dev/null -c "DROP DATABASE IF EXISTS writers"
rm -f "$csv"
