#!/usr/bin/env bash
# 8 sessions, each running 100-row INSERT ... SELECT statements of overlapping
# texts (200 stories, drawn at random), each statement its own transaction: none
# fails, every story keeps exactly one original, and the collection statistics
# equal a recompute. Each statement inserts its rows in story order, as inserts
# into a unique index in key order never deadlock; the crossing case is in
# tests/isolation/specs/bulk_interleave.spec. The whole round runs under READ
# COMMITTED, REPEATABLE READ and SERIALIZABLE (the writers' transactions at that
# level): at none may a commit fail.
set -euo pipefail
psql_() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
round() {
level=$1; shift
echo "-- writers under $level"
psql_ "$@" >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS race2, race2_texts;
SELECT dedup.drop_collection(name) FROM dedup.collections WHERE name = 'race2';
CREATE TABLE race2_texts AS
SELECT k, (SELECT string_agg('w' || (abs(hashtext(k || ':' || j)) % 5000), ' ' ORDER BY j)
           FROM generate_series(1, 30) AS j) || '. Итог ' || k || '.' AS body
FROM generate_series(1, 200) AS k;
CREATE TABLE race2 (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int, body text);
SELECT dedup.enable('race2', 'body');
SQL
cat > /tmp/pg_dedup_race2.sql <<'SQL'
INSERT INTO race2 (k, body)
SELECT t.k, t.body FROM (SELECT 1 + (random() * 199)::int AS k FROM generate_series(1, 100)) r
JOIN race2_texts t USING (k) ORDER BY t.k;
SQL
PGOPTIONS="-c default_transaction_isolation=${level// /\\ }" \
  pgbench -n -c 8 -j 2 -t 5 -f /tmp/pg_dedup_race2.sql "$@" >/tmp/pg_dedup_race2.log 2>&1 || {
  cat /tmp/pg_dedup_race2.log; exit 1; }
grep -E "^number of (transactions actually processed|failed transactions)" /tmp/pg_dedup_race2.log
grep -qx "number of failed transactions: 0 (0.000%)" /tmp/pg_dedup_race2.log
if [ "$level" != "read committed" ]; then
  # Every commit at this level leaves a pending row, and the background worker
  # folds them: once the writers are done, no more than two batches may wait
  # (the limit under READ COMMITTED too; the automatic batch is 1 below 2,000
  # documents, then 0.5 % of them).
  for _ in $(seq 1 100); do
    within=$(psql_ -t -A "$@" -c "SELECT (SELECT count(*) FROM dedup.term_stats_pending p WHERE p.collection_id = c.id)
      <= 2 * CASE WHEN s.n_docs < 2000 THEN 1 ELSE least(s.n_docs / 200, 1000) END
      FROM dedup.collections c JOIN dedup.collection_stats s ON s.collection_id = c.id WHERE c.name = 'race2'")
    [ "$within" = t ] && break
    sleep 0.1
  done
  echo "pending rows within two batches after the workers: $within"
  [ "$within" = t ]
fi
psql_ -t -A "$@" <<'SQL' > /tmp/pg_dedup_race2.out
SELECT 'rows: ' || count(*) FROM race2;
SELECT 'stories with exactly one original: ' || count(*) FILTER (WHERE originals = 1) || ' of ' || count(*)
FROM (SELECT k, count(*) FILTER (WHERE duplicate_of IS NULL) AS originals FROM race2 GROUP BY k) g;
SELECT 'copies pointing elsewhere: ' || count(*) FROM race2 r
WHERE duplicate_of IS NOT NULL AND duplicate_of <> (SELECT min(id) FROM race2 o WHERE o.k = r.k AND o.duplicate_of IS NULL);
-- Past 2,000 documents the changes are written in batches (dedup.stats_batch is
-- automatic): fold what is pending first.
SELECT dedup.flush_stats('race2') \g /dev/null
WITH agg AS (SELECT dedup.term_stats_agg(dedup_doc) AS j FROM race2)
SELECT 'statistics equal a recompute: ' ||
  ((SELECT s.n_docs FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'race2')
   = (SELECT (j->>'n_docs')::bigint FROM agg)) FROM agg;
SQL
cat /tmp/pg_dedup_race2.out
stories=$(psql_ -t -A "$@" -c "SELECT count(DISTINCT k) FROM race2")
grep -qx "rows: 4000" /tmp/pg_dedup_race2.out
grep -qx "stories with exactly one original: $stories of $stories" /tmp/pg_dedup_race2.out
grep -qx "copies pointing elsewhere: 0" /tmp/pg_dedup_race2.out
grep -qx "statistics equal a recompute: true" /tmp/pg_dedup_race2.out
# Term statistics: every df/cf equals a recount from the stored documents.
before=$(psql_ -t -A "$@" -c "SELECT md5(string_agg(term || ':' || df || ':' || cf, ',' ORDER BY term)) FROM dedup.term_stats_by_name WHERE collection = 'race2'")
psql_ "$@" -c "SET client_min_messages = warning" -c "SELECT dedup.recompute('race2')" >/dev/null
after=$(psql_ -t -A "$@" -c "SELECT md5(string_agg(term || ':' || df || ':' || cf, ',' ORDER BY term)) FROM dedup.term_stats_by_name WHERE collection = 'race2'")
[ "$before" = "$after" ] || { echo "term statistics differ from a recompute"; exit 1; }
echo "term statistics equal a recompute"
psql_ "$@" -c "SELECT dedup.disable('race2')" -c "DROP TABLE race2, race2_texts" >/dev/null
}
for level in "read committed" "repeatable read" "serializable"; do
  round "$level" "$@"
done
echo "multi-row statements under 8 concurrent sessions, at each isolation level: no errors, one original per story"
