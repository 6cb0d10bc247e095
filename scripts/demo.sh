#!/usr/bin/env bash
# The demo command: installs what is missing, builds and installs pg_dedup, starts
# a throwaway PostgreSQL 15 cluster owned by postgres (port 54330, socket in
# /tmp/pg_dedup_demo), loads real text and prints what the extension makes of it.
#   scripts/demo.sh          run the demo (again: reuses the cluster and the build)
#   scripts/demo.sh stop     stop the demo cluster
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${PG_DEDUP_DEMO_DIR:-/tmp/pg_dedup_demo}
PORT=${PG_DEDUP_DEMO_PORT:-54330}

if [[ ${1:-} == stop ]]; then
  bash scripts/cluster.sh stop "$DIR"
  exit 0
fi

bash scripts/setup.sh
echo "[demo] building and installing pg_dedup (release)"
cargo pgrx install --pg-config "${PG_CONFIG:-/usr/bin/pg_config}" --release >/dev/null
bash scripts/cluster.sh start "$DIR" "$PORT"
psql_() { sudo -u postgres psql -h "$DIR" -p "$PORT" -U postgres -X -q -v ON_ERROR_STOP=1 "$@"; }
psql_ -d postgres -tc "SELECT 1 FROM pg_database WHERE datname = 'dedup_demo'" | grep -q 1 ||
  psql_ -d postgres -c "CREATE DATABASE dedup_demo"
psql_ -d dedup_demo < scripts/demo/demo.sql   # as stdin: postgres may not read a clone under /root
echo
echo "[demo] the cluster is still running: sudo -u postgres psql -h $DIR -p $PORT dedup_demo"
echo "[demo] stop it with: bash scripts/demo.sh stop"
