#!/usr/bin/env bash
# Candidate-filter recall/efficiency over the whole Telegram stream of ../shared/data
# (14.6k posts, 107M pairs), with the labelled Telegram duplicates as ground truth.
#   bash bench/filter_stream.sh [DATA_DIR]      (about 15 minutes; prints a table)
# Uses the installed extension and the bench cluster (/tmp/pg_dedup_bench, port 54331).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
data=${1:-$REPO/../shared/data}
[ -d "$data/telegram_ru" ] || { echo "no $data/telegram_ru: this measurement needs ../shared/data" >&2; exit 1; }
mkdir -p /tmp/pg_dedup_filter && chmod 755 /tmp/pg_dedup_filter
python3 "$REPO/bench/filter_stream.py" "$data" /tmp/pg_dedup_filter
chmod 644 /tmp/pg_dedup_filter/*.tsv
bash "$REPO/scripts/cluster.sh" start /tmp/pg_dedup_bench 54331
trap 'bash "$REPO/scripts/cluster.sh" stop /tmp/pg_dedup_bench' EXIT
psql_() { sudo -u postgres psql -X -q -h /tmp/pg_dedup_bench -p 54331 "$@"; }
psql_ -d postgres -tc "SELECT 1 FROM pg_database WHERE datname = 'dedup_filter'" | grep -q 1 ||
  psql_ -d postgres -c "CREATE DATABASE dedup_filter"
psql_ -d dedup_filter -c "CREATE EXTENSION IF NOT EXISTS pg_dedup"
psql_ -d dedup_filter -f "$REPO/bench/filter_stream.sql"
