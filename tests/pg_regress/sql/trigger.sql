-- The row trigger (written in Rust): columns of other types than text, a row's own
-- model, 'skip' statistics, and the configuration cache across sessions.
SET TIME ZONE 'UTC';
CREATE TABLE typed (
  id uuid PRIMARY KEY,
  title varchar(200), body varchar, published timestamp, src text, domain text);
SELECT dedup.enable('typed', 'body', title => 'title', published_at => 'published', source => 'src',
                    model_column => 'domain');
INSERT INTO typed VALUES
 ('00000000-0000-0000-0000-000000000001', 'Курс доллара вырос',
  'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке. Эксперты ожидают дальнейшего ослабления рубля.',
  '2024-03-12 09:00', 'tass', NULL);
INSERT INTO typed VALUES
 ('00000000-0000-0000-0000-000000000002', 'Доллар подорожал',
  'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке.',
  '2024-03-12 09:30', 'lenta', NULL);
-- duplicate_of has the key's type; the timestamp column reached the document.
SELECT id, duplicate_of, pg_typeof(duplicate_of) AS key_type, dedup_verdict,
       dedup.summary(dedup_doc)->>'published_at' AS published_at, dedup.summary(dedup_doc)->>'source' AS source
FROM typed ORDER BY id;
-- A row naming a model that does not exist fails like a call with it would.
SELECT err($$INSERT INTO typed VALUES ('00000000-0000-0000-0000-000000000003', 't', 'Другой текст о погоде.', NULL, NULL, 'nope')$$);
-- A NULL body: stored, no document, never a duplicate.
INSERT INTO typed VALUES ('00000000-0000-0000-0000-000000000004', 'Пусто', NULL, NULL, NULL, NULL);
SELECT id, dedup_doc IS NULL AS no_doc, dedup_sig IS NULL AS no_sig, dedup_verdict FROM typed
WHERE id = '00000000-0000-0000-0000-000000000004';

-- An empty body and a body of punctuation only: stored, never duplicates of each other.
INSERT INTO typed VALUES ('00000000-0000-0000-0000-00000000000a', 'Пусто', '', NULL, NULL, NULL),
                         ('00000000-0000-0000-0000-00000000000b', 'Знаки', '... !!! ---', NULL, NULL, NULL);
SELECT id, dedup_doc IS NULL AS no_doc, duplicate_of, dedup_verdict FROM typed
WHERE id IN ('00000000-0000-0000-0000-00000000000a', '00000000-0000-0000-0000-00000000000b') ORDER BY id;
DELETE FROM typed WHERE id IN ('00000000-0000-0000-0000-00000000000a', '00000000-0000-0000-0000-00000000000b');

-- Another session changes the table's action; this session's next insert obeys it
-- (the change empties every backend's cached configuration).
\! psql -X -q -d pg_dedup_regress -c "UPDATE dedup.enabled_tables SET action = 'skip' WHERE tbl = 'typed'::regclass"
INSERT INTO typed VALUES
 ('00000000-0000-0000-0000-000000000005', 'Снова доллар',
  'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке.',
  '2024-03-12 10:00', 'ria', NULL);
SELECT count(*) AS rows, count(*) FILTER (WHERE id = '00000000-0000-0000-0000-000000000005') AS skipped_row_stored
FROM typed;
SELECT row_data->>'title' AS title, original_key, verdict FROM dedup.rejected WHERE tbl = 'typed'::regclass;
-- A skipped row is not counted in the statistics: they still equal a recompute.
SELECT s.n_docs, (SELECT dedup.term_stats_agg(dedup_doc) FROM typed)->'n_docs' AS recomputed_n_docs
FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'typed';

-- Same for 'error', and for a change rolled back in this session.
\! psql -X -q -d pg_dedup_regress -c "UPDATE dedup.enabled_tables SET action = 'error' WHERE tbl = 'typed'::regclass"
SELECT err($$INSERT INTO typed VALUES ('00000000-0000-0000-0000-000000000006', 'x', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке.', NULL, NULL, NULL)$$);
BEGIN;
UPDATE dedup.enabled_tables SET action = 'mark' WHERE tbl = 'typed'::regclass;
INSERT INTO typed VALUES ('00000000-0000-0000-0000-000000000007', 'x', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке.', NULL, NULL, NULL);
SELECT duplicate_of FROM typed WHERE id = '00000000-0000-0000-0000-000000000007';
ROLLBACK;
SELECT err($$INSERT INTO typed VALUES ('00000000-0000-0000-0000-000000000008', 'x', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке.', NULL, NULL, NULL)$$);

-- UPDATE of a text column re-checks the row against the others (not itself).
UPDATE dedup.enabled_tables SET action = 'mark' WHERE tbl = 'typed'::regclass;
UPDATE typed SET body = 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке. Эксперты ожидают дальнейшего ослабления рубля.'
WHERE id = '00000000-0000-0000-0000-000000000004';
SELECT id, duplicate_of, dedup_verdict FROM typed ORDER BY id;
SELECT s.n_docs, (SELECT dedup.term_stats_agg(dedup_doc) FROM typed)->'n_docs' AS recomputed_n_docs
FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'typed';

-- A table whose configuration row is gone stores its rows unchecked, with a WARNING.
DELETE FROM dedup.collection_tables WHERE tbl = 'typed'::regclass;
DELETE FROM dedup.enabled_tables WHERE tbl = 'typed'::regclass;
INSERT INTO typed VALUES ('00000000-0000-0000-0000-000000000009', 'x', 'Текст без проверки.', NULL, NULL, NULL);
SELECT dedup_doc IS NULL AS unchecked FROM typed WHERE id = '00000000-0000-0000-0000-000000000009';
DROP TABLE typed;
SELECT dedup.drop_collection('typed');
DELETE FROM dedup.rejected;

-- The trigger reads its candidates straight from the signature index and the heap
-- pages it names. The same rows, inserted in the same order into a table whose
-- index was dropped (the SQL form, by a sequential scan), get the same verdicts.
-- Most rows here have more than the 50 candidates a row examines, so the order
-- (shared keys, then the key's own order: 9 before 10) and the limit are compared too.
CREATE TABLE via_index (id int PRIMARY KEY, body text);
CREATE TABLE via_seqscan (id int PRIMARY KEY, body text);
SELECT dedup.enable('via_index', 'body');
SELECT dedup.enable('via_seqscan', 'body');
DROP INDEX via_seqscan_dedup_sig_idx;
CREATE TEMP TABLE probe AS
SELECT i, CASE WHEN i % 10 = 0 THEN format('Сборная по хоккею выиграла матч %s со счетом 3:%s, тренер доволен игрой команды и болельщиков.', i, i % 3)
       ELSE 'Правительство Москвы объявило о строительстве новой линии метро, которая соединит районы Сокол и Марьино. '
            'Работы начнутся весной и завершатся через три года. Стоимость проекта оценивается в 120 миллиардов рублей. '
            || (ARRAY['Жители района рады.', 'Эксперты сомневаются в сроках.', 'Мэр посетил площадку.', 'Подрядчик уже выбран.', ''])[1 + i % 5]
            || CASE WHEN i % 7 = 0 THEN ' Отдельно сообщается, что в городе откроются новые парки, школы и поликлиники для всех жителей.' ELSE '' END
       END AS body
FROM generate_series(1, 120) i;
INSERT INTO via_index SELECT i, body FROM probe ORDER BY i;
INSERT INTO via_seqscan SELECT i, body FROM probe ORDER BY i;
SELECT dedup_verdict, count(*), count(DISTINCT duplicate_of) AS originals FROM via_index GROUP BY 1 ORDER BY 1;
SELECT max(n) AS most_candidates FROM (
    SELECT p.i, count(*) AS n FROM probe p JOIN via_index v ON v.dedup_sig OPERATOR(dedup.%) dedup.signature(dedup.to_document(p.body), 'via_index')
    GROUP BY p.i) c;
SELECT (SELECT count(*) FROM (SELECT id, duplicate_of, dedup_verdict FROM via_index
                              EXCEPT ALL SELECT id, duplicate_of, dedup_verdict FROM via_seqscan) d) AS only_via_index,
       (SELECT count(*) FROM (SELECT id, duplicate_of, dedup_verdict FROM via_seqscan
                              EXCEPT ALL SELECT id, duplicate_of, dedup_verdict FROM via_index) d) AS only_via_seqscan;
-- find_original and is_duplicate take the same path.
SELECT (SELECT count(*) FROM probe p, dedup.find_original('via_index', dedup.to_document(p.body)) f) AS find_original_rows,
       (SELECT count(*) FROM (SELECT p.i, f.* FROM probe p, dedup.find_original('via_index', dedup.to_document(p.body)) f
                              EXCEPT ALL
                              SELECT p.i, f.* FROM probe p, dedup.find_original('via_seqscan', dedup.to_document(p.body)) f) d) AS find_original_differs,
       (SELECT count(*) FROM probe p WHERE dedup.is_duplicate('via_index', p.body) IS DISTINCT FROM dedup.is_duplicate('via_seqscan', p.body)) AS is_duplicate_differs;
SELECT dedup.disable('via_index'), dedup.disable('via_seqscan');
DROP TABLE via_index, via_seqscan;
-- Text keys: their collation's order ('k10' before 'k9'), in both forms.
CREATE TABLE via_index (id text COLLATE "C" PRIMARY KEY, body text);
CREATE TABLE via_seqscan (id text COLLATE "C" PRIMARY KEY, body text);
SELECT dedup.enable('via_index', 'body');
SELECT dedup.enable('via_seqscan', 'body');
DROP INDEX via_seqscan_dedup_sig_idx;
INSERT INTO via_index SELECT 'k' || i, body FROM probe ORDER BY i;
INSERT INTO via_seqscan SELECT 'k' || i, body FROM probe ORDER BY i;
SELECT count(duplicate_of) AS duplicates,
       (SELECT count(*) FROM (SELECT id, duplicate_of, dedup_verdict FROM via_index
                              EXCEPT ALL SELECT id, duplicate_of, dedup_verdict FROM via_seqscan) d) AS only_via_index,
       (SELECT count(*) FROM (SELECT id, duplicate_of, dedup_verdict FROM via_seqscan
                              EXCEPT ALL SELECT id, duplicate_of, dedup_verdict FROM via_index) d) AS only_via_seqscan,
       (SELECT count(*) FROM (SELECT p.i, f.* FROM probe p, dedup.find_original('via_index', dedup.to_document(p.body)) f
                              EXCEPT ALL
                              SELECT p.i, f.* FROM probe p, dedup.find_original('via_seqscan', dedup.to_document(p.body)) f) d) AS find_original_differs
FROM via_index;
SELECT dedup.disable('via_index'), dedup.disable('via_seqscan');
DROP TABLE via_index, via_seqscan, probe;

-- When work_mem is too small for an exact bitmap, the lookup reads whole (lossy)
-- heap pages and rechecks `%` on every row: the answers do not change, and equal the
-- query form's.
CREATE TABLE lossy (id int PRIMARY KEY, body text);
SELECT dedup.enable('lossy', 'body');
ALTER TABLE lossy DISABLE TRIGGER dedup_trigger;
INSERT INTO lossy (id, body, dedup_doc)
SELECT i, b, dedup.to_document(b) FROM (
    SELECT i, format('Правительство Москвы объявило о строительстве новой линии метро номер %s, которая соединит районы. Работы начнутся весной.', i % 50) AS b
    FROM generate_series(1, 30000) i) s;
SET client_min_messages = warning;
SELECT dedup.recompute('lossy'::regclass, 'dedup_doc', 'lossy');
RESET client_min_messages;
ALTER TABLE lossy ENABLE TRIGGER dedup_trigger;
CREATE TEMP TABLE lp AS
SELECT k, format('Правительство Москвы объявило о строительстве новой линии метро номер %s, которая соединит районы. Работы начнутся весной.', k) AS body
FROM generate_series(3, 48, 15) k;
SELECT dedup.signature(dedup.to_document(body), 'lossy') AS probe_sig FROM lp WHERE k = 3 \gset
CREATE FUNCTION pg_temp.explain_json(q text) RETURNS json LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, FORMAT JSON) ' || q INTO j;
    RETURN j;
END $$;
SET work_mem = '64kB';
SELECT (j -> 0 -> 'Plan' -> 'Plans' -> 0 ->> 'Lossy Heap Blocks')::int > 0 AS bitmap_goes_lossy
FROM (SELECT pg_temp.explain_json($$SELECT count(*) FROM lossy WHERE dedup_sig OPERATOR(dedup.%) '$$ || :'probe_sig' || $$'::dedup.signature$$) AS j) e;
CREATE TEMP TABLE lossy_r AS SELECT lp.k, f.* FROM lp, dedup.find_original('lossy', dedup.to_document(lp.body)) f;
RESET work_mem;
CREATE TEMP TABLE exact_r AS SELECT lp.k, f.* FROM lp, dedup.find_original('lossy', dedup.to_document(lp.body)) f;
DROP INDEX lossy_dedup_sig_idx;
CREATE TEMP TABLE query_r AS SELECT lp.k, f.* FROM lp, dedup.find_original('lossy', dedup.to_document(lp.body)) f;
SELECT (SELECT count(*) FROM exact_r) AS rows,
       (SELECT count(*) FROM (TABLE exact_r EXCEPT ALL TABLE lossy_r) d) + (SELECT count(*) FROM (TABLE lossy_r EXCEPT ALL TABLE exact_r) d) AS lossy_differs,
       (SELECT count(*) FROM (TABLE exact_r EXCEPT ALL TABLE query_r) d) + (SELECT count(*) FROM (TABLE query_r EXCEPT ALL TABLE exact_r) d) AS query_differs;
SELECT dedup.disable('lossy');
DROP TABLE lossy, lp, lossy_r, exact_r, query_r;

-- A stored document records the analyser version that made it (this build's: 2;
-- none written means 1, 0.1.0's). A candidate made by another version is
-- compared all the same, and the first backend that meets one warns, with the fix.
CREATE TABLE older (id int PRIMARY KEY, body text);
SELECT dedup.enable('older', 'body');
INSERT INTO older VALUES (1, 'Курс доллара на Московской бирже вырос до 92 рублей после решения ЦБ.');
SELECT dedup_doc::text LIKE '{"analyzer":2,%' AS version_written FROM older;
-- A row restored by the owner with a document of analyser version 1 (taken as
-- given: the owner's session has the empty search_path pg_dump's output sets).
SET search_path = '';
INSERT INTO public.older (id, body, dedup_doc, dedup_sig, dedup_verdict)
SELECT 2, body, d, dedup.signature(d, 'older'), 'distinct'
FROM (SELECT body, replace(dedup_doc::text, '"analyzer":2,', '')::dedup.document AS d FROM public.older WHERE id = 1) s;
RESET search_path;
SELECT id, dedup_doc::text LIKE '{"analyzer":2,%' AS analyzer_2 FROM older ORDER BY id;
INSERT INTO older VALUES (3, 'Курс доллара на Московской бирже вырос до 92 рублей после решения ЦБ.');
SELECT id, duplicate_of FROM older ORDER BY id;
SELECT dedup.disable('older');
DROP TABLE older;
-- The owner's copy of a row with its dedup columns, in an application's session
-- (INSERT ... SELECT *, an ORM's clone of a record), is no restore: it is checked
-- and counted as any insert, so 'error' refuses an exact copy, and a later DELETE
-- takes out a document that was counted (a copy taken as it was slipped past
-- 'error', and its DELETE left N one short).
CREATE TABLE cloned (id int PRIMARY KEY, body text);
SELECT dedup.enable('cloned', 'body', action => 'error');
INSERT INTO cloned VALUES (1, 'Курс доллара на Московской бирже вырос до 92 рублей после решения ЦБ.'),
                          (2, 'В Москве ожидается снег и гололед, синоптики предупреждают о сильном ветре.');
SELECT err($$INSERT INTO cloned SELECT 3, body, dedup_doc, dedup_sig, duplicate_of, dedup_verdict FROM cloned WHERE id = 1$$);
SELECT dedup.disable('cloned');
SELECT dedup.enable('cloned', 'body');
INSERT INTO cloned SELECT 3, body, dedup_doc, dedup_sig, duplicate_of, dedup_verdict FROM cloned WHERE id = 1;
SELECT id, duplicate_of, dedup_verdict FROM cloned ORDER BY id;
DELETE FROM cloned WHERE id = 3;
SELECT dedup.flush_stats('cloned');
SELECT s.n_docs, (SELECT count(*) FROM cloned) AS table_rows
FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'cloned';
SELECT dedup.disable('cloned');
DROP TABLE cloned;
-- A logical replication apply worker (session_replication_role replica, the
-- triggers enabled always) is no restore: a row it brings with a document and
-- verdict (a partition move carries the local row's old ones) is checked and
-- counted as any other.
CREATE TABLE applied (id int PRIMARY KEY, body text);
SELECT dedup.enable('applied', 'body');
ALTER TABLE applied ENABLE ALWAYS TRIGGER dedup_trigger, ENABLE ALWAYS TRIGGER dedup_delete_trigger,
  ENABLE ALWAYS TRIGGER dedup_truncate_trigger, ENABLE ALWAYS TRIGGER dedup_statement_start,
  ENABLE ALWAYS TRIGGER dedup_row_stored, ENABLE ALWAYS TRIGGER dedup_statement_end;
INSERT INTO applied VALUES (1, 'Курс доллара на Московской бирже вырос до 92 рублей после решения ЦБ.');
SET session_replication_role = replica;
INSERT INTO applied (id, body, dedup_doc, dedup_verdict)
VALUES (2, 'Курс доллара на Московской бирже вырос до 92 рублей после решения ЦБ.', dedup.to_document('x y z'), 'distinct');
RESET session_replication_role;
SELECT id, duplicate_of, dedup_verdict,
       dedup_doc::text = (SELECT a.dedup_doc::text FROM applied a WHERE a.id = 1) AS same_document_as_1
FROM applied ORDER BY id;
SELECT s.n_docs FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'applied';
SELECT dedup.disable('applied');
DROP TABLE applied;
-- DDL in such a session (a bulk loader's, a migration tool's) keeps the
-- registrations in step all the same: the event triggers fire always.
CREATE TABLE replica_ddl (id int PRIMARY KEY, body text);
SELECT dedup.enable('replica_ddl', 'body');
SET session_replication_role = replica;
ALTER TABLE replica_ddl RENAME COLUMN body TO text_body;
SELECT body_column FROM dedup.enabled_tables WHERE tbl = 'replica_ddl'::regclass;
DROP TABLE replica_ddl;
RESET session_replication_role;
SELECT count(*) AS left_registered FROM dedup.enabled_tables e
WHERE NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = e.tbl);
SELECT count(*) AS collection_left FROM dedup.collections WHERE name = 'replica_ddl';
SELECT evtname, evtenabled FROM pg_event_trigger WHERE evtname LIKE 'dedup%' ORDER BY 1;

-- duplicate_of is a mark set at insert: deleting an original (or changing its key)
-- leaves its copies' marks as they were. A later copy points at a row that is
-- there: the first original while it exists, else the copy it matched.
CREATE TABLE gone (id int PRIMARY KEY, body text);
SELECT dedup.enable('gone', 'body');
INSERT INTO gone VALUES
 (1, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.'),
 (2, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.'),
 (3, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.');
SELECT id, duplicate_of FROM gone ORDER BY id;
DELETE FROM gone WHERE id = 1;
INSERT INTO gone VALUES (4, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.');
SELECT id, duplicate_of, dedup_verdict FROM gone ORDER BY id;
SELECT key FROM dedup.find_original('gone', dedup.to_document('Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.'));
-- A re-keyed original: the same.
UPDATE gone SET id = 20 WHERE id = 2;
INSERT INTO gone VALUES (5, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.');
SELECT id, duplicate_of FROM gone ORDER BY id;
-- An original whose key and text change is not compared with its own copies: it
-- stays an original (its copies keep their mark on the old key).
INSERT INTO gone VALUES
 (30, 'Городские власти объявили о ремонте набережной: работы начнутся в апреле и продлятся до осени.'),
 (31, 'Городские власти объявили о ремонте набережной: работы начнутся в апреле и продлятся до осени.');
UPDATE gone SET id = 39, body = body || ' ' WHERE id = 30 RETURNING id, duplicate_of;
SELECT dedup.disable('gone');
DROP TABLE gone;
-- A key of several columns.
CREATE TABLE gone2 (a int, b text, body text, PRIMARY KEY (a, b));
SELECT dedup.enable('gone2', 'body');
INSERT INTO gone2 VALUES
 (1, 'x', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.'),
 (2, 'y', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.');
DELETE FROM gone2 WHERE a = 1;
INSERT INTO gone2 VALUES (3, 'z', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.');
SELECT a, b, duplicate_of FROM gone2 ORDER BY a;
SELECT dedup.disable('gone2');
DROP TABLE gone2;

-- A column dedup.enable was given follows a rename; it cannot be dropped while the
-- table is enabled; a renamed key column is refused.
CREATE TABLE ren (id int PRIMARY KEY, body text, published timestamptz);
SELECT dedup.enable('ren', 'body', published_at => 'published', action => 'error');
INSERT INTO ren VALUES (1, 'Первый текст о рыбалке на Волге летом, улов оказался богатым и разнообразным.', '2024-05-01');
ALTER TABLE ren RENAME COLUMN body TO content;
ALTER TABLE ren RENAME COLUMN published TO published_on;
SELECT body_column, published_at_column FROM dedup.enabled_tables WHERE tbl = 'ren'::regclass;
SELECT err($$INSERT INTO ren VALUES (2, 'Первый текст о рыбалке на Волге летом, улов оказался богатым и разнообразным.', '2024-05-02')$$);
SELECT err($$ALTER TABLE ren DROP COLUMN content$$);
SELECT err($$ALTER TABLE ren RENAME COLUMN id TO ident$$);
ALTER TABLE ren ADD COLUMN note text;
ALTER TABLE ren DROP COLUMN note;
INSERT INTO ren VALUES (3, 'Совсем другой текст о погоде в Казани и сильном снегопаде.', '2024-05-03');
SELECT id, dedup_doc IS NOT NULL AS checked, dedup_verdict FROM ren ORDER BY id;
SELECT dedup.disable('ren');
DROP TABLE ren;

-- A key column that changes type takes duplicate_of with it; a key of several
-- columns cannot follow, and says so. A copy of a row whose key no longer
-- fits the old type is still marked.
CREATE TABLE widen (id int PRIMARY KEY, body text);
SELECT dedup.enable('widen', 'body');
ALTER TABLE widen ALTER COLUMN id TYPE bigint;
SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'widen'::regclass AND attname = 'duplicate_of';
INSERT INTO widen VALUES (3000000000, 'Первый текст о рыбалке на Волге летом, улов оказался богатым и разнообразным.');
INSERT INTO widen VALUES (3000000001, 'Первый текст о рыбалке на Волге летом, улов оказался богатым и разнообразным.');
SELECT id, duplicate_of, dedup_verdict FROM widen ORDER BY id;
-- duplicate_of itself takes no other type (2BP01; it was set back to the key's
-- afterwards, with the values USING NULL had lost), nor does the key's type
-- change in the same statement stop it from following.
SELECT err($$ALTER TABLE widen ALTER COLUMN duplicate_of TYPE bytea USING NULL$$);
SELECT err($$ALTER TABLE widen ALTER COLUMN duplicate_of TYPE numeric(20, 0)$$);
SELECT id, duplicate_of FROM widen ORDER BY id;
ALTER TABLE widen ALTER COLUMN id TYPE numeric(12, 0);
SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'widen'::regclass AND attname = 'duplicate_of';
ALTER TABLE widen ALTER COLUMN id TYPE numeric(13, 0), ALTER COLUMN duplicate_of TYPE numeric(13, 0);
SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'widen'::regclass AND attname = 'duplicate_of';
SELECT id, duplicate_of FROM widen ORDER BY id;
SELECT dedup.disable('widen');
DROP TABLE widen;
-- A key change that maps the keys anew (text ids to numbers) is refused when a
-- stored original's key does not fit the new type: every later copy of that row
-- would fail (22P02 with nothing naming pg_dedup).
CREATE TABLE remap (id text PRIMARY KEY, body text);
SELECT dedup.enable('remap', 'body');
INSERT INTO remap VALUES ('a1', 'Второй текст о рыбалке на Оке осенью, улов оказался скромным, но вкусным.');
INSERT INTO remap VALUES ('a2', 'Второй текст о рыбалке на Оке осенью, улов оказался скромным, но вкусным.');
SELECT err($$ALTER TABLE remap ALTER COLUMN id TYPE int USING substr(id, 2)::int$$);
SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'remap'::regclass AND attname IN ('id', 'duplicate_of');
SELECT dedup.disable('remap');
DROP TABLE remap;
-- Only the table's owner's own ALTER TABLE changes duplicate_of (the rewrite runs
-- the owner's constraints and casts); another role, a superuser included, gets a
-- WARNING with the command.
CREATE ROLE regress_dedup_widener;
CREATE TABLE widen3 (id int PRIMARY KEY, body text);
ALTER TABLE widen3 OWNER TO regress_dedup_widener;
SELECT dedup.enable('widen3', 'body');
ALTER TABLE widen3 ALTER COLUMN id TYPE bigint;
SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'widen3'::regclass AND attname = 'duplicate_of';
SET ROLE regress_dedup_widener;
ALTER TABLE widen3 ADD COLUMN note text;
RESET ROLE;
SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'widen3'::regclass AND attname = 'duplicate_of';
SELECT dedup.disable('widen3');
DROP TABLE widen3;
DROP ROLE regress_dedup_widener;
CREATE TABLE widen2 (id int, part int, body text, PRIMARY KEY (id, part));
SELECT dedup.enable('widen2', 'body');
INSERT INTO widen2 VALUES (1, 1, 'Первый текст о рыбалке на Волге летом, улов оказался богатым и разнообразным.');
ALTER TABLE widen2 ALTER COLUMN id TYPE bigint;
INSERT INTO widen2 VALUES (3000000000, 1, 'Первый текст о рыбалке на Волге летом, улов оказался богатым и разнообразным.');
INSERT INTO widen2 VALUES (3000000001, 1, 'Первый текст о рыбалке на Волге летом, улов оказался богатым и разнообразным.');
SELECT id, duplicate_of, dedup_verdict FROM widen2 ORDER BY id;
SELECT dedup.disable('widen2');
DROP TABLE widen2;

-- enable's backfill records the trigger's verdicts: mutual for a copy its original
-- duplicates too, b_duplicates_a for a row that adds to an earlier one. The same
-- rows inserted one at a time through the trigger, for comparison (each weighed
-- under the statistics of the rows before it, which may differ in a small table).
CREATE TABLE bf_rows (id int PRIMARY KEY, body text);
INSERT INTO bf_rows VALUES
 (1, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке.'),
 (2, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке.'),
 (3, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке. Эксперты ожидают ослабления рубля к концу месяца.'),
 (4, 'В Москве ожидается снег и гололед. Синоптики предупреждают о сильном ветре на выходных.');
CREATE TABLE bf_trig (id int PRIMARY KEY, body text);
SELECT dedup.enable('bf_rows', 'body');
SELECT dedup.enable('bf_trig', 'body');
INSERT INTO bf_trig VALUES (1, (SELECT body FROM bf_rows WHERE id = 1));
INSERT INTO bf_trig VALUES (2, (SELECT body FROM bf_rows WHERE id = 2));
INSERT INTO bf_trig VALUES (3, (SELECT body FROM bf_rows WHERE id = 3));
INSERT INTO bf_trig VALUES (4, (SELECT body FROM bf_rows WHERE id = 4));
SELECT r.id, r.duplicate_of AS backfill_of, r.dedup_verdict AS backfill, t.duplicate_of AS trigger_of, t.dedup_verdict AS trigger
FROM bf_rows r JOIN bf_trig t USING (id) ORDER BY id;
SELECT dedup.disable('bf_rows'), dedup.disable('bf_trig');
DROP TABLE bf_rows, bf_trig;

-- An upsert is the conflict's business: the row of the same key is not compared
-- with the new text, so 'skip' neither drops the upsert nor records it as
-- rejected, and 'error' does not refuse it.
CREATE TABLE ups (id int PRIMARY KEY, body text);
SELECT dedup.enable('ups', 'body', action => 'skip');
INSERT INTO ups VALUES (1, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ. Опечатка здсь.');
INSERT INTO ups VALUES (1, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ. Опечатка здесь.')
  ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body;
INSERT INTO ups VALUES (1, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ. Опечатка здесь.')
  ON CONFLICT DO NOTHING;
SELECT id, body LIKE '%здесь.' AS updated, duplicate_of FROM ups;
SELECT count(*) AS rejected FROM dedup.rejected WHERE tbl = 'ups'::regclass;
SELECT dedup.disable('ups');
SELECT dedup.enable('ups', 'body', action => 'error');
INSERT INTO ups VALUES (1, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ. Опечатка исправлена.')
  ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body;
INSERT INTO ups VALUES (1, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ. Опечатка исправлена.')
  ON CONFLICT DO NOTHING;
SELECT id, body LIKE '%исправлена.' AS updated FROM ups;
SELECT dedup.disable('ups');
DROP TABLE ups;

-- An original whose text is stored again (README's UPDATE t SET body = body) or
-- edited stays the original of its copies: it is not compared with them.
CREATE TABLE upd_orig (id int PRIMARY KEY, title text, body text);
SELECT dedup.enable('upd_orig', 'body', title => 'title');
INSERT INTO upd_orig SELECT i, 'Заголовок', 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра. В парке есть спортивные площадки и пруд.'
FROM generate_series(1, 3) i;
UPDATE upd_orig SET body = body;
SELECT id, duplicate_of, dedup_verdict FROM upd_orig ORDER BY id;
UPDATE upd_orig SET title = 'Заголовок с правкой' WHERE id = 1;
SELECT id, duplicate_of FROM upd_orig ORDER BY id;
SELECT dedup.disable('upd_orig');
DROP TABLE upd_orig;
-- A text stored again as it was is not checked again at all: an original that a
-- later, longer post contains stays an original (checked again it would become a
-- copy of that later post), and what the update writes into the marks is
-- replaced by the row's own. An edit is checked.
CREATE TABLE upd_same (id int PRIMARY KEY, body text);
SELECT dedup.enable('upd_same', 'body');
INSERT INTO upd_same VALUES (1, 'Мосгорсуд арестовал бывшего замминистра по делу о взятке в особо крупном размере.');
INSERT INTO upd_same VALUES (2, 'Мосгорсуд арестовал бывшего замминистра по делу о взятке в особо крупном размере. Ему грозит до 15 лет колонии. Следствие изъяло 40 миллионов рублей.');
UPDATE upd_same SET body = body;
UPDATE upd_same SET body = body, duplicate_of = 2, dedup_verdict = 'mutual' WHERE id = 1;
SELECT id, duplicate_of, dedup_verdict FROM upd_same ORDER BY id;
UPDATE upd_same SET body = (SELECT body FROM upd_same WHERE id = 2) WHERE id = 1;
SELECT id, duplicate_of, dedup_verdict FROM upd_same ORDER BY id;
SELECT dedup.disable('upd_same');
DROP TABLE upd_same;

-- Exact copies are candidates whatever the statistics did to the order of their
-- heaviest words (their signatures share the fingerprint keys).
CREATE FUNCTION pg_temp.story(s int) RETURNS text IMMUTABLE LANGUAGE sql AS $$
  SELECT (SELECT string_agg('w' || (abs(hashtext(s || ':' || j)) % 6000), ' ' ORDER BY j) FROM generate_series(1, 40) j)
         || '. Итог ' || (s % 997) || '.' $$;
CREATE TABLE exm (id int PRIMARY KEY, body text);
SELECT dedup.enable('exm', 'body');
INSERT INTO exm SELECT i, pg_temp.story(i % 500) FROM generate_series(1, 500) i;
SELECT count(*) FILTER (WHERE NOT dedup.is_duplicate('exm', pg_temp.story(i))) AS copies_not_found
FROM generate_series(1, 499) i;
SELECT dedup.disable('exm');
DROP TABLE exm;

-- A superuser (or any member of the owner's role) enables and recomputes a table
-- of another role's that holds rows, whatever the search_path.
CREATE ROLE regress_dedup_towner;
CREATE TABLE towned (id int PRIMARY KEY, a int, b date, body text);
ALTER TABLE towned OWNER TO regress_dedup_towner;
INSERT INTO towned SELECT i, i, date '2024-01-01', 'Новость номер ' || (i % 10) || ' о строительстве моста через реку Москву.' FROM generate_series(1, 30) i;
SELECT dedup.enable('towned', 'body');
SELECT dedup.recompute('towned');
SELECT count(*) FILTER (WHERE duplicate_of IS NOT NULL) AS marked FROM towned;
SELECT dedup.disable('towned');
-- The composite key type follows the table's owner, who can then disable it.
CREATE TABLE o_comp (a int, b date, body text, PRIMARY KEY (a, b));
SELECT dedup.enable('o_comp', 'body');
ALTER TABLE o_comp OWNER TO regress_dedup_towner;
SELECT pg_get_userbyid(typowner) AS key_type_owner FROM pg_type WHERE typname = 'o_comp_dedup_key';
SET ROLE regress_dedup_towner;
SELECT dedup.disable('o_comp');
RESET ROLE;
DROP TABLE towned, o_comp;
DROP ROLE regress_dedup_towner;

-- The owner copying rows with their dedup columns between enabled tables, then
-- again with ON CONFLICT: the statistics are rebuilt where the statement's own
-- count cannot be trusted, and equal a recompute.
CREATE TABLE rep_a (id int PRIMARY KEY, body text);
CREATE TABLE rep_b (id int PRIMARY KEY, body text);
SELECT dedup.enable('rep_a', 'body'), dedup.enable('rep_b', 'body');
INSERT INTO rep_a SELECT i, 'Сообщение ' || i || ' о ремонте дорог в районе Сокол и Хамовники.' FROM generate_series(1, 6) i;
SET client_min_messages = warning;
INSERT INTO rep_b SELECT * FROM rep_a WHERE id <= 2;
INSERT INTO rep_b SELECT * FROM rep_a ON CONFLICT DO NOTHING;
RESET client_min_messages;
CREATE TEMP TABLE rep_before AS
SELECT s.n_docs, s.total_len FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'rep_b';
SELECT dedup.recompute('rep_b') AS recomputed;
SELECT (SELECT (n_docs, total_len) FROM rep_before) = (s.n_docs, s.total_len) AS statistics_equal_a_recompute
FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'rep_b';
SELECT dedup.disable('rep_a'), dedup.disable('rep_b');
DROP TABLE rep_a, rep_b;

-- The table's own collection is named after it: one of that name that reads
-- another table (renamed since) is not joined unless named.
CREATE TABLE ren (id int PRIMARY KEY, body text);
SELECT dedup.enable('ren', 'body');
ALTER TABLE ren RENAME TO ren_old;
CREATE TABLE ren (id int PRIMARY KEY, body text);
SELECT err($$SELECT dedup.enable('ren', 'body')$$);
SELECT dedup.enable('ren', 'body', collection => 'ren_new');
SELECT indexrelid::regclass AS index_of_ren FROM pg_index WHERE indrelid = 'ren'::regclass AND NOT indisprimary;
SELECT dedup.disable('ren'), dedup.disable('ren_old');
DROP TABLE ren, ren_old;

-- The analyst functions match candidates with the collection's settings, not the
-- caller's: a session's dedup.min_shared_keys changes neither pairs nor groups.
CREATE TABLE an_lim (id int PRIMARY KEY, body text);
SELECT dedup.create_collection('an_lim_c', options => '{"min_shared_keys": 3}');
SELECT dedup.enable('an_lim', 'body', collection => 'an_lim_c');
INSERT INTO an_lim VALUES
 (1, 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра.'),
 (2, 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра.');
SET dedup.min_shared_keys = 256;
SELECT a, b, verdict FROM dedup.pairs('an_lim');
SELECT count(*) AS group_rows FROM dedup.groups('an_lim');
SELECT count(*) AS candidates FROM dedup.candidates('an_lim', (SELECT dedup_sig FROM an_lim WHERE id = 1), 10);
RESET dedup.min_shared_keys;
SELECT dedup.disable('an_lim');
DROP TABLE an_lim;
SELECT dedup.drop_collection('an_lim_c');

-- A time without a zone is taken as UTC whatever the writer's TimeZone: the
-- verdicts do not depend on who writes.
CREATE TABLE tz_t (id int PRIMARY KEY, body text, published timestamp);
SELECT dedup.enable('tz_t', 'body', published_at => 'published');
SET timezone = 'UTC';
INSERT INTO tz_t VALUES (1, 'Курс доллара на Московской бирже вырос до 92 рублей после решения ЦБ.', '2024-03-01 12:00');
SET timezone = 'Asia/Tokyo';
INSERT INTO tz_t VALUES (2, 'Курс доллара на Московской бирже вырос до 92 рублей после решения ЦБ.', '2024-03-01 12:00');
RESET timezone;
SELECT id, duplicate_of, dedup.summary(dedup_doc)->>'published_at' AS document_time FROM tz_t ORDER BY id;
SELECT dedup.disable('tz_t');
DROP TABLE tz_t;

-- A text of stop words alone has no terms, but its copies are found all the same.
CREATE TABLE stop_t (id int PRIMARY KEY, body text);
SELECT dedup.enable('stop_t', 'body');
INSERT INTO stop_t VALUES (1, 'To be or not to be'), (2, 'To be or not to be'), (3, 'Это он и она'), (4, 'Это он и она');
SELECT id, duplicate_of, dedup_verdict FROM stop_t ORDER BY id;
SELECT dedup.disable('stop_t');
DROP TABLE stop_t;

-- Integer keys tie-break as numbers: with no times, 9 comes before 10 in the
-- backfill, in groups and in the trigger's choice between equal candidates.
CREATE TABLE numkeys (id int PRIMARY KEY, body text);
INSERT INTO numkeys VALUES (10, 'Курс доллара на Московской бирже вырос до 92 рублей.'),
                           (9, 'Курс доллара на Московской бирже вырос до 92 рублей.'),
                           (100, 'Погода в Москве: снег и гололед.'),
                           (11, 'Погода в Москве: снег и гололед.');
SELECT dedup.enable('numkeys', 'body');
SELECT id, duplicate_of, dedup_verdict FROM numkeys ORDER BY id;
SELECT * FROM dedup.groups('numkeys') ORDER BY group_id, key::int;
SELECT dedup.disable('numkeys');
DROP TABLE numkeys;

-- The backfill compares each row with its 50 best candidates among the rows
-- before it, as the trigger did: 60 copies, the last key published first, are
-- all copies of it, as inserting them in time order marks them.
CREATE TABLE many (id int PRIMARY KEY, body text, pub timestamptz);
INSERT INTO many SELECT i, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.',
                        timestamptz '2024-01-01' + make_interval(days => 60 - i) FROM generate_series(1, 60) i;
SET client_min_messages = warning;
SELECT dedup.enable('many', 'body', published_at => 'pub');
RESET client_min_messages;
SELECT count(duplicate_of) AS marked, count(*) FILTER (WHERE duplicate_of = 60) AS copies_of_60 FROM many;
SELECT dedup.disable('many');
DROP TABLE many;

-- An upsert whose new text duplicates a third row is an update of the row it
-- conflicts with: 'skip' and 'error' store and mark it, as they do an UPDATE.
CREATE TABLE up_skip (id int PRIMARY KEY, body text);
CREATE TABLE up_err (id int PRIMARY KEY, body text);
SELECT dedup.enable('up_skip', 'body', action => 'skip'), dedup.enable('up_err', 'body', action => 'error');
INSERT INTO up_skip VALUES (1, 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра.'),
                           (2, 'Футбольный клуб Спартак выиграл у Зенита со счетом 2:1 в центральном матче тура.');
INSERT INTO up_err SELECT * FROM up_skip;
INSERT INTO up_skip VALUES (2, 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра.')
  ON CONFLICT (id) DO UPDATE SET body = excluded.body;
INSERT INTO up_err VALUES (2, 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра.')
  ON CONFLICT (id) DO UPDATE SET body = excluded.body;
SELECT 'skip' AS t, id, left(body, 12) AS body, duplicate_of, dedup_verdict FROM up_skip
UNION ALL SELECT 'error', id, left(body, 12), duplicate_of, dedup_verdict FROM up_err ORDER BY 1, 2;
-- A new key is still refused.
INSERT INTO up_skip VALUES (3, 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра.');
SELECT err($$INSERT INTO up_err VALUES (3, 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра.')$$);
SELECT count(*) AS kept_out FROM up_skip WHERE id = 3;
SELECT dedup.disable('up_skip'), dedup.disable('up_err');
DROP TABLE up_skip, up_err;
-- The same through another unique column (a surrogate key): the upsert updates its
-- row under 'skip' and 'error'; a copy under a new url is still refused.
CREATE TABLE un_skip (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, url text UNIQUE, body text);
CREATE TABLE un_err (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, url text UNIQUE, body text);
SELECT dedup.enable('un_skip', 'body', action => 'skip'), dedup.enable('un_err', 'body', action => 'error');
INSERT INTO un_skip (url, body) VALUES ('u1', 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра.');
INSERT INTO un_err (url, body) VALUES ('u1', 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра.');
INSERT INTO un_skip (url, body) VALUES ('u1', 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра сегодня.')
  ON CONFLICT (url) DO UPDATE SET body = excluded.body;
INSERT INTO un_err (url, body) VALUES ('u1', 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра сегодня.')
  ON CONFLICT (url) DO UPDATE SET body = excluded.body;
SELECT 'skip' AS t, url, right(body, 8) AS body_end, duplicate_of, dedup_verdict FROM un_skip
UNION ALL SELECT 'error', url, right(body, 8), duplicate_of, dedup_verdict FROM un_err ORDER BY 1, 2;
INSERT INTO un_skip (url, body) VALUES ('u2', 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра сегодня.');
SELECT err($$INSERT INTO un_err (url, body) VALUES ('u2', 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра сегодня.')$$);
SELECT (SELECT count(*) FROM un_skip) AS skip_rows, (SELECT count(*) FROM un_err) AS error_rows;
SELECT dedup.disable('un_skip'), dedup.disable('un_err');
DROP TABLE un_skip, un_err;
-- What a covering index INCLUDEs is no key: duplicate_of holds the primary key's
-- column alone, and an upsert on a unique column with INCLUDEd ones is an update.
-- A unique index NULLS NOT DISTINCT conflicts on NULL; a deferrable one takes no
-- upsert (ON CONFLICT does not use it), so a copy is refused there.
CREATE TABLE inc_pk (id int, src text, body text, PRIMARY KEY (id) INCLUDE (src));
SELECT dedup.enable('inc_pk', 'body');
SELECT format_type(atttypid, atttypmod) AS duplicate_of_type FROM pg_attribute
WHERE attrelid = 'inc_pk'::regclass AND attname = 'duplicate_of';
INSERT INTO inc_pk VALUES (1, 'a', 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра.');
INSERT INTO inc_pk VALUES (2, 'b', 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра.');
UPDATE inc_pk SET src = 'z' WHERE id = 1;
SELECT id, duplicate_of, dedup_verdict FROM inc_pk ORDER BY id;
SELECT dedup.disable('inc_pk');
DROP TABLE inc_pk;
CREATE TABLE inc_un (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, url text, title text, body text, UNIQUE (url) INCLUDE (title));
CREATE TABLE nnd_un (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, slot int, body text, UNIQUE NULLS NOT DISTINCT (slot));
CREATE TABLE def_un (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, pos int UNIQUE DEFERRABLE INITIALLY DEFERRED, body text);
SELECT dedup.enable('inc_un', 'body', action => 'skip'), dedup.enable('nnd_un', 'body', action => 'skip'),
       dedup.enable('def_un', 'body', action => 'error');
INSERT INTO inc_un (url, title, body) VALUES ('/a', 'A', 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра.'),
                                             ('/k', 'K', 'Футбольный клуб Спартак выиграл у Зенита со счетом 2:1 в центральном матче тура.');
INSERT INTO inc_un (url, title, body) VALUES ('/k', 'K2', 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра.')
  ON CONFLICT (url) DO UPDATE SET title = excluded.title, body = excluded.body;
SELECT url, title, duplicate_of, dedup_verdict FROM inc_un ORDER BY url;
INSERT INTO nnd_un (slot, body) VALUES (7, 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра.'),
                                       (NULL, 'Футбольный клуб Спартак выиграл у Зенита со счетом 2:1 в центральном матче тура.');
INSERT INTO nnd_un (slot, body) VALUES (NULL, 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра.')
  ON CONFLICT (slot) DO UPDATE SET body = excluded.body;
SELECT slot, duplicate_of, dedup_verdict FROM nnd_un ORDER BY slot NULLS LAST;
INSERT INTO def_un (pos, body) VALUES (1, 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра.');
SELECT err($$INSERT INTO def_un (pos, body) VALUES (1, 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра.')$$);
SELECT count(*) AS def_rows FROM def_un;
SELECT dedup.disable('inc_un'), dedup.disable('nnd_un'), dedup.disable('def_un');
DROP TABLE inc_un, nnd_un, def_un;

-- A row inserted under the key of a deleted original, which its copies still
-- name, takes that original's place: no cycle of marks, one original.
CREATE TABLE cyc (id int PRIMARY KEY, body text);
SELECT dedup.enable('cyc', 'body');
INSERT INTO cyc VALUES (1, 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра.');
INSERT INTO cyc VALUES (2, 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра.');
DELETE FROM cyc WHERE id = 1;
INSERT INTO cyc VALUES (3, 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра.');
INSERT INTO cyc VALUES (1, 'Мэрия Москвы открыла новый парк площадью 12 гектаров в районе Марьино, сообщил заммэра.');
SELECT id, duplicate_of, dedup_verdict FROM cyc ORDER BY id;
SELECT key, is_original FROM dedup.groups('cyc') ORDER BY key;
SELECT dedup.disable('cyc');
DROP TABLE cyc;

-- A text time column holding what is not a time: a WARNING, and the row is
-- checked as one without a time (it was 22007, the insert lost).
CREATE TABLE ttext (id int PRIMARY KEY, body text, pub text);
SELECT dedup.enable('ttext', 'body', published_at => 'pub');
INSERT INTO ttext VALUES (1, 'Синоптики обещают снег и гололед в Казани в выходные, ветер до двадцати метров.', '');
INSERT INTO ttext VALUES (2, 'Синоптики обещают снег и гололед в Казани в выходные, ветер до двадцати метров.', 'not a date'),
                         (3, 'Синоптики обещают снег и гололед в Казани в выходные, ветер до двадцати метров.', '2024-01-01 10:00+00');
SELECT id, pub, duplicate_of, dedup_verdict FROM ttext ORDER BY id;
SELECT dedup.disable('ttext');
DROP TABLE ttext;

-- A float key under a writer's extra_float_digits below 1: duplicate_of names
-- the row (the key was rounded to one no row has).
CREATE TABLE fkey (id float8 PRIMARY KEY, body text);
SELECT dedup.enable('fkey', 'body');
SET extra_float_digits = -15;
INSERT INTO fkey VALUES (0.1234567890123456789, 'Курс доллара на Московской бирже вырос до 92 рублей за день торгов.'),
                        (3, 'Курс доллара на Московской бирже вырос до 92 рублей за день торгов.');
SHOW extra_float_digits;
RESET extra_float_digits;
SELECT count(*) AS rows, count(*) FILTER (WHERE duplicate_of = (SELECT min(id) FROM fkey)) AS marked_right FROM fkey;
-- The same for enable's backfill (enable runs with extra_float_digits = 3).
SELECT dedup.disable('fkey');
SET extra_float_digits = -15;
SELECT dedup.enable('fkey', 'body');
RESET extra_float_digits;
SELECT count(*) AS rows, count(*) FILTER (WHERE duplicate_of IN (SELECT id FROM fkey)) AS marks_naming_a_row FROM fkey;
-- And for the analyst functions, whose keys travel as text: two keys that print
-- alike at extra_float_digits 0 stay two rows, each named exactly.
INSERT INTO fkey VALUES (0.1::float8 + 0.2::float8, 'Курс доллара на Московской бирже вырос до 92 рублей за день торгов.'),
                        (0.3, 'Курс доллара на Московской бирже вырос до 92 рублей за день торгов.');
SET extra_float_digits = 0;
SELECT a, b, verdict FROM dedup.pairs('fkey') WHERE a::float8 < 1 AND b::float8 < 1 ORDER BY 1, 2;
SELECT key, is_original FROM dedup.groups('fkey') WHERE key::float8 < 1 ORDER BY 1;
SELECT pairs FROM dedup.matrix_quality('fkey');
SELECT key FROM dedup.find_original('fkey', dedup.to_document('Курс доллара на Московской бирже вырос до 92 рублей за день торгов.'));
SELECT key FROM dedup.candidates('fkey', dedup.signature(dedup.to_document('Курс доллара на Московской бирже вырос до 92 рублей за день торгов.'), 'fkey'))
 WHERE key::float8 < 1 ORDER BY 1;
RESET extra_float_digits;
DROP TABLE fkey;

-- A REINDEX ... CONCURRENTLY of the extension's statistics table gives it a new
-- primary key index: a session that read the statistics before reads them after
-- (it kept the old index's OID and every insert failed with XX000).
CREATE TABLE rx (id int PRIMARY KEY, body text);
SELECT dedup.enable('rx', 'body');
INSERT INTO rx VALUES (1, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.');
REINDEX INDEX CONCURRENTLY dedup.collection_stats_pkey;
INSERT INTO rx VALUES (2, 'Курс евро на Московской бирже упал до 99 рублей. Аналитики ждут решения ЦБ.');
REINDEX TABLE CONCURRENTLY dedup.collection_stats;
INSERT INTO rx VALUES (3, 'Курс евро на Московской бирже упал до 99 рублей. Аналитики ждут решения ЦБ.');
SELECT id, duplicate_of FROM rx ORDER BY id;
SELECT dedup.disable('rx');
DROP TABLE rx;

-- Keys with several text forms are compared by value. A numeric row inserted as
-- 1.0 under the key of a deleted original 1, which its copy still names, takes
-- that original's place (it closed a cycle of marks: 1.0 → 2, 2 → 1).
CREATE TABLE nkey (id numeric PRIMARY KEY, body text);
SELECT dedup.enable('nkey', 'body');
INSERT INTO nkey VALUES (1, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.'),
                        (2, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.');
DELETE FROM nkey WHERE id = 1;
INSERT INTO nkey VALUES (1.0, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.');
SELECT id, duplicate_of FROM nkey ORDER BY id;
-- An original whose key was re-spelled (an UPDATE from 3 to 3.00) and whose text
-- is then edited is not marked as a copy of itself through its copy.
INSERT INTO nkey VALUES (3, 'Курс евро на Московской бирже упал до 99 рублей. Аналитики ждут решения ЦБ по ставке.'),
                        (4, 'Курс евро на Московской бирже упал до 99 рублей. Аналитики ждут решения ЦБ по ставке.');
UPDATE nkey SET id = 3.00 WHERE id = 3;
UPDATE nkey SET body = body || ' Торги закрылись.' WHERE id = 3;
SELECT id, duplicate_of FROM nkey WHERE id >= 3 ORDER BY id;
SELECT dedup.disable('nkey');
DROP TABLE nkey;

-- The key of a skipped row's original is stored in one style: it names the same
-- row in a session with other DateStyle and TimeZone settings.
CREATE TABLE tskey (published timestamptz PRIMARY KEY, body text);
SELECT dedup.enable('tskey', 'body', action => 'skip');
SET DateStyle = 'SQL, DMY';
SET TimeZone = 'Asia/Tokyo';
INSERT INTO tskey VALUES ('2024-03-04 10:00+00', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.'),
                         ('2024-03-05 10:00+00', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.');
RESET DateStyle;
RESET TimeZone;
SELECT r.original_key, t.published IS NOT NULL AS names_the_row
  FROM dedup.rejected_rows r LEFT JOIN tskey t ON t.published = r.original_key::timestamptz
 WHERE r.tbl = 'tskey'::regclass;
SELECT dedup.disable('tskey');
DROP TABLE tskey;
-- The stored form itself: NULL stays NULL; a session's styles do not show
-- (money in the C locale whatever lc_monetary says).
SET DateStyle = 'SQL, DMY';
SET TimeZone = 'Asia/Tokyo';
SET extra_float_digits = 0;
SELECT dedup._key_text(NULL::numeric) IS NULL AS null_stays,
       dedup._key_text('2024-03-04 19:00+09'::timestamptz) AS ts,
       dedup._key_text('2024-03-04'::date) AS d,
       dedup._key_text(0.1::float8 + 0.2::float8) AS f,
       dedup._key_text(ROW(1.50, 'x')) AS r,
       dedup._key_text(1234.5::money) AS m;
RESET DateStyle;
RESET TimeZone;
RESET extra_float_digits;

-- A table with pg_dedup's triggers but no registration (restored alone with
-- pg_dump -t, say) stores its rows unchecked: a WARNING once per statement, none
-- in a restoring session (empty search_path); disable cleans it, enable checks it.
CREATE TABLE lost (id int PRIMARY KEY, body text);
SELECT dedup.enable('lost', 'body');
DELETE FROM dedup.enabled_tables WHERE tbl = 'lost'::regclass;
DELETE FROM dedup.collection_tables WHERE tbl = 'lost'::regclass;
INSERT INTO lost VALUES (1, 'Курс доллара на Московской бирже вырос до 92 рублей.'),
                        (2, 'Курс доллара на Московской бирже вырос до 92 рублей.');
SET search_path = '';
INSERT INTO public.lost VALUES (3, 'Курс евро на Московской бирже упал до 99 рублей.');
RESET search_path;
SELECT dedup.disable('lost');
SELECT dedup.enable('lost', 'body');
SELECT id, duplicate_of FROM lost ORDER BY id;
SELECT dedup.disable('lost');
DROP TABLE lost;
