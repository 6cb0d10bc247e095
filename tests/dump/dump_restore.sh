#!/usr/bin/env bash
# pg_dump -Fc of a database with an enabled table ('skip', so rejected rows too),
# an enabled partitioned table and a trained model, restored whole with
# pg_restore (also in one transaction, -1) into a new database and data-only into
# a new database holding the schema: identical signatures,
# statistics, models, rejected rows and dedup.pairs, and a trigger that still
# works; the data-only restore neither rejects nor re-marks the restored rows and
# does not count them twice. A partition detached after each restore takes its
# documents out of the statistics, as in the source.
#   tests/dump/dump_restore.sh PSQL_CONNECTION_ARGS (as the postgres user; the
#   database named by -d is only used to create and drop the others)
set -euo pipefail
args=("$@")
q() { local db=$1; shift; psql -X -q -t -A -v ON_ERROR_STOP=1 "${args[@]}" -d "$db" "$@"; }
dump=$(mktemp -u /tmp/pg_dedup_dump.XXXXXX)
conn=()
skip=0
for a in "${args[@]}"; do
  if ((skip)); then skip=0; continue; fi
  case "$a" in -d) skip=1 ;; *) conn+=("$a") ;; esac
done
admin=$(q postgres -c "SELECT 'postgres'")
dbs=(pg_dedup_dump_src pg_dedup_dump_full pg_dedup_dump_single pg_dedup_dump_data)
for db in "${dbs[@]}"; do
  q "$admin" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
done
q pg_dedup_dump_src >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION pg_dedup;
CREATE FUNCTION story(s int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg('w' || (abs(hashtext(s || ':' || j)) % 3000), ' ' ORDER BY j) || '. Итог ' || s || '.'
  FROM generate_series(1, 30) AS j $$;
CREATE TABLE pairs_src AS
SELECT dedup.to_document(story(i)) AS a,
       dedup.to_document(CASE WHEN i % 2 = 0 THEN story(i) ELSE story(i + 1000) END) AS b,
       i % 2 = 0 AS a_dup_b, i % 2 = 0 AS b_dup_a
FROM generate_series(1, 40) AS i;
CREATE TABLE dumped (id bigint PRIMARY KEY, body text);
SELECT dedup.enable('dumped', 'body', action => 'skip');
SELECT dedup.train('dump_model', 'dumped', 'SELECT a, b, a_dup_b, b_dup_a FROM pairs_src', '{"kernel": "linear", "folds": 0}');
INSERT INTO dumped SELECT i, story(CASE WHEN i % 4 = 0 THEN i - 1 ELSE i END) FROM generate_series(1, 400) AS i;
CREATE TABLE pdumped (id bigint, published date NOT NULL, body text, PRIMARY KEY (id, published)) PARTITION BY RANGE (published);
CREATE TABLE pdumped_1 PARTITION OF pdumped FOR VALUES FROM ('2024-01-01') TO ('2024-02-01');
CREATE TABLE pdumped_2 PARTITION OF pdumped FOR VALUES FROM ('2024-02-01') TO ('2024-03-01');
SELECT dedup.enable('pdumped', 'body', published_at => 'published');
INSERT INTO pdumped SELECT i, date '2024-01-01' + (i % 50), story(CASE WHEN i % 5 = 0 THEN i - 1 ELSE i + 500 END) FROM generate_series(1, 200) AS i;
SQL
# What must survive: signatures, statistics, models, rejected rows, pairs.
state() {
  q "$1" <<'SQL'
SELECT 'rows ' || count(*) || ' sig ' || md5(string_agg(id || dedup_sig::text || coalesce(duplicate_of::text, '') || dedup_verdict, ',' ORDER BY id)) FROM dumped;
SELECT 'stats ' || s.n_docs || ' ' || s.total_len FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'dumped';
SELECT 'terms ' || md5(string_agg(term || df || ':' || cf, ',' ORDER BY term)) FROM dedup.term_stats_by_name WHERE collection = 'dumped';
SELECT 'models ' || md5(string_agg(name || coalesce(version::text, ''), ',' ORDER BY name)) FROM dedup.models;
SELECT 'rejected ' || count(*) FROM dedup.rejected;
SELECT 'pairs ' || count(*) || ' ' || md5(coalesce(string_agg(a || b || verdict, ',' ORDER BY a, b), '')) FROM dedup.pairs('dumped');
SELECT 'find_original ' || coalesce(string_agg(key, ','), '-') FROM dedup.find_original('dumped', dedup.to_document(story(7)));
SELECT 'partitioned ' || count(*) || ' ' || md5(string_agg(id || dedup_sig::text || coalesce(duplicate_of::text, '') || dedup_verdict, ',' ORDER BY id)) FROM pdumped;
SELECT 'partitioned stats ' || s.n_docs || ' ' || s.total_len FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'pdumped';
SELECT 'partitioned terms ' || md5(string_agg(term || df || ':' || cf, ',' ORDER BY term)) FROM dedup.term_stats_by_name WHERE collection = 'pdumped';
SQL
}
src=$(state pg_dedup_dump_src)
pg_dump -Fc "${conn[@]}" -d pg_dedup_dump_src -f "$dump"
pg_restore "${conn[@]}" -d pg_dedup_dump_full "$dump"
full=$(state pg_dedup_dump_full)
pg_restore "${conn[@]}" -d pg_dedup_dump_single --single-transaction "$dump"
single=$(state pg_dedup_dump_single)
pg_restore "${conn[@]}" -d pg_dedup_dump_data --schema-only "$dump"
pg_restore "${conn[@]}" -d pg_dedup_dump_data --data-only "$dump"
data=$(state pg_dedup_dump_data)
echo "$src"
[ "$src" = "$full" ] || { echo "full restore differs:"; diff <(echo "$src") <(echo "$full"); exit 1; }
echo "pg_restore: identical"
[ "$src" = "$single" ] || { echo "single-transaction restore differs:"; diff <(echo "$src") <(echo "$single"); exit 1; }
echo "pg_restore --single-transaction: identical"
[ "$src" = "$data" ] || { echo "data-only restore differs:"; diff <(echo "$src") <(echo "$data"); exit 1; }
echo "pg_restore --schema-only then --data-only: identical"
# The triggers work after either restore: a reprint is kept out and recorded.
for db in "${dbs[@]}"; do
  q "$db" -c "INSERT INTO dumped VALUES (1000, story(5))" >/dev/null
  echo "$db: reprint kept out: $(q "$db" -c "SELECT count(*) = 0 FROM dumped WHERE id = 1000") rejected: $(q "$db" -c "SELECT count(*) FROM dedup.rejected")"
done
a=$(q pg_dedup_dump_src -c "SELECT count(*) FROM dedup.rejected")
for db in pg_dedup_dump_full pg_dedup_dump_single pg_dedup_dump_data; do
  [ "$(q "$db" -c "SELECT count(*) FROM dedup.rejected")" = "$a" ] || { echo "$db: trigger differs after restore"; exit 1; }
done
# A partition detached after the restore takes its documents out, as in the
# source (its statement triggers named the source's OID of pdumped).
detached() {
  q "$1" -c "ALTER TABLE pdumped DETACH PARTITION pdumped_2" >/dev/null
  q "$1" -c "SELECT s.n_docs || ' ' || s.total_len FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'pdumped'"
}
d=$(detached pg_dedup_dump_src)
echo "after DETACH: statistics $d"
for db in pg_dedup_dump_full pg_dedup_dump_single pg_dedup_dump_data; do
  [ "$(detached "$db")" = "$d" ] || { echo "$db: DETACH after restore leaves other statistics"; exit 1; }
done
for db in "${dbs[@]}"; do
  q "$admin" -c "DROP DATABASE $db"
done
rm -f "$dump"
echo "dump and restore: identical, and the triggers work"
