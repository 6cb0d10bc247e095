#!/usr/bin/env bash
# Candidate-filter recall/efficiency over the whole Telegram stream of ../shared/data
# (14.6k posts, 107M pairs), with the labelled Telegram duplicates as ground truth.
#   bash bench/filter_stream.sh [DATA_DIR]      (about 15 minutes; prints a table)
# Uses the installed extension and the bench cluster ($BENCH_CLUSTER, default /tmp/pg_dedup_bench, port $BENCH_PORT, default 54331).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
data=${1:-$REPO/../shared/data}
[ -d "$data/telegram_ru" ] || { echo "no $data/telegram_ru: this measurement needs ../shared/data" >&2; exit 1; }
. "$REPO/bench/common.sh"
tsv=$BENCH_CLUSTER-filter
mkdir -p "$tsv" && chmod 755 "$tsv"
python3 "$REPO/bench/filter_stream.py" "$data" "$tsv"
chmod 644 "$tsv"/*.tsv
bench_cluster_start
psql_() { sudo -u postgres psql -X -q -h "$BENCH_CLUSTER" -p "$BENCH_PORT" "$@"; }
psql_ -d postgres -tc "SELECT 1 FROM pg_database WHERE datname = 'dedup_filter'" | grep -q 1 ||
  psql_ -d postgres -c "CREATE DATABASE dedup_filter"
psql_ -d dedup_filter -c "CREATE EXTENSION IF NOT EXISTS pg_dedup"
sed "s#/tmp/pg_dedup_filter#$tsv#" "$REPO/bench/filter_stream.sql" | psql_ -d dedup_filter -f -
