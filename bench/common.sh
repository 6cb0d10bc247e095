# Shared by the bench scripts (sourced, with REPO set).

# bench_python: prints a Python with psycopg, making bench/.venv if need be.
bench_python() {
  local py=python3
  if [ -x "$REPO/bench/.venv/bin/python" ]; then py=$REPO/bench/.venv/bin/python; fi
  if ! $py -c "import psycopg" 2>/dev/null; then
    python3 -m venv "$REPO/bench/.venv" >&2
    "$REPO/bench/.venv/bin/pip" install -q --disable-pip-version-check "psycopg[binary]" >&2
    py=$REPO/bench/.venv/bin/python
  fi
  echo "$py"
}

# The bench cluster: BENCH_CLUSTER (directory) and BENCH_PORT override the defaults.
BENCH_CLUSTER=${BENCH_CLUSTER:-/tmp/pg_dedup_bench}
BENCH_PORT=${BENCH_PORT:-54331}

# bench_cluster_start: starts the bench cluster ($BENCH_CLUSTER, port $BENCH_PORT),
# stopped again on exit unless KEEP_CLUSTER=1.
bench_cluster_start() {
  bash "$REPO/scripts/cluster.sh" start "$BENCH_CLUSTER" "$BENCH_PORT"
  if [ "${KEEP_CLUSTER:-0}" != 1 ]; then
    trap 'bash "$REPO/scripts/cluster.sh" stop "$BENCH_CLUSTER"' EXIT
  fi
}

# STORY_SQL: story(s), a short synthetic document (40-80 words of a 20,000-word
# vocabulary, ~460 characters, like the Telegram posts).
STORY_SQL="CREATE FUNCTION story(s bigint) RETURNS text LANGUAGE sql IMMUTABLE AS \$\$
  SELECT string_agg('w' || (abs(hashtext(s || ':' || j)::int8) % 20000), ' ' ORDER BY j) || '. Итог ' || (s % 997) || '.'
  FROM generate_series(1, 40 + (abs(hashtext(s::text)::int8) % 41)) AS j \$\$;"
