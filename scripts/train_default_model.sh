#!/usr/bin/env bash
# Rebuilds the built-in model `default` (models/default.json, embedded in the
# extension at build time) from the public labelled pairs in ../shared/data:
#   bash scripts/train_default_model.sh [DATA_DIR]
# Uses the installed extension and the bench cluster (/tmp/pg_dedup_bench, port
# 54331). Deterministic: the same data and code give the same file. Rebuild and
# reinstall the extension afterwards.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
data=${1:-$REPO/../shared/data}
KEEP_CLUSTER=${KEEP_CLUSTER:-0} bash "$REPO/bench/stream_replay.sh" --data "$data" \
  --train-default "$REPO/models/default.json"
