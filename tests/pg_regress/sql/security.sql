-- Privileges: an application role with rights on its own table only.
CREATE ROLE regress_dedup_app LOGIN;
CREATE ROLE regress_dedup_reader LOGIN;
CREATE TABLE sec_mark (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body text);
CREATE TABLE sec_skip (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body text);
CREATE TABLE sec_error (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body text);
SELECT dedup.enable('sec_mark', 'body');
SELECT dedup.enable('sec_skip', 'body', action => 'skip');
SELECT dedup.enable('sec_error', 'body', action => 'error');
GRANT SELECT, INSERT, UPDATE, DELETE ON sec_mark TO regress_dedup_app;
GRANT INSERT ON sec_skip, sec_error TO regress_dedup_app;
-- A schema early on the writer's search_path whose functions must never be called.
CREATE SCHEMA regress_evil;
CREATE FUNCTION regress_evil.unnest(anyarray) RETURNS SETOF anyelement LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION 'regress_evil.unnest called'; END $$;
CREATE FUNCTION regress_evil.lower(text) RETURNS text LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION 'regress_evil.lower called'; END $$;
GRANT USAGE ON SCHEMA regress_evil TO PUBLIC;

SET ROLE regress_dedup_app;
SET search_path = regress_evil, pg_catalog, public;
-- 'mark': insert, a reprint, an update and a delete, each its own transaction.
INSERT INTO sec_mark (body) VALUES
 ('Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке. Эксперты ожидают ослабления рубля.');
INSERT INTO sec_mark (body) VALUES
 ('Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке.');
INSERT INTO sec_mark (body) VALUES ('В Москве ожидается снег и гололед. Синоптики предупреждают о сильном ветре.');
SELECT id, duplicate_of, dedup_verdict FROM sec_mark ORDER BY id;
UPDATE sec_mark SET body = 'Футбольный клуб Спартак выиграл у Зенита со счетом 2:1.' WHERE id = 3;
DELETE FROM sec_mark WHERE id = 2;
-- A bulk INSERT ... SELECT and a COPY by the writer, each one transaction.
INSERT INTO sec_mark (body)
SELECT 'Сводка номер ' || i || ': в районе ' || (i % 7) || ' открыли объект ' || (i * 13) || '.' FROM generate_series(1, 200) AS i;
COPY sec_mark (body) FROM STDIN;
Сводка номер 1: в районе 1 открыли объект 13.
Совсем новый текст о погоде в Казани и снегопаде.
\.
SELECT count(*) AS bulk_rows, count(duplicate_of) AS marked FROM sec_mark WHERE id > 3;
DELETE FROM sec_mark WHERE id > 3;
-- The batch is superuser-only: it holds back every writer's statistics changes,
-- not only the session's (a writer's 1,000 kept a new collection at 0 documents).
SELECT err($$SET dedup.stats_batch = 1000$$);
SELECT err($$SET dedup.background_fold = off$$);
-- A batch of the writer's commits is folded by a background worker that runs as
-- the extension owner: the writer has no rights on the statistics tables.
RESET ROLE;
SET dedup.stats_batch = 2;
SET ROLE regress_dedup_app;
INSERT INTO sec_mark (body) VALUES ('Первая заметка о ремонте дорог в Самаре этим летом.');
INSERT INTO sec_mark (body) VALUES ('Вторая заметка о новом парке в Самаре и его открытии.');
RESET ROLE;
RESET dedup.stats_batch;
SET ROLE regress_dedup_app;
-- 'skip': the copy is kept out and recorded, with no rights on dedup.rejected.
INSERT INTO sec_skip (body) VALUES ('Новый мост через реку открыли в Казани после трех лет строительства.');
INSERT INTO sec_skip (body) VALUES ('Новый мост через реку открыли в Казани после трех лет строительства.');
-- 'error': 23505; without SELECT on the table the DETAIL does not name the key.
INSERT INTO sec_error (body) VALUES ('Театр представил премьеру сезона: постановку по роману Булгакова.');
SELECT err($$INSERT INTO sec_error (body) VALUES ('Театр представил премьеру сезона: постановку по роману Булгакова.')$$);
-- What the trigger enforces is the collection's: the writer's session settings
-- do not turn 'error' off.
-- (dedup.max_document_bytes is the superuser's to give: 42501.)
SELECT err($$SET dedup.max_document_bytes = '1GB'$$);
BEGIN;
SET LOCAL dedup.min_word_length = 64;
SET LOCAL dedup.min_shared_keys = 256;
SET LOCAL dedup.similarity_threshold = 1;
SELECT err($$INSERT INTO sec_error (body) VALUES ('Театр представил премьеру сезона: постановку по роману Булгакова.')$$);
ROLLBACK;
-- The extension's tables are not the writer's to read or change.
SELECT err($$DELETE FROM dedup.term_stats$$);
SELECT err($$UPDATE dedup.collection_stats SET n_docs = 0$$);
SELECT err($$INSERT INTO dedup.rejected (tbl, row_data) VALUES ('sec_mark', '{}')$$);
SELECT err($$UPDATE dedup.enabled_tables SET action = 'mark'$$);
SELECT err($$DELETE FROM dedup.models$$);
-- Nor the internal functions that change a collection's statistics.
SELECT err($$SELECT dedup._forget('sec_mark'::regclass, dedup.to_document('Курс доллара вырос.'))$$);
SELECT err($$SELECT dedup._count_partition('sec_mark'::regclass, 'sec_mark'::regclass, -1)$$);
-- Reading functions answer only a role that may read the whole table.
SELECT err($$SELECT dedup.is_duplicate('sec_skip', 'Новый мост через реку открыли в Казани после трех лет строительства.')$$);
SELECT err($$SELECT * FROM dedup.find_original('sec_skip', dedup.to_document('Новый мост через реку открыли в Казани.'))$$);
SELECT dedup.is_duplicate('sec_mark', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке.') AS reprint;
RESET search_path;
RESET ROLE;
SELECT wait_folded('sec_mark');
SELECT count(*) AS pending_rows FROM dedup.term_stats_pending p JOIN dedup.collections c ON c.id = p.collection_id
WHERE c.name = 'sec_mark';
DELETE FROM sec_mark WHERE id > 3;

-- The owner sees the key in the DETAIL; what the writer did is on record.
SELECT err($$INSERT INTO sec_error (body) VALUES ('Театр представил премьеру сезона: постановку по роману Булгакова.')$$);
SELECT id, duplicate_of, dedup_verdict FROM sec_mark ORDER BY id;
SELECT count(*) AS kept_out, min(original_key) AS original FROM dedup.rejected WHERE tbl = 'sec_skip'::regclass;
SELECT count(*) AS skip_rows FROM sec_skip;
-- The statistics the writer's transactions wrote equal a recompute.
SELECT s.n_docs = (SELECT (dedup.term_stats_agg(dedup_doc)->>'n_docs')::bigint FROM sec_mark) AS n_docs_right
FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'sec_mark';

-- Row-level security: a reader who sees only some rows may not ask.
ALTER TABLE sec_mark ENABLE ROW LEVEL SECURITY;
CREATE POLICY sec_mark_some ON sec_mark FOR SELECT USING (id > 2);
GRANT SELECT ON sec_mark TO regress_dedup_reader;
SET ROLE regress_dedup_reader;
SELECT err($$SELECT dedup.is_duplicate('sec_mark', 'Курс доллара на Московской бирже вырос до 92 рублей.')$$);
SELECT err($$SELECT * FROM dedup.pairs('sec_mark')$$);
SELECT err($$SELECT * FROM dedup.groups('sec_mark')$$);
SELECT err($$SELECT * FROM dedup.matrix_quality('sec_mark')$$);
SELECT count(*) AS collections_seen FROM dedup.status;
-- The configuration functions name the rights they need; the built-in model is
-- anyone's to export.
SELECT err($$SELECT dedup.export_model('sec_model')$$);
SELECT err($$SELECT dedup.add_document('sec_mark', dedup.to_document('текст'))$$);
SELECT err($$SELECT dedup.train('sec_model', 'sec_mark', 'SELECT NULL::dedup.document, NULL::dedup.document, true, true')$$);
SELECT err($$SELECT dedup.import_model(dedup.export_model('default') || '{"name": "sec_model"}')$$);
SELECT err($$SELECT dedup.learn_authority('sec_mark', 'SELECT NULL::dedup.document, NULL::dedup.document, true, true')$$);
SELECT dedup.export_model('default')->>'name' AS builtin_export;
RESET ROLE;
-- A tenant under row-level security who inserts a reprint of a row it cannot see
-- gets the mark, not the other row's key.
CREATE POLICY sec_mark_insert ON sec_mark FOR INSERT WITH CHECK (true);
GRANT INSERT ON sec_mark TO regress_dedup_reader;
SET ROLE regress_dedup_reader;
INSERT INTO sec_mark (body) VALUES
 ('Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке. Эксперты ожидают ослабления рубля.');
RESET ROLE;
SELECT id, duplicate_of, dedup_verdict FROM sec_mark WHERE id > 3 ORDER BY id;
DELETE FROM sec_mark WHERE id > 3;
-- dedup.candidates reads the table with the caller's rights: the owner finds row 1,
-- the reader (whose policy shows id > 2) does not.
SELECT dedup_sig AS sig1 FROM sec_mark WHERE id = 1 \gset
SELECT key FROM dedup.candidates('sec_mark', :'sig1', 10);
SET ROLE regress_dedup_reader;
SELECT count(*) AS reader_sees FROM dedup.candidates('sec_mark', :'sig1', 10);
RESET ROLE;
SET ROLE regress_dedup_app;
SELECT err($$SELECT key FROM dedup.candidates('sec_skip', 'imatch:{1}', 10)$$);
RESET ROLE;

-- Only a table's owner enables, disables or recomputes it, or joins it to a
-- collection whose tables it does not all own.
CREATE TABLE sec_theirs (id bigint PRIMARY KEY, body text);
GRANT ALL ON sec_theirs TO regress_dedup_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA dedup TO regress_dedup_app;
CREATE TABLE sec_own (id bigint PRIMARY KEY, body text);
ALTER TABLE sec_own OWNER TO regress_dedup_app;
SET ROLE regress_dedup_app;
SELECT err($$SELECT dedup.enable('sec_theirs', 'body')$$);
SELECT err($$SELECT dedup.disable('sec_mark')$$);
SELECT err($$SELECT dedup.recompute('sec_theirs', 'body', 'sec_mark')$$);
SELECT err($$SELECT dedup.enable('sec_own', 'body', collection => 'sec_mark')$$);
RESET ROLE;
REVOKE SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA dedup FROM regress_dedup_app;
DROP TABLE sec_theirs, sec_own;

-- A table's owner with no rights on dedup's tables enables, changes, recomputes
-- and disables its own table, as it would index it; reading a collection's
-- statistics takes reading its tables. The internal functions that write the
-- registration check the caller too.
CREATE ROLE regress_dedup_owner;
GRANT CREATE ON SCHEMA public TO regress_dedup_owner;
SET ROLE regress_dedup_owner;
CREATE TABLE sec_owned (id bigint PRIMARY KEY, body text, published_at timestamptz);
INSERT INTO sec_owned VALUES
 (1, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке.', '2026-01-01'),
 (2, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке.', '2026-01-02');
SELECT dedup.enable('sec_owned', 'body', published_at => 'published_at');
INSERT INTO sec_owned VALUES
 (3, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке.', '2026-01-03');
SELECT id, duplicate_of, dedup_verdict FROM sec_owned ORDER BY id;
SELECT dedup.set_time_window('sec_owned', interval '30 days');
SELECT dedup.recompute('sec_owned');
SELECT collection, documents FROM dedup.status;
SELECT count(*) AS weighed FROM dedup.weights(dedup.to_document('курс доллара вырос'), 'sec_owned');
-- filter_quality and evaluate likewise: the pairs query runs with the caller's
-- rights, and a collection's statistics are read once the caller may read them.
SELECT f.total_pairs, f.passing, f.duplicates_kept FROM dedup.filter_quality(
  $$SELECT a.dedup_doc, b.dedup_doc, 'sec_owned', true FROM sec_owned a, sec_owned b WHERE a.id < b.id$$) f;
SELECT err($$SELECT * FROM dedup.filter_quality('SELECT dedup.to_document(''курс''), dedup.to_document(''доллар''), ''sec_mark'', true')$$);
SELECT e.tp, e.fn FROM dedup.evaluate('default',
  $$SELECT a.dedup_doc, b.dedup_doc, true, true FROM sec_owned a, sec_owned b WHERE a.id < b.id$$) e;
SELECT err($$SELECT dedup.staleness('sec_mark')$$);
SELECT err($$SELECT dedup.recompute('sec_mark')$$);
SELECT err($$SELECT dedup._register_table('sec_mark'::regclass::oid, 'x', 'body', NULL, NULL, NULL, NULL, 'mark', NULL, 'id', NULL, NULL)$$);
SELECT err($$SELECT dedup._set_time_window('sec_mark'::regclass::oid, NULL)$$);
SELECT err($$SELECT dedup._unregister_table('sec_mark'::regclass::oid)$$);
-- A key of a domain type is refused: its CHECK would run with the extension
-- owner's rights when the extension reads keys back (also after a type change).
-- Rows the extension rewrites from a privileged context (a TRUNCATE's recompute
-- of the collection's other tables) fire the table's own triggers as its owner.
CREATE FUNCTION regress_spy(text) RETURNS boolean LANGUAGE sql AS $$ SELECT current_user = 'regress_dedup_owner' $$;
CREATE DOMAIN regress_key AS text CHECK (regress_spy(VALUE));
CREATE TABLE sec_domain (id regress_key PRIMARY KEY, body text);
SELECT err($$SELECT dedup.enable('sec_domain', 'body')$$);
CREATE TABLE sec_owned2 (id text PRIMARY KEY, body text);
SELECT dedup.enable('sec_owned2', 'body', collection => 'sec_owned');
CREATE TABLE sec_seen (who text);
CREATE FUNCTION regress_seen() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO public.sec_seen VALUES (current_user); RETURN NEW; END $$;
CREATE TRIGGER regress_seen BEFORE UPDATE ON sec_owned2 FOR EACH ROW EXECUTE FUNCTION regress_seen();
INSERT INTO sec_owned2 VALUES ('x', 'Совсем другой текст о погоде в Москве на выходных.');
ALTER TABLE sec_owned2 ALTER COLUMN id TYPE regress_key;
SELECT err($$INSERT INTO sec_owned2 VALUES ('y', 'Ещё один текст.')$$);
ALTER TABLE sec_owned2 ALTER COLUMN id TYPE text;
-- It folds its collection's pending changes (README's FAQ), and gets 42501 with
-- the grant to ask for from the configuration functions.
SELECT dedup.flush_stats('sec_owned') >= 0 AS flushed;
SELECT err($$SELECT dedup.flush_stats('sec_mark')$$);
SELECT err($$SELECT dedup.create_collection('sec_new')$$);
SELECT err($$SELECT dedup.set_collection_options('sec_owned', '{"min_shared_keys": 5}')$$);
SELECT err($$SELECT dedup.drop_collection('sec_owned')$$);
-- It reads the rows 'skip' kept out of its own table, and clears them; no one
-- else sees them through dedup.rejected_rows (the superuser's sec_skip row is not
-- its to see).
CREATE TABLE sec_owned_skip (id int PRIMARY KEY, body text);
SELECT dedup.enable('sec_owned_skip', 'body', action => 'skip');
INSERT INTO sec_owned_skip VALUES (1, 'Новый мост через реку открыли в Казани после трех лет строительства.'),
                                  (2, 'Новый мост через реку открыли в Казани после трех лет строительства.');
SELECT tbl, row_data->>'id' AS id, original_key, verdict FROM dedup.rejected_rows;
RESET ROLE;
SET ROLE regress_dedup_app;
SELECT count(*) AS seen_by_others FROM dedup.rejected_rows;
DELETE FROM dedup.rejected_rows;
SELECT err($$UPDATE dedup.rejected_rows SET original_key = 'x'$$);
RESET ROLE;
SELECT count(*) AS superuser_sees FROM dedup.rejected_rows WHERE tbl IN ('sec_skip'::regclass, 'sec_owned_skip'::regclass);
SET ROLE regress_dedup_owner;
DELETE FROM dedup.rejected_rows WHERE tbl = 'sec_owned_skip'::regclass;
SELECT count(*) AS left_after_delete FROM dedup.rejected_rows;
SELECT dedup.disable('sec_owned_skip');
DROP TABLE sec_owned_skip;
RESET ROLE;
SELECT count(*) AS sec_skip_still_there FROM dedup.rejected WHERE tbl = 'sec_skip'::regclass;
-- (A signature the recompute writes again: it writes only those that change.)
UPDATE sec_owned2 SET dedup_sig = NULL;
DELETE FROM sec_seen;
SET client_min_messages = warning;
TRUNCATE sec_owned;
RESET client_min_messages;
SELECT who FROM sec_seen;
-- What enable registers cannot be forged through the internal functions: no view
-- (its functions would run as the extension's owner), no key type but the one
-- enable makes; a temporary table of the recompute's name is replaced, not used
-- (its triggers would fire from the TRUNCATE trigger); the delete trigger refuses
-- a dedup_doc of another type (a cast of the owner's would run with its rights).
SET ROLE regress_dedup_owner;
CREATE VIEW sec_view AS SELECT * FROM sec_owned2;
SELECT err($$SELECT dedup._register_table('sec_view'::regclass::oid, 'sec_view', 'body', NULL, NULL, NULL, NULL, 'mark', NULL, 'id', NULL, NULL)$$);
SELECT err($$SELECT dedup._recompute('sec_owned', 'sec_view'::regclass::oid, 'dedup_doc')$$);
CREATE TABLE sec_plain (id text PRIMARY KEY, body text);
SELECT err($$SELECT dedup._register_table('sec_plain'::regclass::oid, 'sec_plain', 'body', NULL, NULL, NULL, NULL, 'mark', NULL, 'id', 'regress_key'::regtype::oid, NULL)$$);
SELECT err($$SELECT dedup._register_table('sec_plain'::regclass::oid, 'sec_plain', 'nosuch', NULL, NULL, NULL, NULL, 'mark', NULL, 'id', NULL, NULL)$$);
SELECT err($$SELECT dedup._register_table(NULL, 'sec_plain', 'body', NULL, NULL, NULL, NULL, 'mark', NULL, 'id', NULL, NULL)$$);
SELECT err($$SELECT dedup._set_time_window(NULL, NULL)$$);
SELECT err($$SELECT dedup._unregister_table(NULL)$$), err($$SELECT dedup._marked_rows(NULL)$$), err($$SELECT dedup._may_read_collection(NULL)$$);
CREATE FUNCTION regress_seen_temp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO public.sec_seen VALUES ('temp table trigger: ' || current_user); RETURN NEW; END $$;
CREATE TEMP TABLE _dedup_recompute (term text, df int8, cf int8);
CREATE TRIGGER regress_seen_temp BEFORE INSERT ON _dedup_recompute FOR EACH ROW EXECUTE FUNCTION regress_seen_temp();
RESET ROLE;
SET client_min_messages = warning;
TRUNCATE sec_owned;
RESET client_min_messages;
SELECT count(*) AS temp_table_triggers_fired FROM sec_seen WHERE who LIKE 'temp table trigger%';
SET ROLE regress_dedup_owner;
CREATE TABLE sec_fake (dedup_doc int);
INSERT INTO sec_fake VALUES (1);
CREATE TRIGGER dedup_delete_trigger AFTER DELETE ON sec_fake FOR EACH ROW EXECUTE FUNCTION dedup._delete_trigger();
SELECT err($$DELETE FROM sec_fake$$);
-- A temporary table is not enabled (its registration would outlive it).
CREATE TEMP TABLE sec_temp (id int PRIMARY KEY, body text);
SELECT err($$SELECT dedup.enable('sec_temp', 'body')$$);
DROP TABLE sec_temp;
-- Planning a query on a table runs its index expressions' immutable functions:
-- the extension plans its reads of a table as the table's owner, never as its
-- own owner (the trigger's lookup without the signature index, pairs, status).
CREATE FUNCTION regress_log(what text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN INSERT INTO public.sec_seen VALUES (what || current_user); RETURN ''; END $$;
CREATE FUNCTION regress_planned() RETURNS text IMMUTABLE LANGUAGE sql AS $$ SELECT public.regress_log('planned: ') $$;
DELETE FROM sec_seen;
DROP INDEX sec_owned2_dedup_sig_idx;
CREATE INDEX sec_owned2_planned ON sec_owned2 ((id || regress_planned()));
INSERT INTO sec_owned2 VALUES ('z', 'Совсем другой текст о погоде в Москве на выходных.');
RESET ROLE;
SELECT count(*) AS pairs FROM dedup.pairs('sec_owned2');
SELECT collection, duplicates FROM dedup.status WHERE collection = 'sec_owned';
SELECT DISTINCT who FROM sec_seen WHERE who LIKE 'planned%' ORDER BY 1;
SET ROLE regress_dedup_owner;
DROP INDEX sec_owned2_planned;
DROP FUNCTION regress_planned(), regress_log(text);
DROP VIEW sec_view;
DROP TABLE sec_plain, sec_fake;
DROP FUNCTION regress_seen_temp();
SET ROLE regress_dedup_owner;
SELECT dedup.disable('sec_owned2');
DROP TABLE sec_owned2, sec_domain, sec_seen;
DROP FUNCTION regress_seen();
DROP DOMAIN regress_key;
DROP FUNCTION regress_spy(text);
SELECT dedup.disable('sec_owned');
SELECT count(*) AS collections_left FROM dedup.collections WHERE name = 'sec_owned';
DROP TABLE sec_owned;
RESET ROLE;
REVOKE CREATE ON SCHEMA public FROM regress_dedup_owner;
DROP ROLE regress_dedup_owner;

-- Statistics equal the table after an UPDATE of dedup_doc by hand and a TRUNCATE.
UPDATE sec_mark SET dedup_doc = dedup.to_document('совсем другой текст про погоду') WHERE id = 1;
SELECT dedup.to_document(body)::text = dedup_doc::text AS doc_is_the_texts FROM sec_mark WHERE id = 1;
DELETE FROM sec_mark WHERE id = 1;
SELECT s.n_docs, (SELECT (dedup.term_stats_agg(dedup_doc)->'terms') FROM sec_mark)
       = (SELECT jsonb_object_agg(term, jsonb_build_array(df, cf)) FROM dedup.term_stats_by_name WHERE collection = 'sec_mark') AS terms_right
FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'sec_mark';
SET client_min_messages = warning;
TRUNCATE sec_mark;
RESET client_min_messages;
SELECT s.n_docs, (SELECT count(*) FROM dedup.term_stats_by_name WHERE collection = 'sec_mark') AS terms
FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'sec_mark';

-- Tables of one name in two schemas get collections of their own.
CREATE SCHEMA regress_other;
CREATE TABLE regress_other.sec_mark (id bigint PRIMARY KEY, body text);
SELECT dedup.enable('regress_other.sec_mark', 'body');
SELECT e.tbl, c.name AS collection FROM dedup.enabled_tables e JOIN dedup.collections c ON c.id = e.collection_id
WHERE e.tbl::text LIKE '%sec_mark' ORDER BY 1::text;
SELECT dedup.disable('regress_other.sec_mark');
DROP SCHEMA regress_other CASCADE;

-- A collection an enabled table uses cannot be dropped from under it.
SELECT err($$SELECT dedup.drop_collection('sec_mark')$$);
-- The trigger refuses to run other than as dedup.enable installs it.
CREATE TRIGGER sec_wrong AFTER INSERT ON sec_mark FOR EACH ROW EXECUTE FUNCTION dedup._trigger();
SELECT err($$INSERT INTO sec_mark (body) VALUES ('Другой текст.')$$);
DROP TRIGGER sec_wrong ON sec_mark;
-- A dedup column's type cannot be changed while the table is enabled (2BP01);
-- changed with the event trigger off, the trigger refuses inserts clearly (42804).
SELECT err($$ALTER TABLE sec_mark ALTER COLUMN dedup_verdict TYPE text$$);
BEGIN;
ALTER EVENT TRIGGER dedup_key_type_changed DISABLE;
ALTER TABLE sec_mark ALTER COLUMN dedup_verdict TYPE text;
SELECT err($$INSERT INTO sec_mark (body) VALUES ('Другой текст.')$$);
ROLLBACK;

SELECT dedup.disable('sec_mark'), dedup.disable('sec_skip'), dedup.disable('sec_error');
-- A dropped table's skipped rows go with it (its OID may be another's later).
SELECT 'sec_skip'::regclass::oid AS sec_skip_oid \gset
SELECT count(*) AS skipped_before_drop FROM dedup.rejected WHERE tbl::oid = :sec_skip_oid;
DROP TABLE sec_mark, sec_skip, sec_error;
SELECT count(*) AS skipped_after_drop FROM dedup.rejected WHERE tbl::oid = :sec_skip_oid;
DROP SCHEMA regress_evil CASCADE;
DROP ROLE regress_dedup_app, regress_dedup_reader;

-- Code of a table's owner that a recompute runs cannot reach the extension
-- owner's rights: the recompute's temporary table is the extension owner's, so
-- the owner's code cannot put a view of its own in its place. A policy would run
-- while the recompute reads the table, but FORCE ROW LEVEL SECURITY, which would
-- apply it to the owner, is refused on an enabled table; a trigger runs while the
-- recompute rewrites the signatures, and finds nothing to replace.
CREATE ROLE regress_dedup_eve;
CREATE SCHEMA regress_eve AUTHORIZATION regress_dedup_eve;
SET ROLE regress_dedup_eve;
CREATE TABLE regress_eve.t (id int PRIMARY KEY, body text);
INSERT INTO regress_eve.t VALUES (1, 'Погода в Казани: снег и гололед, синоптики предупреждают о ветре.');
SELECT dedup.enable('regress_eve.t', 'body');
CREATE FUNCTION regress_eve.swap() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF pg_catalog.to_regclass('pg_temp._old') IS NULL AND pg_catalog.to_regclass('pg_temp._dedup_recompute') IS NOT NULL THEN
        ALTER TABLE pg_temp._dedup_recompute RENAME TO _old;
    END IF;
    RETURN true;
END $$;
CREATE FUNCTION regress_eve.swap_tg() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM regress_eve.swap();
    RETURN NEW;
END $$;
CREATE TRIGGER swap BEFORE UPDATE ON regress_eve.t FOR EACH ROW EXECUTE FUNCTION regress_eve.swap_tg();
SELECT err($$ALTER TABLE regress_eve.t ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY$$);
-- A signature the recompute has to write again (a writer may set dedup_sig).
UPDATE regress_eve.t SET dedup_sig = NULL;
\set VERBOSITY terse
SELECT err($$SELECT dedup.recompute('regress_eve.t')$$);
\set VERBOSITY default
SELECT pg_catalog.to_regclass('pg_temp._old') IS NULL AS nothing_swapped, dedup_sig IS NOT NULL AS signed
FROM regress_eve.t;
RESET ROLE;
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_dedup_eve';

-- Nor can a trigger of a table in a shared collection read the collection's
-- statistics while a recompute signs that table's rows.
CREATE ROLE regress_dedup_bob;
CREATE SCHEMA regress_bob AUTHORIZATION regress_dedup_bob;
CREATE TABLE sec_secret (id int PRIMARY KEY, body text);
INSERT INTO sec_secret VALUES (1, 'Совершенно секретно: слияние компании Альфатрон и Бетасофт назначено на пятницу.');
SET ROLE regress_dedup_bob;
CREATE TABLE regress_bob.t (id int PRIMARY KEY, body text);
INSERT INTO regress_bob.t VALUES (1, 'Погода в Москве: снег и гололед.');
CREATE TABLE regress_bob.loot (data text);
CREATE FUNCTION regress_bob.spy() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        INSERT INTO regress_bob.loot SELECT pg_catalog.string_agg(term, ',')
        FROM dedup.weights(dedup.to_document('Альфатрон Бетасофт'), 'sec_shared');
    EXCEPTION WHEN insufficient_privilege THEN
        INSERT INTO regress_bob.loot VALUES ('refused');
    END;
    RETURN true;
END $$;
CREATE FUNCTION regress_bob.spy_tg() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM regress_bob.spy();
    RETURN NEW;
END $$;
CREATE TRIGGER spy BEFORE UPDATE ON regress_bob.t FOR EACH ROW EXECUTE FUNCTION regress_bob.spy_tg();
RESET ROLE;
SELECT dedup.create_collection('sec_shared');
SELECT dedup.enable('sec_secret', 'body', collection => 'sec_shared');
SELECT dedup.enable('regress_bob.t', 'body', collection => 'sec_shared');
UPDATE regress_bob.t SET dedup_sig = NULL;
DELETE FROM regress_bob.loot;
SELECT dedup.recompute('sec_shared');
SELECT DISTINCT data FROM regress_bob.loot;

-- A partition's reader asks the reading functions about the partition: they
-- answer from the whole table, so they refuse; a row written to the partition is
-- marked without the key of an original the writer may not read.
CREATE TABLE sec_ev (tenant text, id int, body text, PRIMARY KEY (tenant, id)) PARTITION BY LIST (tenant);
CREATE TABLE sec_ev_a PARTITION OF sec_ev FOR VALUES IN ('a');
CREATE TABLE sec_ev_b PARTITION OF sec_ev FOR VALUES IN ('b');
SELECT dedup.enable('sec_ev', 'body');
INSERT INTO sec_ev VALUES ('b', 1, 'Совершенно секретно: слияние компании Альфатрон и Бетасофт назначено на пятницу.');
GRANT SELECT, INSERT ON sec_ev_a TO regress_dedup_bob;
SET ROLE regress_dedup_bob;
SELECT err($$SELECT * FROM dedup.pairs('sec_ev_a')$$);
SELECT err($$SELECT dedup.is_duplicate('sec_ev_a', 'Совершенно секретно: слияние компании Альфатрон и Бетасофт назначено на пятницу.')$$);
INSERT INTO sec_ev_a VALUES ('a', 2, 'Совершенно секретно: слияние компании Альфатрон и Бетасофт назначено на пятницу.')
RETURNING duplicate_of, dedup_verdict;
RESET ROLE;
-- The table's owner reads the mark's verdict; the key was not stored.
SELECT tenant, id, duplicate_of, dedup_verdict FROM sec_ev ORDER BY tenant, id;

-- Nor when it reads a partitioned table between its partition and the root.
CREATE TABLE sec_r (id int, k int, j int, body text, PRIMARY KEY (id, k, j)) PARTITION BY LIST (k);
CREATE TABLE sec_r_other PARTITION OF sec_r FOR VALUES IN (1);
CREATE TABLE sec_r_mid PARTITION OF sec_r FOR VALUES IN (2) PARTITION BY LIST (j);
CREATE TABLE sec_r_leaf PARTITION OF sec_r_mid FOR VALUES IN (1);
SELECT dedup.enable('sec_r', 'body');
INSERT INTO sec_r VALUES (777, 1, 1, 'Совершенно секретно: слияние компании Альфатрон и Бетасофт назначено на пятницу.');
GRANT SELECT, INSERT ON sec_r_mid TO regress_dedup_bob;
SET ROLE regress_dedup_bob;
INSERT INTO sec_r_mid VALUES (1, 2, 1, 'Совершенно секретно: слияние компании Альфатрон и Бетасофт назначено на пятницу.')
RETURNING duplicate_of, dedup_verdict;
RESET ROLE;
SELECT dedup.disable('sec_r');
DROP TABLE sec_r;

-- A trigger of dedup's on an unrelated table, with an argument that names no
-- table, does not break partition DDL for everyone.
SET ROLE regress_dedup_bob;
CREATE TABLE regress_bob.junk (id int);
CREATE TRIGGER dedup_statement_start BEFORE INSERT ON regress_bob.junk FOR EACH STATEMENT
    EXECUTE FUNCTION dedup._statement_start('junk');
RESET ROLE;
CREATE TABLE sec_plain (a int) PARTITION BY LIST (a);
CREATE TABLE sec_plain_1 PARTITION OF sec_plain FOR VALUES IN (1);
SELECT count(*) AS partitions FROM pg_inherits WHERE inhparent = 'sec_plain'::regclass;
DROP TABLE sec_plain;
-- pg_dedup's columns cannot be dropped or renamed while the table is enabled, and
-- a registration that skips enable is refused: either made dedup.status (which
-- counts every table's duplicate_of) fail for everyone who reads the collection.
SET ROLE regress_dedup_eve;
CREATE TABLE regress_eve.cols (id int PRIMARY KEY, body text);
SELECT dedup.enable('regress_eve.cols', 'body');
SELECT err($$ALTER TABLE regress_eve.cols DROP COLUMN duplicate_of$$);
SELECT err($$ALTER TABLE regress_eve.cols RENAME COLUMN dedup_sig TO x$$);
SELECT err($$ALTER TABLE regress_eve.cols DROP COLUMN dedup_doc CASCADE$$);
SELECT err($$ALTER TABLE regress_eve.cols ALTER COLUMN dedup_verdict TYPE text$$);
SELECT err($$ALTER TABLE regress_eve.cols ADD COLUMN extra int$$);
CREATE TABLE regress_eve.reg (id int PRIMARY KEY, body text);
SELECT err($$SELECT dedup._register_table('regress_eve.reg'::regclass::oid, 'regress_eve_reg', 'body', NULL, NULL, NULL,
                                           'nosuchmodel', 'mark', NULL, 'id', NULL, NULL)$$);
SELECT err($$SELECT dedup._register_table('regress_eve.reg'::regclass::oid, 'regress_eve_reg', 'body', NULL, NULL, NULL,
                                           NULL, 'mark', NULL, 'id', NULL, '1 day')$$);
SELECT err($$SELECT dedup._register_table('regress_eve.reg'::regclass::oid, 'regress_eve_reg', 'body', NULL, NULL, NULL,
                                           NULL, 'mark', NULL, 'id', NULL, NULL)$$);
SELECT dedup.disable('regress_eve.cols');
DROP TABLE regress_eve.cols, regress_eve.reg;
RESET ROLE;
SELECT count(*) > 0 AS status_reads FROM dedup.status;
-- A relation OID that does not exist: 42P01, as PostgreSQL says it; NULL: 22004.
SELECT err($$SELECT dedup.enable(0::regclass, 'body')$$);
SELECT err($$SELECT dedup.disable(0)$$);
SELECT err($$SELECT dedup.set_time_window(0, '1 day')$$);
SELECT err($$SELECT dedup.recompute(0::regclass, 'doc', 'c')$$);
SELECT err($$SELECT dedup.enable(NULL, 'body')$$);
SELECT err($$SELECT dedup.set_time_window(NULL, '1 day')$$);
SELECT dedup.disable('sec_ev'), dedup.disable('sec_secret'), dedup.disable('regress_bob.t');
DROP TABLE sec_ev, sec_secret;
DROP SCHEMA regress_eve, regress_bob CASCADE;
DROP ROLE regress_dedup_eve, regress_dedup_bob;

-- The trigger's key locks, which every role sees in pg_locks, do not carry the
-- signature keys (a word's hash): their objid is a keyed hash of each key. A
-- trigger that fires after dedup's, while the row's locks are held, compares.
CREATE TABLE sec_locks (id int PRIMARY KEY, body text);
SELECT dedup.enable('sec_locks', 'body');
CREATE FUNCTION sec_peek() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE held oid[]; keys oid[];
BEGIN
    SELECT array_agg(objid) INTO held FROM pg_locks
     WHERE locktype = 'advisory' AND objsubid = 3565 AND pid = pg_backend_pid();
    keys := string_to_array(trim(split_part(NEW.dedup_sig::text, ':', 2), '{}'), ',')::oid[];
    -- All of the row's keys but its min_shared_keys - 1 lightest words (3).
    RAISE NOTICE 'key locks held: %, as many as keys but 3: %, showing a key: %',
        cardinality(held) > 0, cardinality(held) = cardinality(keys) - 3, held && keys;
    RETURN NEW;
END $$;
CREATE TRIGGER zz_peek BEFORE INSERT ON sec_locks FOR EACH ROW EXECUTE FUNCTION sec_peek();
INSERT INTO sec_locks VALUES (1, 'Confidential layoffs planned at Hooli: the memo lists two hundred engineers in Palo Alto');
-- Only the extension's owner reads the secret.
CREATE ROLE regress_dedup_peeker;
SET ROLE regress_dedup_peeker;
SELECT err($$SELECT secret FROM dedup.lock_secret$$);
-- Nor does another role analyse a text by the table's collection's limits.
SELECT err($$SELECT dedup._table_document('sec_locks'::regclass::oid, 'Курс доллара вырос.', NULL, NULL, NULL)$$);
RESET ROLE;
DROP ROLE regress_dedup_peeker;
SELECT dedup.disable('sec_locks');
DROP TABLE sec_locks;
DROP FUNCTION sec_peek();

-- FORCE ROW LEVEL SECURITY would hide rows from the owner, as whom pg_dedup
-- reads the table: refused at enable, and on an enabled table or its partition.
CREATE TABLE sec_force (id int PRIMARY KEY, body text);
ALTER TABLE sec_force ENABLE ROW LEVEL SECURITY;
ALTER TABLE sec_force FORCE ROW LEVEL SECURITY;
SELECT err($$SELECT dedup.enable('sec_force', 'body')$$);
ALTER TABLE sec_force NO FORCE ROW LEVEL SECURITY;
SELECT dedup.enable('sec_force', 'body');
SELECT err($$ALTER TABLE sec_force FORCE ROW LEVEL SECURITY$$);
CREATE TABLE sec_force_p (id int, day date, body text, PRIMARY KEY (id, day)) PARTITION BY RANGE (day);
CREATE TABLE sec_force_p1 PARTITION OF sec_force_p FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
SELECT dedup.enable('sec_force_p', 'body');
SELECT err($$ALTER TABLE sec_force_p1 FORCE ROW LEVEL SECURITY$$);
-- Nor is a partition attached that has it.
CREATE TABLE sec_force_p2 (LIKE sec_force_p);
ALTER TABLE sec_force_p2 ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
SELECT err($$ALTER TABLE sec_force_p ATTACH PARTITION sec_force_p2 FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')$$);
DROP TABLE sec_force_p2;
SELECT relname, relforcerowsecurity FROM pg_class WHERE relname LIKE 'sec\_force%' AND relkind IN ('r', 'p') ORDER BY 1;
SELECT dedup.disable('sec_force'), dedup.disable('sec_force_p');
DROP TABLE sec_force, sec_force_p;

-- enable and disable pin search_path: a more specific overload of a pg_catalog
-- function in a schema on the caller's path (format(text, name) beats
-- format(text, VARIADIC "any")) is never called, whoever runs them.
CREATE SCHEMA regress_hijack;
CREATE FUNCTION regress_hijack.format(f text, a name) RETURNS text LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION 'regress_hijack.format called'; END $$;
CREATE FUNCTION regress_hijack.format(f text, a regclass) RETURNS text LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION 'regress_hijack.format called'; END $$;
CREATE FUNCTION regress_hijack.quote_ident(name) RETURNS text LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION 'regress_hijack.quote_ident called'; END $$;
SET search_path = public, regress_hijack;
CREATE TABLE sec_hijack (id int PRIMARY KEY, body text);
SELECT dedup.enable('sec_hijack', 'body');
INSERT INTO sec_hijack VALUES (1, 'Новый мост через реку открыли в Казани после трех лет строительства.');
SELECT dedup.disable('sec_hijack');
RESET search_path;
DROP TABLE sec_hijack;
DROP SCHEMA regress_hijack CASCADE;

-- REVOKE EXECUTE on a reading function closes its internal body too.
CREATE ROLE regress_dedup_tenant LOGIN;
CREATE TABLE sec_src (id int PRIMARY KEY, body text);
SELECT dedup.enable('sec_src', 'body');
GRANT SELECT ON sec_src TO regress_dedup_tenant;
REVOKE EXECUTE ON FUNCTION dedup.pairs(regclass, text) FROM PUBLIC;
SET ROLE regress_dedup_tenant;
SELECT err($$SELECT * FROM dedup.pairs('sec_src')$$);
SELECT err($$SELECT * FROM dedup._pairs('sec_src'::regclass::oid, NULL)$$);
RESET ROLE;
GRANT EXECUTE ON FUNCTION dedup.pairs(regclass, text) TO PUBLIC;
REVOKE SELECT ON sec_src FROM regress_dedup_tenant;

-- A stored model's scores are shown only to who may read its weights: its
-- collection's readers, or for a model of no collection the configuration roles.
SELECT dedup.import_model(dedup.export_model('default') || '{"name": "sec_hidden", "collection": "sec_src"}') IS NOT NULL AS imported;
SELECT dedup.import_model(dedup.export_model('default') || '{"name": "sec_nocoll"}') IS NOT NULL AS imported;
CREATE TABLE sec_own (id int PRIMARY KEY, body text);
ALTER TABLE sec_own OWNER TO regress_dedup_tenant;
SELECT dedup.enable('sec_own', 'body');
INSERT INTO sec_own VALUES (1, 'Новый мост через реку открыли в Казани после трех лет строительства.'),
                           (2, 'Новый мост через реку открыли в Казани после трех лет строительства!');
SET ROLE regress_dedup_tenant;
SELECT count(*) AS own_pairs FROM dedup.pairs('sec_own');
SELECT err($$SELECT count(*) FROM dedup.pairs('sec_own', 'sec_hidden')$$);
SELECT err($$SELECT count(*) FROM dedup.groups('sec_own', 'sec_nocoll')$$);
SELECT err($$SELECT * FROM dedup.explain_pair('sec_nocoll', dedup.to_document('мост'), dedup.to_document('мост'))$$);
RESET ROLE;
SELECT count(*) AS owner_pairs FROM dedup.pairs('sec_own', 'sec_nocoll');
-- Enabling with a model is reading it (the table's pairs show its scores).
SET ROLE regress_dedup_tenant;
SELECT dedup.disable('sec_own');
SELECT err($$SELECT dedup.enable('sec_own', 'body', model => 'sec_hidden')$$);
RESET ROLE;
-- A model stored as 'default' is every table's without a model: any owner enables
-- with it. REVOKE EXECUTE on groups leaves enable's backfill (its own body) alone.
SELECT dedup.import_model(dedup.export_model('default')) IS NOT NULL AS stored_default;
REVOKE EXECUTE ON FUNCTION dedup.groups(regclass, text) FROM PUBLIC;
GRANT CREATE ON SCHEMA public TO regress_dedup_tenant;  -- for the signature index
SET ROLE regress_dedup_tenant;
SELECT dedup.enable('sec_own', 'body');
SELECT count(*) AS marked FROM sec_own WHERE duplicate_of IS NOT NULL;
SELECT dedup.disable('sec_own');
RESET ROLE;
GRANT EXECUTE ON FUNCTION dedup.groups(regclass, text) TO PUBLIC;
REVOKE CREATE ON SCHEMA public FROM regress_dedup_tenant;
DELETE FROM dedup.models WHERE name = 'default';
DELETE FROM dedup.models WHERE name IN ('sec_hidden', 'sec_nocoll');
SELECT dedup.disable('sec_src');
DROP TABLE sec_own, sec_src;
DROP ROLE regress_dedup_tenant;

-- candidates runs its lookups with the caller's rights but a pinned search_path:
-- an = of the caller's for two regclass values (pg_catalog has none, so it would
-- beat the oid one) is never called.
CREATE SCHEMA regress_op;
CREATE FUNCTION regress_op.eqrc(regclass, regclass) RETURNS bool LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION 'regress_op.eqrc called'; END $$;
CREATE OPERATOR regress_op.= (leftarg = regclass, rightarg = regclass, function = regress_op.eqrc);
CREATE TABLE sec_cand (id int PRIMARY KEY, body text);
SELECT dedup.enable('sec_cand', 'body');
INSERT INTO sec_cand VALUES (1, 'Новый мост через реку открыли в Казани после трех лет строительства.');
SET search_path = public, regress_op;
SELECT count(*) AS candidates FROM dedup.candidates('sec_cand', (SELECT dedup_sig FROM sec_cand WHERE id = 1));
RESET search_path;
DROP SCHEMA regress_op CASCADE;
-- A model a writer names per row leaves no score in dedup.rejected.
ALTER TABLE sec_cand ADD COLUMN m text;
SELECT dedup.disable('sec_cand');
SELECT dedup.enable('sec_cand', 'body', action => 'skip', model_column => 'm');
INSERT INTO sec_cand VALUES (2, 'Новый мост через реку открыли в Казани после трех лет строительства.', 'default');
INSERT INTO sec_cand VALUES (3, 'Новый мост через реку открыли в Казани после трех лет строительства.', NULL);
SELECT row_data->>'id' AS id, verdict, score IS NOT NULL AS has_score FROM dedup.rejected_rows ORDER BY 1;
-- The internal bodies of enable, disable, set_time_window and recompute follow
-- EXECUTE on them too; the candidate counters are not PUBLIC's.
REVOKE EXECUTE ON FUNCTION dedup.disable(regclass) FROM PUBLIC;
CREATE ROLE regress_dedup_owner2 LOGIN;
ALTER TABLE sec_cand OWNER TO regress_dedup_owner2;
SET ROLE regress_dedup_owner2;
SELECT err($$SELECT dedup._unregister_table('sec_cand'::regclass::oid)$$);
SELECT err($$SELECT * FROM dedup._candidate_counts()$$);
RESET ROLE;
GRANT EXECUTE ON FUNCTION dedup.disable(regclass) TO PUBLIC;
SELECT dedup.disable('sec_cand');
DROP TABLE sec_cand;
DROP ROLE regress_dedup_owner2;

-- A database that is not UTF-8 is refused at CREATE EXTENSION.
SELECT current_database() AS regress_db \gset
CREATE DATABASE regress_dedup_latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;
\c regress_dedup_latin1
\set VERBOSITY terse
CREATE EXTENSION pg_dedup;
\c :regress_db
DROP DATABASE regress_dedup_latin1;
-- The key type's helper drops a composite type by its own name, never the text given.
SELECT err($$SELECT dedup._drop_key_type('pg_temp.nonexist; CREATE TABLE public.injected()')$$);
SELECT to_regclass('public.injected') AS injected;
-- An owner who may not read its own table (no USAGE on its schema) leaves its
-- collection's duplicates unknown in dedup.status, not the view failing for all.
CREATE ROLE sec_noschema;
CREATE SCHEMA sec_hidden;
CREATE TABLE sec_hidden.t (id int PRIMARY KEY, body text);
SELECT dedup.enable('sec_hidden.t', 'body', collection => 'sec_hidden');
ALTER TABLE sec_hidden.t OWNER TO sec_noschema;
SELECT collection, documents, duplicates FROM dedup.status WHERE collection = 'sec_hidden';
SELECT count(*) > 0 AS others_listed FROM dedup.status WHERE collection <> 'sec_hidden';
ALTER TABLE sec_hidden.t OWNER TO CURRENT_USER;
SELECT dedup.disable('sec_hidden.t');
DROP SCHEMA sec_hidden CASCADE;
DROP ROLE sec_noschema;
-- The DDL hooks leave PostgreSQL's errors to it, in its order: a name it cannot
-- find comes before a schema the caller may not use.
CREATE ROLE sec_ddl;
CREATE SCHEMA sec_priv;
CREATE TABLE sec_priv.t (id int PRIMARY KEY, body text) PARTITION BY RANGE (id);
CREATE TABLE sec_priv.t1 PARTITION OF sec_priv.t FOR VALUES FROM (0) TO (10);
SELECT dedup.enable('sec_priv.t', 'body', collection => 'sec_priv_t');
SET ROLE sec_ddl;
SELECT err($$DROP TABLE sec_nosuch, sec_priv.t1$$);
SELECT err($$CREATE TABLE sec_priv_t2 PARTITION OF sec_priv.t FOR VALUES FROM (10) TO (20)$$);
RESET ROLE;
SELECT dedup.disable('sec_priv.t');
DROP SCHEMA sec_priv CASCADE;
DROP ROLE sec_ddl;
-- Without Citus, naming a session citus_internal turns no bookkeeping off: a
-- DROP TABLE so named still takes the table's registration along.
CREATE TABLE sec_citus_name (id int PRIMARY KEY, body text);
SELECT dedup.enable('sec_citus_name', 'body');
SET application_name = 'citus_internal gpid=1';
DROP TABLE sec_citus_name;
RESET application_name;
SELECT count(*) AS registrations_left FROM dedup.enabled_tables e WHERE NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = e.tbl);
-- Reading functions ask what a SELECT would: USAGE on the table's schema too.
CREATE ROLE sec_analyst;
CREATE SCHEMA sec_nousage;
CREATE TABLE sec_nousage.t (id int PRIMARY KEY, body text);
SELECT dedup.enable('sec_nousage.t', 'body', collection => 'sec_nousage');
INSERT INTO sec_nousage.t VALUES (1, 'The harbour authority closed the northern pier after a storm damaged its lights.');
GRANT SELECT ON sec_nousage.t TO sec_analyst;
SELECT 'sec_nousage.t'::regclass::oid AS nousage_oid \gset
SET ROLE sec_analyst;
SELECT err(format($$SELECT dedup.is_duplicate(%s::oid::regclass, 'The harbour authority closed the northern pier')$$, :nousage_oid));
SELECT err(format($$SELECT * FROM dedup.find_original(%s::oid::regclass, dedup.to_document('The harbour authority closed the northern pier'))$$, :nousage_oid));
SELECT err(format($$SELECT * FROM dedup.pairs(%s::oid::regclass)$$, :nousage_oid));
SELECT err($$SELECT * FROM dedup.weights(dedup.to_document('harbour zebra'), 'sec_nousage')$$);
SELECT count(*) AS nousage_listed FROM dedup.status WHERE collection = 'sec_nousage';
RESET ROLE;
-- A model stored as default is public, but a pair function weighs against its
-- collection's statistics: read by who may read that collection.
BEGIN;
CREATE TEMP TABLE sec_lp AS
SELECT dedup.to_document(format('Story %s: the mayor opened bridge number %s over the river today.', i, i)) AS a,
       dedup.to_document(format('Story %s: the mayor opened bridge number %s over the river today. More follows.', i, i)) AS b,
       true AS a_dup_b, i % 2 = 0 AS b_dup_a
FROM generate_series(1, 10) i
UNION ALL
SELECT dedup.to_document(format('Story %s: the mayor opened bridge number %s.', i, i)),
       dedup.to_document(format('A storm closed airport %s for the night; %s flights were diverted.', i, i * 3)), false, false
FROM generate_series(1, 10) i;
SELECT dedup.train('default', 'sec_nousage', 'SELECT a, b, a_dup_b, b_dup_a FROM sec_lp') IS NOT NULL AS trained;
SET ROLE sec_analyst;
SELECT err($$SELECT count(*) FROM dedup.explain_pair('default', dedup.to_document('harbour pier'), dedup.to_document('harbour storm'))$$);
SELECT err($$SELECT dedup.pair_score('default', dedup.to_document('harbour pier'), dedup.to_document('harbour storm'))$$);
ROLLBACK;
SELECT dedup.disable('sec_nousage.t');
DROP SCHEMA sec_nousage CASCADE;
-- A collection two tables share, of which the analyst reads one: the functions
-- that judge that table's rows weigh them against the whole collection.
CREATE TABLE sec_pub (id int PRIMARY KEY, body text);
CREATE TABLE sec_priv (id int PRIMARY KEY, body text);
SELECT dedup.enable('sec_pub', 'body', collection => 'sec_shared');
SELECT dedup.enable('sec_priv', 'body', collection => 'sec_shared');
INSERT INTO sec_pub VALUES (1, 'The city council approved the new budget for public parks and libraries on Monday.');
INSERT INTO sec_priv VALUES (1, 'Veltrana auditors found irregularities at the Lisbon subsidiary on Friday.');
GRANT SELECT ON sec_pub TO sec_analyst;
SET ROLE sec_analyst;
SELECT err($$SELECT * FROM dedup.find_original('sec_pub', dedup.to_document('The city council approved the new budget for public parks. Lisbon Lisbon'))$$);
SELECT err($$SELECT dedup.is_duplicate('sec_pub', 'The city council approved the new budget for public parks. Lisbon Lisbon')$$);
SELECT err($$SELECT count(*) FROM dedup.groups('sec_pub')$$);
RESET ROLE;
-- disable takes the table's documents out of a collection that stays: nobody
-- reads them in its statistics any more.
SELECT documents FROM dedup.status WHERE collection = 'sec_shared';
SELECT dedup.disable('sec_priv');
SELECT documents FROM dedup.status WHERE collection = 'sec_shared';
SELECT count(*) AS veltrana_terms FROM dedup.term_stats t JOIN dedup.collections c ON c.id = t.collection_id
 WHERE c.name = 'sec_shared' AND t.term LIKE 'veltran%' AND t.df > 0;
SET ROLE sec_analyst;
SELECT count(*) AS pub_original FROM dedup.find_original('sec_pub', dedup.to_document('The city council approved the new budget for public parks and libraries on Monday.'));
RESET ROLE;
-- A table dropped from a shared collection leaves its documents counted until
-- a recompute: until then only the configuration rights read the statistics.
SELECT dedup.enable('sec_priv', 'body', collection => 'sec_shared');
DROP TABLE sec_priv;
SET ROLE sec_analyst;
SELECT err($$SELECT count(*) FROM dedup.weights(dedup.to_document('Veltrana Lisbon'), 'sec_shared')$$);
SELECT count(*) AS shared_listed FROM dedup.status WHERE collection = 'sec_shared';
RESET ROLE;
SELECT dedup.recompute('sec_shared');
SET ROLE sec_analyst;
SELECT count(*) AS weighed FROM dedup.weights(dedup.to_document('Veltrana Lisbon'), 'sec_shared');
RESET ROLE;
SELECT dedup.disable('sec_pub');
DROP TABLE sec_pub;
-- disable of the only table of a collection a model keeps takes its documents
-- out too: a table enabled into it later reads no word of them.
CREATE TABLE sec_kept (id int PRIMARY KEY, body text);
SELECT dedup.enable('sec_kept', 'body');
INSERT INTO sec_kept SELECT i, format('Story %s: the mayor opened bridge number %s over the river today. Zanzibarite %s.', i, i, i) FROM generate_series(1, 12) i;
SELECT dedup.train('sec_kept_model', 'sec_kept', $$SELECT a.dedup_doc, b.dedup_doc, a.id % 2 = 0, false FROM sec_kept a JOIN sec_kept b ON b.id = a.id % 12 + 1$$) IS NOT NULL AS trained;
SELECT dedup.disable('sec_kept');
SELECT s.n_docs AS kept_documents FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'sec_kept';
DELETE FROM dedup.models WHERE name = 'sec_kept_model';
SELECT dedup.drop_collection('sec_kept');
DROP TABLE sec_kept;
-- An owner's table dropped from a collection that outlives it, made again and
-- enabled into it: enable rebuilds the statistics, which counted the dropped
-- rows for good before, so the owner can disable and enable it in one
-- transaction to change a setting (it got 42501). Whether a collection still
-- counts a dropped table is told to the table's owner alone.
CREATE ROLE sec_wire_owner;
GRANT CREATE ON SCHEMA public TO sec_wire_owner;
SELECT dedup.create_collection('sec_wire') IS NOT NULL AS made;
SET ROLE sec_wire_owner;
CREATE TABLE sec_wire_t (id int PRIMARY KEY, body text);
RESET ROLE;
SELECT dedup.enable('sec_wire_t', 'body', collection => 'sec_wire') IS NOT NULL AS enabled;
SET ROLE sec_wire_owner;
INSERT INTO sec_wire_t SELECT i, format('Story %s about the bridge number %s over the river.', i, i) FROM generate_series(1, 5) i;
DROP TABLE sec_wire_t;
CREATE TABLE sec_wire_t (id int PRIMARY KEY, body text);
RESET ROLE;
SELECT dedup.enable('sec_wire_t', 'body', collection => 'sec_wire') IS NOT NULL AS enabled;
SET ROLE sec_wire_owner;
SELECT documents FROM dedup.status WHERE collection = 'sec_wire';
BEGIN;
SELECT dedup.disable('sec_wire_t');
SELECT dedup.enable('sec_wire_t', 'body', collection => 'sec_wire', action => 'skip') IS NOT NULL AS enabled;
COMMIT;
RESET ROLE;
UPDATE dedup.collection_stats SET dropped_documents = true
 WHERE collection_id = (SELECT id FROM dedup.collections WHERE name = 'sec_wire');
SET ROLE sec_analyst;
SELECT dedup._counts_dropped_documents('sec_wire_t'::regclass::oid) AS told_another_role;
SET ROLE sec_wire_owner;
SELECT dedup._counts_dropped_documents('sec_wire_t'::regclass::oid) AS told_the_owner;
SELECT dedup._counts_dropped_documents(NULL) IS NULL AS null_is_null;
SELECT err($$SELECT dedup._counts_dropped_documents(0)$$);
SELECT dedup.disable('sec_wire_t');
DROP TABLE sec_wire_t;
RESET ROLE;
SELECT dedup.drop_collection('sec_wire');
REVOKE CREATE ON SCHEMA public FROM sec_wire_owner;
DROP ROLE sec_wire_owner;
-- A writer through a view (no INSERT right on the table itself) gets no
-- original's key: the view may hide the original. A direct writer without
-- SELECT gets it stored (security.md: what a view of the writer's that shows
-- duplicate_of then shows).
CREATE TABLE sec_base (id int PRIMARY KEY, public boolean, body text);
SELECT dedup.enable('sec_base', 'body');
INSERT INTO sec_base VALUES (2, false, 'The museum returned three paintings to the family of their original owner after a long court case.');
CREATE VIEW sec_view WITH (security_barrier) AS SELECT * FROM sec_base WHERE public WITH CHECK OPTION;
GRANT SELECT, INSERT ON sec_view TO sec_analyst;
CREATE ROLE sec_writer;
GRANT INSERT ON sec_base TO sec_writer;
SET ROLE sec_analyst;
INSERT INTO sec_view (id, public, body)
VALUES (50, true, 'The museum returned three paintings to the family of their original owner after a long court case.')
RETURNING id, duplicate_of, dedup_verdict;
RESET ROLE;
SET ROLE sec_writer;
INSERT INTO sec_base (id, public, body)
VALUES (51, true, 'The museum returned three paintings to the family of their original owner after a long court case.');
RESET ROLE;
SELECT id, duplicate_of, dedup_verdict FROM sec_base WHERE id IN (50, 51) ORDER BY id;
DROP VIEW sec_view;
SELECT dedup.disable('sec_base');
DROP TABLE sec_base;
DROP ROLE sec_analyst, sec_writer;
-- The trigger reads an enabled table as its owner to tell an upsert from a new
-- copy: an owner that may not read it (no USAGE on its schema after a REVOKE)
-- makes a copy's insert under 'skip' fail with a 42501 that says so (it was
-- PostgreSQL's bare "permission denied for schema"); a distinct row goes in.
CREATE ROLE sec_lost_owner;
CREATE SCHEMA sec_lost;
GRANT USAGE, CREATE ON SCHEMA sec_lost TO sec_lost_owner;
SET ROLE sec_lost_owner;
CREATE TABLE sec_lost.s (id int PRIMARY KEY, body text);
SELECT dedup.enable('sec_lost.s', 'body', action => 'skip');
INSERT INTO sec_lost.s VALUES (1, 'The harbour of the old town reopened after a winter of repairs to its stone piers and lighthouse.');
RESET ROLE;
REVOKE USAGE, CREATE ON SCHEMA sec_lost FROM sec_lost_owner;
SELECT err($$INSERT INTO sec_lost.s VALUES (2, 'The harbour of the old town reopened after a winter of repairs to its stone piers and lighthouse.')$$);
INSERT INTO sec_lost.s VALUES (3, 'A chess club for pensioners opened in the library, with lessons every Thursday evening.');
GRANT USAGE ON SCHEMA sec_lost TO sec_lost_owner;
INSERT INTO sec_lost.s VALUES (2, 'The harbour of the old town reopened after a winter of repairs to its stone piers and lighthouse.');
SELECT id FROM sec_lost.s ORDER BY id;
DROP TABLE sec_lost.s;
DROP SCHEMA sec_lost;
DROP ROLE sec_lost_owner;

-- A DBA who revokes EXECUTE on every function of schema dedup from PUBLIC breaks
-- no DDL on tables that are not enabled: the ALTER TABLE event trigger returns
-- before naming an internal function (it failed every ALTER TABLE of every
-- non-superuser with 42501 on dedup._retypes_duplicate_of). Inserts into an
-- enabled table still work. In a transaction rolled back, which puts the grants
-- back as they were.
CREATE ROLE sec_ddl_owner;
GRANT CREATE ON SCHEMA public TO sec_ddl_owner;
CREATE TABLE sec_ddl_en (id int PRIMARY KEY, body text);
SELECT dedup.enable('sec_ddl_en', 'body');
GRANT SELECT, INSERT ON sec_ddl_en TO sec_ddl_owner;
BEGIN;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA dedup FROM PUBLIC;
SET ROLE sec_ddl_owner;
CREATE TABLE sec_ddl_plain (id int PRIMARY KEY, body text);
ALTER TABLE sec_ddl_plain ADD COLUMN x int;
ALTER TABLE sec_ddl_plain RENAME COLUMN x TO y;
CREATE TABLE sec_ddl_parts (id int, body text) PARTITION BY RANGE (id);
CREATE TABLE sec_ddl_parts1 PARTITION OF sec_ddl_parts FOR VALUES FROM (0) TO (10);
ALTER TABLE sec_ddl_parts DETACH PARTITION sec_ddl_parts1;
ALTER TABLE sec_ddl_parts ATTACH PARTITION sec_ddl_parts1 FOR VALUES FROM (0) TO (10);
DROP TABLE sec_ddl_plain, sec_ddl_parts;
INSERT INTO sec_ddl_en VALUES (1, 'The harbour of the old town reopened after a winter of repairs to its stone piers and lighthouse.');
INSERT INTO sec_ddl_en VALUES (2, 'The harbour of the old town reopened after a winter of repairs to its stone piers and lighthouse.');
SELECT id, duplicate_of FROM sec_ddl_en ORDER BY id;
RESET ROLE;
ROLLBACK;
DROP TABLE sec_ddl_en;
REVOKE CREATE ON SCHEMA public FROM sec_ddl_owner;
DROP ROLE sec_ddl_owner;
-- A table's owner changes its settings by disable and enable in one transaction
-- (README) also when a model trained on its collection keeps the collection with
-- no table meanwhile: within that transaction the table still counts as the
-- collection's, for joining it and for using its model. Once a disable has
-- committed, the collection reads no table and is the configuration roles'.
CREATE ROLE sec_kept_owner;
GRANT CREATE ON SCHEMA public TO sec_kept_owner;
SET ROLE sec_kept_owner;
CREATE TABLE sec_kept2 (id int PRIMARY KEY, body text);
SELECT dedup.enable('sec_kept2', 'body');
INSERT INTO sec_kept2 SELECT i, format('Story %s: the council approved budget line %s for the northern district. Quillmarsh %s.', i, i, i) FROM generate_series(1, 12) i;
RESET ROLE;
SELECT dedup.train('sec_kept2_model', 'sec_kept2', $$SELECT a.dedup_doc, b.dedup_doc, a.id % 2 = 0, false FROM sec_kept2 a JOIN sec_kept2 b ON b.id = a.id % 12 + 1$$) IS NOT NULL AS trained;
SET ROLE sec_kept_owner;
BEGIN;
SELECT dedup.disable('sec_kept2');
SET LOCAL client_min_messages = warning;  -- enable's progress
SELECT dedup.enable('sec_kept2', 'body', action => 'skip');
COMMIT;
BEGIN;
SELECT dedup.disable('sec_kept2');
SET LOCAL client_min_messages = warning;
SELECT dedup.enable('sec_kept2', 'body', model => 'sec_kept2_model');
COMMIT;
SELECT model, action FROM dedup.enabled_tables WHERE tbl = 'sec_kept2'::regclass;
-- dedup.available_models lists the stored models a role may name: the owner sees
-- the model of its table's collection (and no weights); once the collection reads
-- no table, only the configuration roles do.
SELECT name, collection, kernel, version FROM dedup.available_models WHERE name LIKE 'sec_kept2%';
RESET ROLE;
CREATE ROLE sec_kept_stranger;
SET ROLE sec_kept_stranger;
SELECT count(*) AS listed_for_a_stranger FROM dedup.available_models WHERE name LIKE 'sec_kept2%';
RESET ROLE;
DROP ROLE sec_kept_stranger;
SET ROLE sec_kept_owner;
SELECT dedup.disable('sec_kept2');
SELECT count(*) AS listed FROM dedup.available_models WHERE name LIKE 'sec_kept2%';
SELECT err($$SELECT dedup.enable('sec_kept2', 'body')$$);
SELECT err($$SELECT dedup.enable('sec_kept2', 'body', collection => 'sec_kept2_new', model => 'sec_kept2_model')$$);
SELECT err($$SELECT dedup.pair_score('sec_kept2_model', dedup.to_document('a b c'), dedup.to_document('a b c'))$$);
SET client_min_messages = warning;
SELECT dedup.enable('sec_kept2', 'body', collection => 'sec_kept2_new');
RESET client_min_messages;
RESET ROLE;
SELECT count(*) AS listed_for_configuration FROM dedup.available_models WHERE name LIKE 'sec_kept2%';
-- The threshold rule has no weights to export.
SELECT err($$SELECT dedup.export_model('threshold')$$);
SELECT dedup.disable('sec_kept2');
DROP TABLE sec_kept2;
DELETE FROM dedup.models WHERE name = 'sec_kept2_model';
SELECT dedup.drop_collection('sec_kept2');
REVOKE CREATE ON SCHEMA public FROM sec_kept_owner;
DROP ROLE sec_kept_owner;
-- A superuser enables a role's table whose key has several columns: the key's
-- composite type is the table owner's, who may disable the table (which drops it).
CREATE ROLE sec_comp_owner;
GRANT CREATE ON SCHEMA public TO sec_comp_owner;
SET ROLE sec_comp_owner;
CREATE TABLE sec_comp (id bigint, published timestamptz NOT NULL, body text, PRIMARY KEY (id, published)) PARTITION BY RANGE (published);
CREATE TABLE sec_comp_2024 PARTITION OF sec_comp FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
RESET ROLE;
SELECT dedup.enable('sec_comp', 'body', published_at => 'published');
SELECT typowner::regrole AS key_type_owner FROM pg_type WHERE typname = 'sec_comp_dedup_key';
SET ROLE sec_comp_owner;
SELECT dedup.disable('sec_comp');
DROP TABLE sec_comp;
RESET ROLE;
REVOKE CREATE ON SCHEMA public FROM sec_comp_owner;
DROP ROLE sec_comp_owner;
-- The reading functions read the table as its owner: an owner who may not read it
-- (REVOKE SELECT from itself) is named, as the trigger names it.
CREATE ROLE sec_nosel_owner;
CREATE ROLE sec_nosel_reader;
GRANT CREATE ON SCHEMA public TO sec_nosel_owner;
SET ROLE sec_nosel_owner;
CREATE TABLE sec_nosel (id int PRIMARY KEY, body text);
SELECT dedup.enable('sec_nosel', 'body');
GRANT SELECT ON sec_nosel TO sec_nosel_reader;
REVOKE SELECT ON sec_nosel FROM sec_nosel_owner;
SET ROLE sec_nosel_reader;
SELECT err($$SELECT count(*) FROM dedup.pairs('sec_nosel')$$);
SET ROLE sec_nosel_owner;
GRANT SELECT ON sec_nosel TO sec_nosel_owner;
SET ROLE sec_nosel_reader;
SELECT count(*) AS pairs FROM dedup.pairs('sec_nosel');
SET ROLE sec_nosel_owner;
SELECT dedup.disable('sec_nosel');
DROP TABLE sec_nosel;
RESET ROLE;
REVOKE CREATE ON SCHEMA public FROM sec_nosel_owner;
DROP ROLE sec_nosel_owner;
DROP ROLE sec_nosel_reader;
-- enable's backfill body weighs with the collection's statistics: a reader of one
-- table of a shared collection gets 42501 from it, as from dedup.pairs.
CREATE ROLE sec_orig_reader;
CREATE TABLE sec_orig_pub (id int PRIMARY KEY, body text);
CREATE TABLE sec_orig_secret (id int PRIMARY KEY, body text);
SELECT dedup.create_collection('sec_orig');
SELECT dedup.enable('sec_orig_pub', 'body', collection => 'sec_orig'),
       dedup.enable('sec_orig_secret', 'body', collection => 'sec_orig');
GRANT SELECT ON sec_orig_pub TO sec_orig_reader;
SET ROLE sec_orig_reader;
SELECT err($$SELECT count(*) FROM dedup.pairs('sec_orig_pub')$$);
SELECT err($$SELECT count(*) FROM dedup._originals('sec_orig_pub'::regclass, NULL)$$);
RESET ROLE;
SELECT dedup.disable('sec_orig_pub'), dedup.disable('sec_orig_secret');
DROP TABLE sec_orig_pub, sec_orig_secret;
SELECT dedup.drop_collection('sec_orig');
DROP ROLE sec_orig_reader;
