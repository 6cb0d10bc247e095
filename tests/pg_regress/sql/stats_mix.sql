-- The collection statistics equal a fresh count of the table after any mix of
-- writes: INSERT (plain, ON CONFLICT DO NOTHING, ON CONFLICT DO UPDATE, rows a
-- later BEFORE trigger drops), UPDATE of the text or of dedup_doc directly, DELETE,
-- TRUNCATE, savepoints rolled back and transactions rolled back. A seeded random
-- mix runs in a procedure that commits as it goes and compares after each commit.
SET client_min_messages = warning;
CREATE TABLE mix (id int PRIMARY KEY, body text);
CREATE TABLE mix_skip (id int PRIMARY KEY, body text);
SELECT dedup.enable('mix', 'body') AS backfilled;
SELECT dedup.enable('mix_skip', 'body', action => 'skip') AS backfilled;

-- A later BEFORE trigger that drops some rows (its name sorts after dedup_trigger).
CREATE FUNCTION drop_some() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.body LIKE '%выброс%' THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER zz_drop_some BEFORE INSERT OR UPDATE ON mix FOR EACH ROW EXECUTE FUNCTION drop_some();
CREATE TRIGGER zz_drop_some BEFORE INSERT OR UPDATE ON mix_skip FOR EACH ROW EXECUTE FUNCTION drop_some();

-- Whether a collection's statistics equal the aggregate of its table's documents
-- (every term's df and cf, N and the total length).
CREATE FUNCTION stats_right(tbl regclass) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    agg jsonb;
    coll int := (SELECT collection_id FROM dedup.enabled_tables WHERE enabled_tables.tbl = stats_right.tbl);
    ok boolean;
BEGIN
    EXECUTE format('SELECT coalesce(dedup.term_stats_agg(dedup_doc), ''{"n_docs":0,"total_len":0,"terms":{}}'') FROM %s', tbl)
        INTO agg;
    SELECT s.n_docs = (agg->>'n_docs')::bigint AND s.total_len = (agg->>'total_len')::bigint
    INTO ok FROM dedup.collection_stats s WHERE s.collection_id = coll;
    RETURN ok AND NOT EXISTS (
        (SELECT term, df, cf FROM dedup.term_stats WHERE collection_id = coll AND df <> 0
         EXCEPT
         SELECT key, (value->>0)::bigint, (value->>1)::bigint FROM jsonb_each(agg->'terms'))
        UNION ALL
        (SELECT key, (value->>0)::bigint, (value->>1)::bigint FROM jsonb_each(agg->'terms')
         EXCEPT
         SELECT term, df, cf FROM dedup.term_stats WHERE collection_id = coll AND df <> 0));
END $$;

-- A text of 4 to 12 words from a small vocabulary (so reprints happen), sometimes
-- with the word the dropping trigger looks for.
CREATE FUNCTION rnd_text() RETURNS text LANGUAGE sql AS $$
    SELECT string_agg((ARRAY['рубль','доллар','биржа','нефть','ставка','банк','рост','падение',
                             'торги','акции','индекс','инфляция','бюджет','налог','экспорт',
                             'импорт','курс','спрос','цена','рынок'])[1 + floor(random() * 20)::int], ' ')
           || CASE WHEN random() < 0.1 THEN ' выброс' ELSE '' END
    FROM generate_series(1, 4 + floor(random() * 9)::int)
$$;

CREATE TABLE mix_log (step int, tbl text, op text, stats_right boolean);

CREATE PROCEDURE run_mix(tbl regclass, steps int) LANGUAGE plpgsql AS $$
DECLARE
    op int;
    k int;
BEGIN
    FOR i IN 1..steps LOOP
        op := floor(random() * 12)::int;
        k := 1 + floor(random() * 40)::int;
        CASE op
        WHEN 0, 1 THEN
            EXECUTE format('INSERT INTO %s VALUES ($1, $2) ON CONFLICT DO NOTHING', tbl) USING k, rnd_text();
        WHEN 2 THEN
            EXECUTE format('INSERT INTO %s SELECT g, rnd_text() FROM generate_series($1, $1 + 5) g ON CONFLICT DO NOTHING', tbl) USING k;
        WHEN 3 THEN
            EXECUTE format('INSERT INTO %s VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET body = excluded.body', tbl) USING k, rnd_text();
        WHEN 4 THEN
            EXECUTE format('INSERT INTO %s SELECT g, rnd_text() FROM generate_series($1, $1 + 3) g '
                           'ON CONFLICT (id) DO UPDATE SET body = excluded.body', tbl) USING k;
        WHEN 5 THEN
            EXECUTE format('UPDATE %s SET body = rnd_text() WHERE id BETWEEN $1 AND $1 + 2', tbl) USING k;
        WHEN 6 THEN
            EXECUTE format('UPDATE %s t SET dedup_doc = (SELECT dedup_doc FROM %s WHERE id <> t.id AND dedup_doc IS NOT NULL LIMIT 1) '
                           'WHERE id = $1', tbl, tbl) USING k;
        WHEN 7 THEN
            EXECUTE format('DELETE FROM %s WHERE id BETWEEN $1 AND $1 + 1', tbl) USING k;
        WHEN 8 THEN
            BEGIN
                EXECUTE format('INSERT INTO %s SELECT g, rnd_text() FROM generate_series($1, $1 + 2) g ON CONFLICT DO NOTHING', tbl) USING k + 100;
                EXECUTE format('UPDATE %s SET body = rnd_text() WHERE id = $1', tbl) USING k;
                RAISE EXCEPTION 'roll the savepoint back';
            EXCEPTION WHEN raise_exception THEN
                NULL;
            END;
        WHEN 9 THEN
            EXECUTE format('INSERT INTO %s VALUES ($1, $2) ON CONFLICT DO NOTHING', tbl) USING k + 200, rnd_text();
            ROLLBACK;
            CONTINUE;
        WHEN 10 THEN
            IF random() < 0.15 THEN
                EXECUTE format('TRUNCATE %s', tbl);
            END IF;
        ELSE
            EXECUTE format('INSERT INTO %s VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET id = excluded.id', tbl) USING k, rnd_text();
        END CASE;
        IF i % 5 = 0 THEN
            COMMIT;
            INSERT INTO mix_log VALUES (i, tbl::text, op::text, stats_right(tbl));
            COMMIT;
        END IF;
    END LOOP;
    COMMIT;
END $$;

SELECT setseed(0.42);
CALL run_mix('mix', 300);
SELECT setseed(0.43);
CALL run_mix('mix_skip', 300);

-- Every check after a commit found the statistics right.
SELECT tbl, count(*) AS checks, count(*) FILTER (WHERE NOT stats_right) AS wrong
FROM mix_log GROUP BY tbl ORDER BY tbl;
SELECT stats_right('mix') AS mix_right, stats_right('mix_skip') AS mix_skip_right;
-- The mix did drop rows and reach both kinds of upsert.
SELECT (SELECT count(*) FROM mix) > 0 AS rows_left,
       (SELECT count(*) FROM dedup.rejected WHERE tbl = 'mix_skip'::regclass) >= 0 AS rejected_listed;

-- A TRUNCATE rolled back to a savepoint: the rows inserted before the savepoint
-- stay counted (the TRUNCATE's recompute goes with the savepoint); released, the
-- recompute stands.
CREATE TABLE tr_sp (id int PRIMARY KEY, body text);
SELECT dedup.enable('tr_sp', 'body') AS backfilled;
BEGIN;
INSERT INTO tr_sp VALUES (1, 'погода в москве и движение по реке сегодня'), (2, 'выборы в регионе и новый губернатор');
SAVEPOINT a;
TRUNCATE tr_sp;
INSERT INTO tr_sp VALUES (3, 'биржа нефть рубль');
ROLLBACK TO a;
INSERT INTO tr_sp VALUES (4, 'рубль доллар биржа нефть');
COMMIT;
SELECT count(*) AS rows, stats_right('tr_sp') AS right_after_rollback_to_savepoint FROM tr_sp;
BEGIN;
INSERT INTO tr_sp VALUES (5, 'снег в петербурге');
SAVEPOINT a;
TRUNCATE tr_sp;
INSERT INTO tr_sp VALUES (6, 'биржа нефть рубль');
RELEASE a;
COMMIT;
SELECT count(*) AS rows, stats_right('tr_sp') AS right_after_release FROM tr_sp;
-- The same for the transaction's changes written early by flush_stats.
BEGIN;
INSERT INTO tr_sp VALUES (7, 'мост через реку откроют в мае');
SAVEPOINT a;
SELECT dedup.flush_stats('tr_sp') >= 0 AS flushed;
ROLLBACK TO a;
COMMIT;
SELECT count(*) AS rows, stats_right('tr_sp') AS right_after_a_flush_rolled_back FROM tr_sp;
SELECT dedup.disable('tr_sp');
DROP TABLE tr_sp;

-- MERGE (PostgreSQL 15): its inserts are checked and its updates and deletes
-- followed, as the plain statements' are; a rolled-back savepoint takes its rows'
-- changes with it; under 'skip' its copies go to dedup.rejected. (Row 2, stored
-- again with its own text, keeps its mark, though the same MERGE deletes row 1:
-- a mark is not a foreign key.)
CREATE TABLE mg (id int PRIMARY KEY, body text);
SELECT dedup.enable('mg', 'body') AS backfilled;
CREATE TABLE mg_src (id int, body text);
INSERT INTO mg_src VALUES (1, 'Мост через реку откроют в мае после ремонта пролётов и опор.'),
                          (2, 'Мост через реку откроют в мае после ремонта пролётов и опор.'),
                          (3, 'Выборы губернатора назначены на сентябрь, сообщил избирком области.');
MERGE INTO mg t USING mg_src s ON t.id = s.id
WHEN MATCHED THEN UPDATE SET body = s.body
WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.body);
SELECT id, duplicate_of, dedup_verdict FROM mg ORDER BY id;
UPDATE mg_src SET body = 'Курс доллара вырос до 92 рублей на Московской бирже в пятницу.' WHERE id = 3;
INSERT INTO mg_src VALUES (4, 'Курс доллара вырос до 92 рублей на Московской бирже в пятницу.');
MERGE INTO mg t USING mg_src s ON t.id = s.id
WHEN MATCHED AND s.id = 1 THEN DELETE
WHEN MATCHED THEN UPDATE SET body = s.body
WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.body);
SELECT id, duplicate_of, dedup_verdict FROM mg ORDER BY id;
SELECT stats_right('mg') AS right_after_merge;
BEGIN;
MERGE INTO mg t USING (SELECT 5 AS id, 'Снег ожидается в Петербурге в выходные, предупредили синоптики.' AS body) s
ON t.id = s.id WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.body);
SAVEPOINT x;
MERGE INTO mg t USING (SELECT 6 AS id, 'Снег ожидается в Петербурге в выходные.' AS body) s
ON t.id = s.id WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.body);
ROLLBACK TO x;
COMMIT;
SELECT count(*) AS rows, stats_right('mg') AS right_after_merge_in_savepoint FROM mg;
CREATE TABLE mg_skip (id int PRIMARY KEY, body text);
SELECT dedup.enable('mg_skip', 'body', action => 'skip') AS backfilled;
MERGE INTO mg_skip t USING mg_src s ON t.id = s.id WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.body);
SELECT id, dedup_verdict FROM mg_skip ORDER BY id;
SELECT count(*) AS rejected, stats_right('mg_skip') AS skip_right FROM dedup.rejected WHERE tbl = 'mg_skip'::regclass;
SELECT dedup.disable('mg'), dedup.disable('mg_skip');
DROP TABLE mg, mg_skip, mg_src;

-- A statement whose row trigger was disabled by hand is not followed (its rows
-- are not all taken for dropped).
ALTER TABLE mix DISABLE TRIGGER dedup_row_stored;
INSERT INTO mix VALUES (1000, 'рубль доллар биржа нефть');
ALTER TABLE mix ENABLE TRIGGER dedup_row_stored;
SELECT stats_right('mix') AS right_with_the_after_trigger_disabled;

-- A relcache invalidation between the last row and the commit (ANALYZE or ALTER
-- TABLE in the loading transaction) used to make the commit fail: the statistics
-- write looked up the extension's owner again without a snapshot.
BEGIN;
INSERT INTO mix VALUES (1001, 'нефть ставка банк рост торги');
ANALYZE mix;
COMMIT;
BEGIN;
INSERT INTO mix VALUES (1002, 'акции индекс инфляция бюджет налог');
ALTER TABLE mix ADD COLUMN extra int;
COMMIT;
SELECT stats_right('mix') AS right_after_analyze_and_alter_in_the_transaction;

-- Documents of more distinct terms than one statement reads or writes (10,000):
-- the term lookups and the upserts go in slices, which must line up. Written at
-- once (a batch of 1) and through pending rows (a batch of 2); the second document
-- shares 5,000 terms with the first, and exactly those weigh less; then a copy of
-- each is found as a duplicate and removed again.
CREATE TABLE wide (id int PRIMARY KEY, body text);
SELECT dedup.enable('wide', 'body', collection => 'wide') AS backfilled;
CREATE FUNCTION wide_text(seed int, first int, last int) RETURNS text LANGUAGE sql AS $$
    SELECT string_agg('w' || md5(seed::text || ':' || i::text), ' ') FROM generate_series(first, last) i
$$;
INSERT INTO wide VALUES (1, wide_text(1, 1, 25000));
SELECT stats_right('wide') AS wide_right_at_once,
       (SELECT count(*) FROM dedup.term_stats t JOIN dedup.collections c ON c.id = t.collection_id
        WHERE c.name = 'wide') AS terms;
SET dedup.stats_batch = 2;
INSERT INTO wide VALUES (2, wide_text(1, 20001, 25000) || ' ' || wide_text(2, 1, 18000));
INSERT INTO wide VALUES (3, 'a short text of a few words about the weather');
SELECT dedup.flush_stats('wide') >= 0 AS folded;
RESET dedup.stats_batch;
SELECT stats_right('wide') AS wide_right_through_pending_rows;
SELECT count(*) AS terms, count(DISTINCT round(w.weight::numeric, 9)) AS weights,
       bool_and((w.weight < m.top) = (w.term IN (SELECT term FROM dedup.weights((SELECT dedup_doc FROM wide WHERE id = 1), 'wide'))))
         AS shared_terms_weigh_less
FROM dedup.weights((SELECT dedup_doc FROM wide WHERE id = 2), 'wide') w,
     (SELECT max(weight) AS top FROM dedup.weights((SELECT dedup_doc FROM wide WHERE id = 2), 'wide')) m;
INSERT INTO wide VALUES (11, wide_text(1, 1, 25000)), (12, wide_text(1, 20001, 25000) || ' ' || wide_text(2, 1, 18000));
SELECT id, duplicate_of, dedup_verdict FROM wide WHERE id > 10 ORDER BY id;
DELETE FROM wide WHERE id > 10;
SELECT stats_right('wide') AS wide_right_after_delete;
SELECT dedup.disable('wide');
DROP TABLE wide;
DROP FUNCTION wide_text(int, int, int);

DROP PROCEDURE run_mix(regclass, int);
SELECT dedup.disable('mix'), dedup.disable('mix_skip');
DROP TABLE mix, mix_skip, mix_log;
DROP FUNCTION drop_some(), stats_right(regclass), rnd_text();

-- Data-modifying CTEs: the statements of one query start as they run and end
-- together at its end, one's rows between another's; a statement with rows that
-- were not stored (ON CONFLICT) rebuilds its own changes and keeps the others'.
-- (Counted wrong before: the CTE's rows were taken for the outer statement's.)
CREATE TABLE cte_t (id int PRIMARY KEY, body text);  SELECT dedup.enable('cte_t','body');
CREATE TABLE cte_u (id int PRIMARY KEY, body text);  SELECT dedup.enable('cte_u','body', collection => 'cte_t');
CREATE FUNCTION chk(label text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE n bigint; d bigint; BEGIN
  PERFORM dedup.flush_stats('cte_t');
  SELECT s.n_docs INTO n FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'cte_t';
  SELECT (SELECT count(dedup_doc) FROM cte_t) + (SELECT count(dedup_doc) FROM cte_u) INTO d;
  RETURN label || ': stats ' || n || ' rows ' || d; END $$;
INSERT INTO cte_t SELECT i, 'заметка номер '||i||' о ремонте дорог '||md5(i::text) FROM generate_series(1,10) i;
SELECT chk('base');
WITH ins AS (INSERT INTO cte_t VALUES (11,'совсем новый текст о погоде в Казани'),(1,'x') ON CONFLICT DO NOTHING RETURNING id)
UPDATE cte_t SET body = 'другой текст о футболе и хоккее в Москве' WHERE id = 2;
SELECT chk('cte insert + update same table');
WITH ins AS (INSERT INTO cte_t VALUES (12,'ещё один новый текст о погоде в Самаре'),(3,'y') ON CONFLICT DO NOTHING RETURNING id)
INSERT INTO cte_t SELECT id + 100, 'копия ' || id FROM ins;
SELECT chk('cte insert read by insert same table');
WITH a AS (INSERT INTO cte_t VALUES (13,'текст тринадцать о реке'),(4,'z') ON CONFLICT DO NOTHING RETURNING id)
INSERT INTO cte_u VALUES (1, 'текст в другой таблице о мосте'), (1, 'dup key') ON CONFLICT DO NOTHING;
SELECT chk('cte insert + insert other table');
WITH a AS (INSERT INTO cte_t VALUES (14,'текст четырнадцать о лесе'),(5,'z') ON CONFLICT DO NOTHING RETURNING id, body)
INSERT INTO cte_u SELECT id + 200, body FROM a UNION ALL SELECT 1, 'dup' ON CONFLICT DO NOTHING;
SELECT chk('cte read by insert other table');
SET client_min_messages = warning;
SELECT dedup.recompute('cte_t') IS NOT NULL AS recomputed;
RESET client_min_messages;
SELECT chk('after recompute');
SELECT dedup.disable('cte_t'), dedup.disable('cte_u');
DROP TABLE cte_t, cte_u;
DROP FUNCTION chk(text);

-- A small upsert into a table whose rows another statement writes (an audit
-- trigger): the statement's changes are rebuilt from its rows, with the nested
-- statement's kept, instead of recomputing the whole collection (which rewrote
-- and locked every row of it).
CREATE TABLE aud (id int PRIMARY KEY, body text, touched int DEFAULT 0);
CREATE TABLE aud_log (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, aud_id int, body text);
SELECT dedup.enable('aud', 'body'), dedup.enable('aud_log', 'body', collection => 'aud');
CREATE FUNCTION aud_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO aud_log (aud_id, body) VALUES (NEW.id, NEW.body); RETURN NULL; END $$;
CREATE TRIGGER aud_log AFTER INSERT ON aud FOR EACH ROW EXECUTE FUNCTION aud_log();
CREATE FUNCTION aud_touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.touched := OLD.touched + 1; RETURN NEW; END $$;
CREATE TRIGGER aud_touch BEFORE UPDATE ON aud FOR EACH ROW EXECUTE FUNCTION aud_touch();
INSERT INTO aud (id, body) SELECT i, 'заметка номер ' || i || ' о ремонте дорог ' || md5(i::text) FROM generate_series(1, 200) AS i;
INSERT INTO aud (id, body) VALUES (6, 'x'), (4000, 'совсем новая заметка о реках и мостах')
  ON CONFLICT (id) DO UPDATE SET touched = aud.touched;
SELECT count(*) FILTER (WHERE touched > 0) AS rows_updated, count(*) AS rows FROM aud;
SELECT dedup.flush_stats('aud') >= 0 AS flushed;
SELECT s.n_docs = (SELECT count(dedup_doc) FROM aud) + (SELECT count(dedup_doc) FROM aud_log) AS documents_counted_right
FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'aud';
SELECT dedup.disable('aud'), dedup.disable('aud_log');
DROP TABLE aud, aud_log;
DROP FUNCTION aud_log(), aud_touch();
-- A prepared transaction appends its statistics as a pending row, whatever the
-- batch: upserted, the term rows stayed locked until COMMIT PREPARED, so every
-- writer of those words waited (row 2 shares one word with row 1 and is no
-- candidate of it; a near-copy still waits, as for a unique index) (a logical replication worker applying two-phase
-- transactions waited for itself, for good). The collection's next commit has
-- the fold worker fold the row once it is committed (a fold inside that commit,
-- after its own term rows, could deadlock with another such commit).
CREATE TABLE prep (id int PRIMARY KEY, body text);
SELECT dedup.enable('prep', 'body');
BEGIN;
INSERT INTO prep VALUES (1, 'Мэрия объявила конкурс на реконструкцию набережной реки и старого порта.');
PREPARE TRANSACTION 'regress_dedup_prep';
SET lock_timeout = '5s';
INSERT INTO prep VALUES (2, 'Мэрия открыла в парке новый каток для детей и взрослых.');
RESET lock_timeout;
COMMIT PREPARED 'regress_dedup_prep';
SELECT count(*) AS pending_rows FROM dedup.term_stats_pending p JOIN dedup.collections c ON c.id = p.collection_id
WHERE c.name = 'prep';
INSERT INTO prep VALUES (3, 'Совсем другая новость о погоде: в выходные ожидается снег.');
SELECT wait_folded('prep');
SELECT count(*) AS pending_rows FROM dedup.term_stats_pending p JOIN dedup.collections c ON c.id = p.collection_id
WHERE c.name = 'prep';
SELECT s.n_docs, (SELECT count(*) FROM dedup.term_stats t WHERE t.collection_id = c.id AND t.term = 'мэр' AND t.df = 2) AS df_right
FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'prep';
SELECT dedup.disable('prep');
DROP TABLE prep;
-- A rolled-back transaction and the backend's term cache (kept across
-- transactions): one that wrote no statistics rows leaves the cache as it was
-- (its own changes are added at each lookup, never cached); one that did empties
-- it (here flush_stats after an UPDATE that moves a word's df without changing N,
-- read into the cache of a new connection by its first weighing). Each is
-- followed by the same weighing in a new connection.
CREATE TABLE rbc (id int PRIMARY KEY, body text);
SELECT dedup.enable('rbc', 'body');
INSERT INTO rbc SELECT g, 'alpha bravo charlie story number ' || g FROM generate_series(1, 120) g;
CREATE FUNCTION rbc_weights() RETURNS text LANGUAGE sql AS
$$SELECT string_agg(term || ' ' || round(weight::numeric, 3), ', ' ORDER BY term)
  FROM dedup.weights(dedup.to_document('alpha zulu'), 'rbc')$$;
\c
SELECT rbc_weights() AS cached;
BEGIN;
INSERT INTO rbc VALUES (121, 'zulu zulu zulu');
SELECT rbc_weights() AS with_own_row;
ROLLBACK;
SELECT rbc_weights() AS after_rollback;
\c
SELECT rbc_weights() AS new_connection;
\c
BEGIN;
UPDATE rbc SET body = replace(body, 'alpha', 'zulu');
SELECT dedup.flush_stats('rbc');
SELECT rbc_weights() AS flushed_in_transaction;
ROLLBACK;
SELECT rbc_weights() AS after_rollback_of_a_flush;
\c
SELECT rbc_weights() AS new_connection;
SELECT dedup.disable('rbc');
DROP TABLE rbc;
DROP FUNCTION rbc_weights();
