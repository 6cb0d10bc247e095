#!/usr/bin/env bash
# Short texts: pg_dedup's cross-validated pair score against pg_trgm similarity() on
# ParaPhraser and MSRP (see bench/short_texts.py).
#   bash bench/short_texts.sh [--data DIR] [--features a,b,...] [--strict | --drop-loose]
# Uses the installed extension and the bench cluster ($BENCH_CLUSTER, default /tmp/pg_dedup_bench; $BENCH_PORT, default 54331).
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
[ -d "$data/paraphraser_ru" ] || { echo "no $data/paraphraser_ru: this measurement needs ../shared/data" >&2; exit 1; }
. "$REPO/bench/common.sh"
py=$(bench_python)
bench_cluster_start
psql_() { sudo -u postgres psql -X -q -h "$BENCH_CLUSTER" -p "$BENCH_PORT" "$@"; }
psql_ -d postgres -c "DROP DATABASE IF EXISTS dedup_short" -c "CREATE DATABASE dedup_short"
psql_ -d dedup_short -c "CREATE EXTENSION pg_dedup" -c "CREATE EXTENSION IF NOT EXISTS pg_trgm"
$py "$REPO/bench/short_texts.py" "$data" --host "$BENCH_CLUSTER" --port "$BENCH_PORT" "${args[@]}"
