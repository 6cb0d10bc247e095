#!/usr/bin/env bash
# 8 concurrent sessions call dedup.add_document on overlapping documents; the
# statistics must then equal a fresh recompute over exactly the documents added.
# Runs twice: with term statistics updated at once (dedup.stats_batch = 1) and
# batched (16, then dedup.flush_stats).
# Usage: add_document.sh PSQL_ARGS...   (connection options for psql and pgbench)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
psql_() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
for batch in 1 16; do
psql_ "$@" >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS conc_docs, conc_added, conc_added_docs;
SELECT dedup.drop_collection(name) FROM dedup.collections WHERE name IN ('conc', 'conc_check');
SELECT dedup.create_collection('conc');
SELECT dedup.create_collection('conc_check');
-- 200 documents over a small shared vocabulary, so sessions fight over the same term rows.
CREATE TABLE conc_docs AS
SELECT i AS id, dedup.to_document(
  (SELECT string_agg('term' || ((i * 31 + j * 17) % 60), ' ') FROM generate_series(1, 30 + i % 11) j)
  || ' unique' || i, lang => 'simple') AS doc
FROM generate_series(1, 200) i;
CREATE TABLE conc_added (id int);
SQL
cat > /tmp/pg_dedup_conc_add.sql <<'SQL'
\set id random(1, 200)
BEGIN;
SELECT dedup.add_document('conc', doc) FROM conc_docs WHERE id = :id;
INSERT INTO conc_added VALUES (:id);
COMMIT;
SQL
PGOPTIONS="-c dedup.stats_batch=$batch" pgbench -n -c 8 -j 2 -t 60 -f /tmp/pg_dedup_conc_add.sql "$@" >/tmp/pg_dedup_conc_add.log 2>&1 || {
  cat /tmp/pg_dedup_conc_add.log; exit 1; }
grep -E "number of (transactions actually processed|failed)" /tmp/pg_dedup_conc_add.log || true
psql_ -t -A "$@" <<'SQL' > /tmp/pg_dedup_conc_add.out
SET client_min_messages = warning;
SELECT 'folded ' || dedup.flush_stats('conc');
CREATE TABLE conc_added_docs AS SELECT d.doc FROM conc_added a JOIN conc_docs d USING (id);
SET client_min_messages = warning;
SELECT 'recomputed ' || dedup.recompute('conc_added_docs', 'doc', 'conc_check');
WITH a AS (SELECT term, df, cf FROM dedup.term_stats_by_name WHERE collection = 'conc'),
     b AS (SELECT term, df, cf FROM dedup.term_stats_by_name WHERE collection = 'conc_check')
SELECT 'term rows differing: ' || count(*) FROM ((TABLE a EXCEPT TABLE b) UNION ALL (TABLE b EXCEPT TABLE a)) d;
SELECT 'collection rows equal: ' || ((SELECT (n_docs, total_len) FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE name = 'conc')
    = (SELECT (n_docs, total_len) FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE name = 'conc_check'));
SELECT 'documents added: ' || count(*) FROM conc_added;
SQL
cat /tmp/pg_dedup_conc_add.out
grep -qx "term rows differing: 0" /tmp/pg_dedup_conc_add.out
grep -qx "collection rows equal: true" /tmp/pg_dedup_conc_add.out
grep -qx "documents added: 480" /tmp/pg_dedup_conc_add.out
echo "add_document under 8 concurrent sessions, stats_batch $batch: statistics equal a recompute"
done
