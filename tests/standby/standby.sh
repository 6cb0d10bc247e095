#!/usr/bin/env bash
# Analysts on a read replica: every reading function answers on a hot standby as
# on its primary, for a superuser and for a role with SELECT on the table only. A
# standby refuses to assign a transaction id, so a read that asked for one (as
# pgrx's one-row lookups do, see src/pg/lookup.rs) failed there with "cannot assign
# TransactionIds during recovery".
#   bash tests/standby/standby.sh WORKDIR PRIMARY_PORT
# Runs against the primary cluster WORKDIR/regress (scripts/test.sh starts it); the
# standby is a pg_basebackup of it in WORKDIR/standby on PRIMARY_PORT + 1.
set -euo pipefail
WORK=$1 PORT=$2
SPORT=$((PORT + 1))
BIN=$("${PG_CONFIG:-/usr/bin/pg_config}" --bindir)
as_pg() { sudo -u postgres -- "$@"; }
primary=(-h "$WORK/regress" -p "$PORT")
standby=(-h "$WORK/standby" -p "$SPORT")
psql_() { as_pg psql -X -q -v ON_ERROR_STOP=1 -U postgres "$@"; }

stop_standby() {
  if [ -f "$WORK/standby/data/PG_VERSION" ]; then
    as_pg "$BIN/pg_ctl" -D "$WORK/standby/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
}
trap stop_standby EXIT
stop_standby
rm -rf "$WORK/standby"
mkdir -p "$WORK/standby"
chown postgres:postgres "$WORK/standby"

psql_ "${primary[@]}" -d postgres -c "DROP DATABASE IF EXISTS pg_dedup_standby" -c "CREATE DATABASE pg_dedup_standby"
psql_ "${primary[@]}" -d pg_dedup_standby <<'SQL'
CREATE EXTENSION pg_dedup;
SET client_min_messages = warning;
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'standby_reader') THEN
    CREATE ROLE standby_reader LOGIN;
  END IF;
END $$;
CREATE TABLE news (id int PRIMARY KEY, body text);
SELECT dedup.enable('news', 'body', collection => 'standby_news') \g /dev/null
INSERT INTO news VALUES
  (1, 'Мэр открыл новый мост через реку после трёх лет строительства, движение запустят в понедельник утром.'),
  (2, 'Мэр открыл новый мост через реку после трёх лет строительства, движение запустят в понедельник утром!'),
  (3, 'В городском парке высадили двести лип, работы продолжатся до конца осени и охватят соседние скверы.'),
  (4, 'Футбольный клуб объявил о подписании контракта с молодым вратарём из академии на четыре сезона.'),
  (5, 'Футбольный клуб объявил о подписании контракта с молодым вратарём из академии на четыре сезона');
GRANT SELECT ON news TO standby_reader;
SQL

as_pg "$BIN/pg_basebackup" "${primary[@]}" -U postgres -D "$WORK/standby/data" -R -X stream
as_pg "$BIN/pg_ctl" -D "$WORK/standby/data" -l "$WORK/standby/server.log" -w \
  -o "-p $SPORT -k $WORK/standby -c listen_addresses='' -c max_prepared_transactions=8" start >/dev/null
[ "$(as_pg psql -X -At "${standby[@]}" -U postgres -d pg_dedup_standby -c 'SELECT pg_is_in_recovery()')" = t ]

QUERIES=$(cat <<'SQL'
SELECT id, dedup.signature(dedup_doc, 'standby_news')::text = dedup_sig::text FROM news ORDER BY 1;
SELECT round(dedup.pair_score('default', a.dedup_doc, b.dedup_doc)::numeric, 6),
       dedup.classify_pair('default', a.dedup_doc, b.dedup_doc),
       dedup.compare(a.dedup_doc, b.dedup_doc, 'standby_news')::text
FROM news a, news b WHERE a.id < b.id ORDER BY a.id, b.id;
SELECT t.term FROM news n, dedup.top_terms(n.dedup_doc, 'standby_news', 3) t WHERE n.id = 1 ORDER BY 1;
SELECT round(dedup.staleness('standby_news')::numeric, 6), (dedup.collection_limits('standby_news')).*;
SELECT collection, documents, duplicates, rejected FROM dedup.status;
SELECT n.id, o.key FROM news n, dedup.find_original('news', n.dedup_doc) o ORDER BY 1, 2;
SELECT dedup.is_duplicate('news', 'Мэр открыл новый мост через реку после трёх лет строительства, движение запустят в понедельник утром');
SELECT n.id, c.key FROM news n, dedup.candidates('news', n.dedup_sig, 5) c ORDER BY 1, 2;
SELECT a, b, verdict, round(score::numeric, 6) FROM dedup.pairs('news') ORDER BY 1, 2;
SELECT * FROM dedup.groups('news') ORDER BY 1;
SELECT pairs FROM dedup.matrix_quality('news');
SQL
)
for role in postgres standby_reader; do
  a=$(as_pg psql -X -At -v ON_ERROR_STOP=1 "${primary[@]}" -U "$role" -d pg_dedup_standby <<<"$QUERIES" 2>&1) \
    || { echo "standby: the queries fail on the primary as $role: $a" >&2; exit 1; }
  b=$(as_pg psql -X -At -v ON_ERROR_STOP=1 "${standby[@]}" -U "$role" -d pg_dedup_standby <<<"$QUERIES" 2>&1) \
    || { echo "standby: the queries fail on the standby as $role: $b" >&2; exit 1; }
  if [ "$a" != "$b" ]; then
    echo "standby: answers differ from the primary's as $role" >&2
    diff <(echo "$a") <(echo "$b") >&2 || true
    exit 1
  fi
  echo "standby: $(echo "$b" | wc -l) answer lines as $role, equal to the primary's"
done
psql_ "${primary[@]}" -d postgres -c "DROP DATABASE pg_dedup_standby"
