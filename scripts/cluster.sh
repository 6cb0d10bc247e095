#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster owned by the postgres user, on its own port
# and socket directory, so it never touches a system cluster.
#   scripts/cluster.sh start DIR PORT   (idempotent: reuses a running cluster)
#   scripts/cluster.sh stop DIR
set -euo pipefail
BIN=$("${PG_CONFIG:-/usr/bin/pg_config}" --bindir)
cmd=$1 dir=$2 port=${3:-54329}
as_pg() { sudo -u postgres -- "$@"; }

case "$cmd" in
  start)
    mkdir -p "$dir"
    chown postgres:postgres "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      as_pg "$BIN/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
    fi
    if ! as_pg "$BIN/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
      as_pg "$BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
        -o "-p $port -k $dir -c listen_addresses='' -c max_parallel_workers_per_gather=2 -c max_prepared_transactions=8" start >/dev/null
    fi
    ;;
  stop)
    if [ -f "$dir/data/PG_VERSION" ]; then
      as_pg "$BIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    ;;
  *) echo "usage: $0 start|stop DIR [PORT]" >&2; exit 2 ;;
esac
