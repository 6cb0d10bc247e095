#!/usr/bin/env bash
# What a DBA's recompute costs the writers of the same collection: W pgbench
# clients insert single rows (autocommit, READ COMMITTED) into an enabled table of
# ROWS stories, past the 2,000 documents where commits append pending rows and
# folds take them (with --updates, every other transaction rewrites the text of a
# random row, in two statements), while a session runs dedup.recompute every 2 s.
# Prints the writers' failed transactions and the recomputes' errors (40P01
# before the collection statistics lock, src/pg/stats_lock.rs).
#   bash bench/admin_races.sh [--writers W] [--rows N] [--seconds S] [--updates]   (4, 2500, 20)
# Uses the installed extension and the bench cluster (/tmp/pg_dedup_bench, port 54331).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
writers=4 rows=2500 seconds=20 updates=0
while (($#)); do
  case "$1" in
    --updates) updates=1 ;;
    --writers) writers=$2; shift ;;
    --rows) rows=$2; shift ;;
    --seconds) seconds=$2; shift ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
  shift
done
. "$REPO/bench/common.sh"
bench_cluster_start
BIN=$("${PG_CONFIG:-/usr/bin/pg_config}" --bindir)
q() { sudo -u postgres "$BIN/psql" -X -q -t -A -h "$BENCH_CLUSTER" -p "$BENCH_PORT" "$@"; }
q -d postgres -c "DROP DATABASE IF EXISTS dedup_races" -c "CREATE DATABASE dedup_races" >/dev/null
q -d dedup_races -v ON_ERROR_STOP=1 >/dev/null <<SQL
SET client_min_messages = warning;
CREATE EXTENSION pg_dedup;
$STORY_SQL
CREATE TABLE race (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, s int, body text);
SELECT dedup.enable('race', 'body');
INSERT INTO race (s, body) SELECT i, story(i) FROM generate_series(1, $rows) AS i;
SQL
script=$(mktemp /tmp/dedup_races.XXXXXX.sql)
chmod 644 "$script"
if ((updates)); then
  cat > "$script" <<SQL
\\set s random(1000000, 2000000)
\\set id random(1, $rows)
\\set op random(0, 1)
BEGIN;
INSERT INTO race (s, body) SELECT :s, story(:s) WHERE :op = 0;
UPDATE race SET body = story(:s) WHERE id = :id AND :op = 1;
SELECT pg_sleep(0.01);
COMMIT;
SQL
else
  cat > "$script" <<'SQL'
\set s random(1000000, 2000000)
INSERT INTO race (s, body) VALUES (:s, story(:s));
SQL
fi
out=$(mktemp /tmp/dedup_races.XXXXXX.out)
chmod 666 "$out"
sudo -u postgres "$BIN/pgbench" -h "$BENCH_CLUSTER" -p "$BENCH_PORT" -n -c "$writers" -T "$seconds" \
  -f "$script" dedup_races >"$out" 2>&1 &
pgb=$!
recomputes=0 errors=0
end=$((SECONDS + seconds - 2))
while ((SECONDS < end)); do
  sleep 2
  recomputes=$((recomputes + 1))
  if ! q -d dedup_races -c "SET client_min_messages = warning" -c "SELECT dedup.recompute('race')" >/dev/null 2>"$out.err"; then
    errors=$((errors + 1))
    grep -o 'ERROR: .*' "$out.err" | head -1
  fi
done
wait "$pgb" || true
processed=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$out")
failed=$(grep -c "ERROR\|aborted" "$out" || true)
echo "writers: $writers, collection: $rows rows, $seconds s"
echo "transactions committed: $processed, failed: $failed"
echo "recomputes: $recomputes, failed: $errors"
rm -f "$script" "$out" "$out.err"
