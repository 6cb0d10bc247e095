#!/usr/bin/env bash
# The test command: installs what is missing, then runs every tier.
#   0. lint: cargo fmt --check, cargo clippy -D warnings, no import cycle in src/pg
#      (scripts/check_imports.py), README's settings table equal to src/gucs.rs's
#      (scripts/check_settings.py)
#   1. unit tests and #[pg_test]s: cargo pgrx test, as the postgres user
#   2. pg_regress golden files (tests/pg_regress) against a throwaway cluster
#   3. isolation specs (tests/isolation, pg_isolation_regress): scripted interleavings
#   4. concurrency: real concurrent connections (pgbench) against the same cluster
#   5. bulk loads: INSERT ... SELECT, COPY and row by row give the same verdicts
#      with default lock settings (BULK_ROWS rows, default 100000)
#   6. dump and restore: pg_dump -Fc restored whole and data-only gives the same state
#   7. upgrade: ALTER EXTENSION UPDATE from 0.1.0 gives a fresh install's catalog and verdicts
#   8. hot standby: every reading function answers on a pg_basebackup replica as on
#      its primary (tests/standby)
#   9. crashes: kill -9 of a backend mid bulk insert, immediate shutdown mid recompute,
#      kill -9 of the background fold worker
#  10. citus: builds Citus 13.2 from ../shared/citus into the PostgreSQL PG_CONFIG names,
#      starts a coordinator and two workers (ports PG_DEDUP_CITUS_PORT .. +2, default
#      the test port + 10), checks a distributed table against one node and a worker
#      down (tests/citus); skipped with a line saying so when ../shared/citus is absent
# Usage: scripts/test.sh [lint|unit|regress|citus|all]   (default all; regress is tiers 2 to 9)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
what=${1:-all}
WORK=${PG_DEDUP_TEST_DIR:-/tmp/pg_dedup_test}
PORT=${PG_DEDUP_TEST_PORT:-54329}
# PG_CONFIG picks the PostgreSQL installation (default Debian's); with another one,
# point PGRX_HOME at a pgrx home whose pg15 is that pg_config (scripts/pg_copy.sh).
export PG_CONFIG=${PG_CONFIG:-/usr/bin/pg_config}
PGXS_TEST=$("$PG_CONFIG" --pkglibdir)/pgxs/src/test

bash scripts/setup.sh
mkdir -p "$WORK"

if [[ $what == all || $what == lint ]]; then
  echo "== lint (cargo fmt --check, cargo clippy -D warnings)"
  if cargo fmt --version >/dev/null 2>&1 && cargo clippy --version >/dev/null 2>&1; then
    cargo fmt --all -- --check
    cargo clippy --all-targets -- -D warnings
  else
    echo "lint skipped: rustfmt or clippy is not installed with this toolchain"
  fi
  python3 scripts/check_imports.py
  python3 scripts/check_settings.py
fi
chmod 755 "$WORK"

if [[ $what == all || $what == unit ]]; then
  echo "== unit tests and #[pg_test] (cargo pgrx test pg15 --runas postgres)"
  rm -rf "$WORK/pgrx-data"
  mkdir -p "$WORK/pgrx-data"
  chown postgres:postgres "$WORK/pgrx-data"
  cargo pgrx test pg15 --runas postgres --pgdata "$WORK/pgrx-data/data"
fi

if [[ $what == all || $what == regress ]]; then
  echo "== pg_regress (tests/pg_regress)"
  # Debug build: it shares every dependency with the `cargo pgrx test` build above,
  # where a release build would compile them all a second time.
  cargo pgrx install --pg-config "$PG_CONFIG" >/dev/null
  cleanup() { bash "$ROOT/scripts/cluster.sh" stop "$WORK/regress"; }
  trap cleanup EXIT
  rm -rf "$WORK/regress"
  bash scripts/cluster.sh start "$WORK/regress" "$PORT"
  out="$WORK/regress-out"
  rm -rf "$out"; mkdir -p "$out"; chown postgres:postgres "$out"
  tests=$(cd tests/pg_regress/sql && ls *.sql | sed 's/\.sql$//' | sort)
  status=0
  sudo -u postgres "$PGXS_TEST/regress/pg_regress" \
    --host="$WORK/regress" --port="$PORT" --user=postgres \
    --inputdir="$ROOT/tests/pg_regress" --outputdir="$out" \
    --dbname=pg_dedup_regress $tests || status=$?
  if [ $status -ne 0 ]; then
    cat "$out/regression.diffs" 2>/dev/null | head -200
    exit $status
  fi
  echo "== isolation (tests/isolation: scripted interleavings of two sessions)"
  iso_out="$WORK/isolation-out"
  rm -rf "$iso_out"; mkdir -p "$iso_out"; chown postgres:postgres "$iso_out"
  specs=$(cd tests/isolation/specs && ls *.spec | sed 's/\.spec$//' | sort)
  sudo -u postgres "$PGXS_TEST/isolation/pg_isolation_regress" \
    --host="$WORK/regress" --port="$PORT" --user=postgres \
    --inputdir="$ROOT/tests/isolation" --outputdir="$iso_out" \
    --dbname=pg_dedup_isolation --load-extension=pg_dedup $specs || status=$?
  if [ $status -ne 0 ]; then
    cat "$iso_out/regression.diffs" 2>/dev/null | head -200
    exit $status
  fi
  echo "== concurrency (tests/concurrency, 8 concurrent sessions each)"
  conn=(-h "$WORK/regress" -p "$PORT" -U postgres)
  sudo -u postgres psql -X -q "${conn[@]}" -d postgres -c "DROP DATABASE IF EXISTS pg_dedup_concurrency" \
    -c "CREATE DATABASE pg_dedup_concurrency"
  sudo -u postgres psql -X -q "${conn[@]}" -d pg_dedup_concurrency -c "CREATE EXTENSION pg_dedup"
  for t in tests/concurrency/*.sh; do
    (cd "$WORK" && sudo -u postgres bash "$ROOT/$t" "${conn[@]}" -d pg_dedup_concurrency)
  done
  echo "== bulk loads (tests/bulk: INSERT ... SELECT and COPY with default lock settings)"
  for t in tests/bulk/*.sh; do
    (cd "$WORK" && sudo -u postgres BULK_ROWS="${BULK_ROWS:-100000}" bash "$ROOT/$t" "${conn[@]}" -d pg_dedup_concurrency)
  done
  echo "== dump and restore (tests/dump: pg_dump -Fc, pg_restore whole and data-only)"
  (cd "$WORK" && sudo -u postgres bash "$ROOT/tests/dump/dump_restore.sh" "${conn[@]}" -d postgres 2>&1 | grep -v 'does not exist, skipping')
  echo "== upgrade (tests/upgrade: ALTER EXTENSION UPDATE from the frozen 0.1.0 equals a fresh install)"
  (cd "$WORK" && bash "$ROOT/tests/upgrade/upgrade.sh" "${conn[@]}")
  echo "== hot standby (tests/standby: reading functions on a replica answer as on the primary)"
  (cd "$WORK" && bash "$ROOT/tests/standby/standby.sh" "$WORK" "$PORT")
  echo "== crashes (tests/crash: kill -9 during a bulk insert, immediate shutdown during a recompute, kill -9 of the fold worker)"
  (cd "$WORK" && bash "$ROOT/tests/crash/crash.sh" "$WORK/regress" "$PORT")
fi
if [[ $what == all || $what == citus ]]; then
  echo "== citus (tests/citus: a coordinator and two workers on this machine)"
  if [[ $what == citus ]]; then
    cargo pgrx install --pg-config "$PG_CONFIG" >/dev/null
  fi
  bash tests/citus/citus.sh "$WORK" "${PG_DEDUP_CITUS_PORT:-$((PORT + 10))}"
fi
echo "== all requested test tiers passed"
