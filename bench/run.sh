#!/usr/bin/env bash
# pg_dedup benchmark: build and install the extension (release), start a throwaway
# tuned cluster, run bench/bench.py, write bench/results/report.md, stop the cluster.
#   bash bench/run.sh [--smoke] [--scale N] [--big N [--only-big]] [--data DIR] [--out DIR] [--skip-build]
# Runs as root on Debian 12; idempotent and non-interactive.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CLUSTER=/tmp/pg_dedup_bench
PORT=54331
TARGET=/tmp/pg_dedup_bench_target
BIN=$("${PG_CONFIG:-/usr/bin/pg_config}" --bindir)
# fsync stays on: synchronous_commit=off already removes the per-commit flush wait.
SETTINGS="shared_buffers=1GB synchronous_commit=off fsync=on max_wal_size=8GB checkpoint_timeout=30min \
work_mem=64MB maintenance_work_mem=1GB jit=off max_parallel_workers_per_gather=2 autovacuum=off"

smoke=0 scale=100000 big="" only_big=0 out="" data="$REPO/../shared/data" skip_build=0
while (($#)); do
  case "$1" in
    --smoke) smoke=1 ;;
    --scale) scale=$2; shift ;;
    --big) big=$2; shift ;;
    --only-big) only_big=1 ;;
    --out) out=$2; shift ;;
    --data) data=$2; shift ;;
    --skip-build) skip_build=1 ;;
    -h|--help) sed -n 2,5p "$0"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
  shift
done
data=$(cd "$data" 2>/dev/null && pwd || echo "$data")

log() { printf '\033[1m[bench]\033[0m %s\n' "$*" >&2; }
cd "$REPO"

if ((skip_build)); then
  log "skipping setup and build (--skip-build)"
else
  log "setup"
  bash scripts/setup.sh
  log "building and installing pg_dedup (release, target dir $TARGET)"
  CARGO_TARGET_DIR=$TARGET cargo pgrx install --release --pg-config "${PG_CONFIG:-/usr/bin/pg_config}" >/dev/null
fi

stop_cluster() { bash "$REPO/scripts/cluster.sh" stop "$CLUSTER" || true; }
trap stop_cluster EXIT
log "starting cluster $CLUSTER on port $PORT"
bash scripts/cluster.sh start "$CLUSTER" "$PORT"
# scripts/cluster.sh has no options hook: set the bench options with ALTER SYSTEM and
# restart (pg_ctl restart reuses the port and socket options it was started with).
conf=()
for kv in $SETTINGS; do conf+=(-c "ALTER SYSTEM SET ${kv%%=*} = '${kv#*=}'"); done
sudo -u postgres psql -X -q -h "$CLUSTER" -p "$PORT" -d postgres -v ON_ERROR_STOP=1 "${conf[@]}" >/dev/null
sudo -u postgres "$BIN/pg_ctl" -D "$CLUSTER/data" -l "$CLUSTER/server.log" -m fast -w restart >/dev/null

log "python venv"
if [ ! -x bench/.venv/bin/python ] || ! bench/.venv/bin/python -c "import psycopg, matplotlib" 2>/dev/null; then
  python3 -m venv bench/.venv
  bench/.venv/bin/pip install -q --disable-pip-version-check "psycopg[binary]" matplotlib
fi

args=(--scale "$scale" --data "$data" --host "$CLUSTER" --port "$PORT" --settings "$SETTINGS")
((smoke)) && args+=(--smoke)
[ -n "$big" ] && args+=(--big "$big")
((only_big)) && args+=(--only-big)
[ -n "$out" ] && args+=(--out "$out")
mkdir -p bench/results
MPLCONFIGDIR=/tmp/pg_dedup_bench_mpl bench/.venv/bin/python bench/bench.py "${args[@]}"
log "report: bench/results/report.md"
