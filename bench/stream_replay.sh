#!/usr/bin/env bash
# The trigger's own contract on the public Telegram stream: replay it in publication
# order through an enabled table (one INSERT ... SELECT) and score the marks against
# the labelled pairs, channel-grouped (see bench/stream_replay.py).
#   bash bench/stream_replay.sh [--data DIR] [--model grouped|default|threshold] [--options JSON] [--train JSON] [--weighting bm25|tf_ridf]
# Uses the installed extension and the bench cluster (/tmp/pg_dedup_bench, port 54331),
# with PostgreSQL's default settings. About 2 minutes per replay.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
data=$REPO/../shared/data
args=()
while (($#)); do
  case "$1" in
    --data) data=$2; shift ;;
    *) args+=("$1") ;;
  esac
  shift
done
[ -d "$data/telegram_ru" ] || { echo "no $data/telegram_ru: this measurement needs ../shared/data" >&2; exit 1; }
. "$REPO/bench/common.sh"
py=$(bench_python)
bench_cluster_start
psql_() { sudo -u postgres psql -X -q -h "$BENCH_CLUSTER" -p "$BENCH_PORT" "$@"; }
if [[ " ${args[*]} " != *" --skip-load "* ]]; then
  psql_ -d postgres -c "DROP DATABASE IF EXISTS dedup_replay" -c "CREATE DATABASE dedup_replay"
  psql_ -d dedup_replay -c "CREATE EXTENSION pg_dedup" -c "CREATE EXTENSION IF NOT EXISTS pg_trgm"
fi
$py "$REPO/bench/stream_replay.py" "$data" --host "$BENCH_CLUSTER" --port "$BENCH_PORT" "${args[@]}"
