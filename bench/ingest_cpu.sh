#!/usr/bin/env bash
# Backend CPU per trigger insert of short documents (40-80 words, every 5th a
# reprint), the current defaults against those of 0.1.0, in one INSERT ... SELECT
# each, read from /proc/<backend pid>/stat (user time: system time is mostly page faults and buffer writes, which vary by a third between identical runs) around the statement.
#   bash bench/ingest_cpu.sh [--rows N] [--repeat R] [--baseline]   (default 20000 rows, median of 3)
# --baseline measures only 0.1.0's defaults the way a build from before 0.2.0 takes
# them (model NULL is the threshold rule there): install such a build, run it, and
# compare its figure with a current build's.
# Uses the installed extension and the bench cluster (/tmp/pg_dedup_bench, port 54331).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rows=20000 repeat=3 baseline=0
while (($#)); do
  case "$1" in
    --baseline) baseline=1 ;;
    --rows) rows=$2; shift ;;
    --repeat) repeat=$2; shift ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
  shift
done
. "$REPO/bench/common.sh"
bench_cluster_start
q() { sudo -u postgres psql -X -q -t -A -v ON_ERROR_STOP=1 -h "$BENCH_CLUSTER" -p "$BENCH_PORT" "$@"; }
q -d postgres -c "DROP DATABASE IF EXISTS dedup_cpu" -c "CREATE DATABASE dedup_cpu" >/dev/null
q -d dedup_cpu >/dev/null <<SQL
CREATE EXTENSION pg_dedup;
$STORY_SQL
CREATE TABLE stream AS SELECT i, story(CASE WHEN i % 5 = 0 THEN i - 3 ELSE i END) AS body
FROM generate_series(1, $rows) AS i;
SQL
tick=$(getconf CLK_TCK)
run() { # name, collection options, k1, model
  q -d dedup_cpu <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS t_$1;
SELECT dedup.drop_collection(name) FROM dedup.collections WHERE name = 't_$1' \\g /dev/null
CREATE TABLE t_$1 (id bigint PRIMARY KEY, body text);
SELECT dedup.create_collection('t_$1', k1 => $3, options => '$2') \\g /dev/null
SELECT dedup.enable('t_$1', 'body', collection => 't_$1', model => $4) \\g /dev/null
SELECT pg_backend_pid() AS pid \\gset
\\setenv BACKEND_PID :pid
\\! awk '{print "before", \$14 + \$15}' /proc/\$BACKEND_PID/stat
INSERT INTO t_$1 SELECT i, body FROM stream ORDER BY i;
\\! awk '{print "after", \$14 + \$15}' /proc/\$BACKEND_PID/stat
SELECT 'marked ' || count(duplicate_of) FROM t_$1;
SQL
}
declare -A us
# A first load warms the caches (catalog, shared buffers) for every measured one.
run warmup '{}' 2.0 NULL >/dev/null
OLD='{"signature_scheme": "imatch", "signature_topwords": 12, "min_shared_keys": 6}'
configs=("old|$OLD|1.2|'threshold'|0.1.0 defaults (imatch, 12 words, threshold rule)"
         "new|{}|2.0|NULL|current defaults (topwords 16/4, k1 2.0, model default)"
         "sig|{}|2.0|'threshold'|  current signatures, threshold rule"
         "model|$OLD|1.2|NULL|  0.1.0 signatures, model default")
((baseline)) && configs=("old|$OLD|1.2|NULL|0.1.0 defaults on this build (model NULL)")
for cfg in "${configs[@]}"; do
  IFS='|' read -r name opts k1 model label <<<"$cfg"
  runs=()
  for r in $(seq "$repeat"); do
    out=$(run "$name" "$opts" "$k1" "$model")
    b=$(sed -n 's/^before //p' <<<"$out") a=$(sed -n 's/^after //p' <<<"$out") m=$(sed -n 's/^marked //p' <<<"$out")
    runs+=("$(echo "scale=1; ($a - $b) * 1000000 / $tick / $rows" | bc)")
  done
  us[$name]=$(printf '%s\n' "${runs[@]}" | sort -n | sed -n "$(((repeat + 1) / 2))p")
  printf '%-58s backend CPU %6s us per insert (median of %s: %s), %s of %s rows marked\n' \
    "$label" "${us[$name]}" "$repeat" "${runs[*]}" "$m" "$rows"
done
((baseline)) || printf 'current / 0.1.0 defaults: %.2f\n' "$(echo "${us[new]} / ${us[old]}" | bc -l)"
