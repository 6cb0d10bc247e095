#!/usr/bin/env bash
# A bulk load through the trigger completes with PostgreSQL's default lock
# settings (max_locks_per_transaction = 64), and gives the same verdicts whichever
# way the same stream arrives: one INSERT ... SELECT, one COPY, or one INSERT
# statement per row (a PL/pgSQL loop, all in one transaction). The stream has
# reprints, cut reprints and reprints of reprints among distinct stories.
# Rows: BULK_ROWS (default 100000).
set -euo pipefail
rows=${BULK_ROWS:-100000}
psql_() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
csv=$(mktemp /tmp/pg_dedup_bulk.XXXXXX.csv)
chmod 644 "$csv"
trap 'rm -f "$csv"' EXIT

psql_ "$@" >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS bulk_stream, bulk_select, bulk_copy, bulk_rows;
SELECT dedup.drop_collection(name) FROM dedup.collections WHERE name LIKE 'bulk\_%';
-- Story s: 40 words from a 6,000-word vocabulary with a number; row i is story i,
-- except every 5th row, which reprints (in part, or with a sentence added) a story
-- some rows earlier, and every 50th, which reprints a reprint.
CREATE TABLE bulk_stream AS
WITH r AS (
  SELECT i, CASE WHEN i % 50 = 0 THEN i - 5 WHEN i % 5 = 0 THEN i - 3 - (i / 5) % 40 ELSE i END AS s
  FROM generate_series(1, $rows) AS i)
SELECT i, (SELECT string_agg('w' || (abs(hashtext(r.s || ':' || j)) % 6000), ' ' ORDER BY j)
           FROM generate_series(1, CASE WHEN i % 5 = 0 AND i % 3 = 0 THEN 32 ELSE 40 END) AS j)
          || '. Итог ' || (r.s % 997) || '.'
          || CASE WHEN i % 5 = 0 AND i % 3 = 1 THEN ' Дополнение к тексту.' ELSE '' END AS body
FROM r WHERE r.s > 0 ORDER BY i;
CREATE TABLE bulk_select (id bigint PRIMARY KEY, body text);
CREATE TABLE bulk_copy (id bigint PRIMARY KEY, body text);
CREATE TABLE bulk_rows (id bigint PRIMARY KEY, body text);
SELECT dedup.enable('bulk_select', 'body', collection => 'bulk_select');
SELECT dedup.enable('bulk_copy', 'body', collection => 'bulk_copy');
SELECT dedup.enable('bulk_rows', 'body', collection => 'bulk_rows');
SQL
psql_ "$@" -c "\\copy (SELECT i, body FROM bulk_stream ORDER BY i) TO '$csv' WITH (FORMAT csv)"

echo "max_locks_per_transaction: $(psql_ -t -A "$@" -c 'SHOW max_locks_per_transaction')"
t0=$(date +%s.%N)
psql_ "$@" -c "INSERT INTO bulk_select SELECT i, body FROM bulk_stream ORDER BY i"
t1=$(date +%s.%N)
psql_ "$@" -c "\\copy bulk_copy (id, body) FROM '$csv' WITH (FORMAT csv)"
t2=$(date +%s.%N)
psql_ "$@" 2>/tmp/pg_dedup_bulk.locks >/dev/null <<'SQL'
DO $$
DECLARE r record; held int; most int := 0;
BEGIN
  FOR r IN SELECT i, body FROM bulk_stream ORDER BY i LOOP
    INSERT INTO bulk_rows VALUES (r.i, r.body);
    IF r.i % 500 = 0 THEN
      SELECT count(*) INTO held FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory';
      most := greatest(most, held);
    END IF;
  END LOOP;
  RAISE NOTICE 'key locks held at once, at most: %', most;
END $$;
SQL
t3=$(date +%s.%N)
printf 'INSERT ... SELECT %.1f s, COPY %.1f s, one INSERT a row %.1f s (%s rows each)\n' \
  "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)" "$(echo "$t3 - $t2" | bc)" "$rows"

psql_ -t -A "$@" <<'SQL' > /tmp/pg_dedup_bulk.out
SELECT 'rows: ' || (SELECT count(*) FROM bulk_select) || ' ' || (SELECT count(*) FROM bulk_copy) || ' ' || (SELECT count(*) FROM bulk_rows);
SELECT 'marked: ' || count(*) FROM bulk_select WHERE duplicate_of IS NOT NULL;
SELECT 'copy differs: ' || count(*) FROM bulk_select s JOIN bulk_copy c USING (id)
WHERE (s.duplicate_of, s.dedup_verdict, s.dedup_sig::text) IS DISTINCT FROM (c.duplicate_of, c.dedup_verdict, c.dedup_sig::text);
SELECT 'row-by-row differs: ' || count(*) FROM bulk_select s JOIN bulk_rows c USING (id)
WHERE (s.duplicate_of, s.dedup_verdict, s.dedup_sig::text) IS DISTINCT FROM (c.duplicate_of, c.dedup_verdict, c.dedup_sig::text);
SELECT 'reprints marked: ' || count(*) FILTER (WHERE duplicate_of IS NOT NULL) || ' of ' || count(*)
FROM bulk_select WHERE id % 5 = 0;
SQL
sed -n 's/^NOTICE: *//p' /tmp/pg_dedup_bulk.locks >> /tmp/pg_dedup_bulk.out
cat /tmp/pg_dedup_bulk.out
most=$(sed -n 's/^key locks held at once, at most: //p' /tmp/pg_dedup_bulk.out)
[ -n "$most" ] && [ "$most" -le 257 ]
grep -qx "rows: $rows $rows $rows" /tmp/pg_dedup_bulk.out
grep -qx "copy differs: 0" /tmp/pg_dedup_bulk.out
grep -qx "row-by-row differs: 0" /tmp/pg_dedup_bulk.out
psql_ "$@" >/dev/null <<'SQL'
SET client_min_messages = warning;
SELECT dedup.disable('bulk_select'), dedup.disable('bulk_copy'), dedup.disable('bulk_rows');
DROP TABLE bulk_stream, bulk_select, bulk_copy, bulk_rows;
SQL
echo "bulk load of $rows rows: same verdicts by INSERT ... SELECT, COPY and row by row"
