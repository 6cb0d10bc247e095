-- Hostile and edge input: decoders bound what they allocate, every value
-- round-trips through its text form, and the index answers as a seqscan does.

-- A binary document whose front-coded terms grow (entry i shares i bytes with the
-- previous one): the old decoder built 128 MB of text from 80 KB; now 22P03.
CREATE TEMP TABLE bomb_src (b bytea);
INSERT INTO bomb_src
SELECT '\x0100000000'::bytea || '\x00000000000000000000000000000000'::bytea || '\x807d'::bytea
    || string_agg(CASE WHEN i < 128 THEN set_byte('\x00'::bytea, 0, i)
                       ELSE set_byte(set_byte('\x0000'::bytea, 0, (i & 127) | 128), 1, i >> 7) END
                  || '\x016101'::bytea, ''::bytea ORDER BY i)
    || '\x00000000'::bytea
FROM generate_series(0, 15999) AS i;
COPY bomb_src TO '/tmp/pg_dedup_regress_bomb.bin' WITH (FORMAT binary);
CREATE TEMP TABLE bomb_dst (d dedup.document);
SELECT err($$COPY bomb_dst FROM '/tmp/pg_dedup_regress_bomb.bin' WITH (FORMAT binary)$$);
-- The same list cut at 128 terms (each at most 128 bytes) loads.
TRUNCATE bomb_src;
INSERT INTO bomb_src
SELECT '\x0100000000'::bytea || '\x00000000000000000000000000000000'::bytea || '\x8001'::bytea
    || string_agg(CASE WHEN i < 128 THEN set_byte('\x00'::bytea, 0, i)
                       ELSE set_byte(set_byte('\x0000'::bytea, 0, (i & 127) | 128), 1, i >> 7) END
                  || '\x016101'::bytea, ''::bytea ORDER BY i)
    || '\x00000000'::bytea
FROM generate_series(0, 127) AS i;
COPY bomb_src TO '/tmp/pg_dedup_regress_bomb.bin' WITH (FORMAT binary);
COPY bomb_dst FROM '/tmp/pg_dedup_regress_bomb.bin' WITH (FORMAT binary);
SELECT dedup.summary(d)->>'terms' AS terms FROM bomb_dst;
-- Words whose stem is over 128 bytes are no terms; such a term in text is refused.
SELECT dedup.tokens(repeat('x', 128), 'simple') = ARRAY[repeat('x', 128)] AS kept, dedup.tokens(repeat('x', 129), 'simple') AS dropped;
SELECT err($$SELECT ('{"v":1,"terms":{"' || repeat('x', 129) || '":1}}')::dedup.document$$);

-- Every value round-trips through its text form (a dump restores it).
SELECT d::text::dedup.document::text = d::text AS same, dedup.summary(d)->>'published_at' AS published_at
FROM (VALUES (dedup.to_document('alpha beta gamma', published_at => 'infinity')),
             (dedup.to_document('alpha beta gamma', published_at => '-infinity')),
             (dedup.to_document('alpha beta gamma', published_at => '4714-11-24 00:00:00+00 BC')),
             (dedup.to_document('alpha beta gamma', published_at => '294276-12-31 23:59:59.999999+00'))) v(d);
SELECT err($$SELECT '{"v":1,"numbers":[1e300]}'::dedup.document$$);
SELECT '{"v":1,"numbers":[3.50,12,"-0.25"],"source":""}'::dedup.document::text::dedup.document::text AS normalised;

-- The index answers as a seqscan does, across schemes.
CREATE TEMP TABLE gin_sigs (id int, sig dedup.signature);
INSERT INTO gin_sigs SELECT g, 'topwords:{1,2,3}' FROM generate_series(1, 1000) g;
INSERT INTO gin_sigs SELECT 1000 + g, s::dedup.signature FROM generate_series(1, 10) g,
    (VALUES ('imatch:{1,2,3}'), ('longest:{1,2,3}')) v(s);
CREATE INDEX ON gin_sigs USING gin (sig dedup.signature_ops);
ANALYZE gin_sigs;
CREATE TEMP TABLE gin_queries (q dedup.signature, min_shared int, threshold float8);
INSERT INTO gin_queries VALUES ('imatch:{1}', 3, 0.8), ('topwords:{1,2,3}', 3, 0.8), ('topwords:{1,2,3}', 4, 0.8),
    ('longest:{1,2,3}', 3, 0.8), ('longest:{1,2,4}', 3, 1), ('longest:{1,2,4}', 3, 0.6), ('imatch:{9}', 3, 0.8);
CREATE FUNCTION pg_temp.count_with(q dedup.signature, min_shared int, threshold float8, idx boolean) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    PERFORM set_config('dedup.min_shared_keys', min_shared::text, true);
    PERFORM set_config('dedup.similarity_threshold', threshold::text, true);
    PERFORM set_config('enable_seqscan', CASE WHEN idx THEN 'off' ELSE 'on' END, true);
    PERFORM set_config('enable_bitmapscan', CASE WHEN idx THEN 'on' ELSE 'off' END, true);
    -- EXECUTE plans anew with the settings just made.
    EXECUTE 'SELECT count(*) FROM gin_sigs WHERE sig OPERATOR(dedup.%) $1' INTO n USING q;
    RETURN n;
END $$;
SELECT q, min_shared, threshold, pg_temp.count_with(q, min_shared, threshold, true) AS by_index,
       pg_temp.count_with(q, min_shared, threshold, false) AS by_seqscan
FROM gin_queries;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET dedup.min_shared_keys;
RESET dedup.similarity_threshold;

-- Long work can be cancelled: statement_timeout stops the analysis of a large text.
-- 9.9 MB of 300,000 distinct words, made beforehand: its analysis takes ~0.9 s in
-- a release build (a text of two words repeated took 65 ms, inside the timeout).
CREATE TEMP TABLE long_text AS SELECT string_agg(md5(i::text), ' ') AS t FROM generate_series(1, 300000) i;
SET statement_timeout = '100ms';
SELECT err($$SELECT dedup.to_document(t) FROM long_text$$);
RESET statement_timeout;
DROP TABLE long_text;

-- JSON that jsonb holds and pg_dedup cannot read (a number out of range, deep
-- nesting) is refused as an invalid parameter, never an internal error.
SELECT err($$SELECT dedup.create_collection('hostile_json', options => '{"k": 1e400}')$$);
SELECT err($$SELECT dedup.import_model(('{"a": ' || repeat('[', 200) || repeat(']', 200) || '}')::jsonb)$$);
SELECT err($$SELECT dedup.train('m', 'hostile_json', 'SELECT 1', options => '{"folds": 1e400}')$$);
SELECT err($$SELECT dedup.create_collection('hostile_json', options => '{"a": "заголовок и длинный текст", "k": 1e400, "z": 1}')$$);
-- A NULL table where other arguments may be NULL: 22004.
SELECT err($$SELECT * FROM dedup.pairs(NULL)$$);
SELECT err($$SELECT * FROM dedup.groups(NULL)$$);
SELECT err($$SELECT * FROM dedup.matrix_quality(NULL)$$);
SELECT err($$SELECT dedup.is_duplicate(NULL, 'текст')$$);
-- A pairs query that is no query.
SELECT dedup.create_collection('hostile_q');
SELECT err($$SELECT dedup.train('m', 'hostile_q', 'COPY (SELECT 1) TO STDOUT')$$);
SELECT err($$SELECT * FROM dedup.evaluate('default', 'BEGIN')$$);
SELECT err($$SELECT * FROM dedup.filter_quality('COMMIT')$$);
SELECT dedup.drop_collection('hostile_q');
-- U+0000 in a document's term or source (PostgreSQL text cannot hold it).
SELECT err($$SELECT '{"v":1,"terms":{"a\u0000b":1}}'::dedup.document$$);
SELECT err($$SELECT '{"v":1,"source":"\u0000"}'::dedup.document$$);
-- A source is a name or an address: one over 4,096 bytes is refused by
-- to_document. A row carrying one (or a title over max_document_bytes) is
-- checked without it, with a WARNING: padding them does not take a copy past
-- action 'error'.
SELECT err($$SELECT dedup.to_document('Курс доллара вырос до 92 рублей.', source => repeat('s', 4097))$$);
SELECT dedup.to_document('Курс доллара вырос до 92 рублей.', source => repeat('s', 4096)) IS NOT NULL AS source_at_limit;
CREATE TABLE long_src (id int PRIMARY KEY, body text, title text, src text);
SELECT dedup.enable('long_src', 'body', title => 'title', source => 'src', action => 'error');
SELECT dedup.set_collection_options('long_src', '{"max_document_bytes": 2048}');
INSERT INTO long_src VALUES (1, 'Курс доллара на Московской бирже вырос до 92 рублей.', NULL, repeat('s', 100000));
SELECT id, dedup_doc IS NULL AS unchecked, dedup.summary(dedup_doc)->>'source' AS source FROM long_src;
SELECT err($$INSERT INTO long_src VALUES (2, 'Курс доллара на Московской бирже вырос до 92 рублей.', NULL, repeat('t', 5000))$$);
SELECT err($$INSERT INTO long_src VALUES (3, 'Курс доллара на Московской бирже вырос до 92 рублей.', repeat('t', 3000), 'tass')$$);
SELECT dedup.is_duplicate('long_src', 'Курс доллара на Московской бирже вырос до 92 рублей.', NULL, NULL, repeat('x', 4097)) AS found;
-- A text over the limit cannot be checked: action 'error' refuses it (a copy
-- padded with markup nobody sees would go in unchecked); 'mark' and 'skip' store
-- it unchecked with a WARNING.
SELECT err($$INSERT INTO long_src VALUES (4, 'Курс доллара на Московской бирже вырос до 92 рублей.<!--' || repeat('x', 3000) || '-->', NULL, NULL)$$);
-- enable's backfill reads existing rows the same way (it used to fail on such a
-- source), with the collection's limits and not the session's, and reports each
-- kind once for all rows (not a WARNING per row).
INSERT INTO long_src VALUES (5, 'Погода в Москве: ожидается дождь.', NULL, repeat('s', 5000));
SELECT dedup.disable('long_src');
INSERT INTO long_src VALUES (6, repeat('Длинный текст о погоде. ', 100), NULL, NULL);
SELECT dedup.create_collection('long_src_c');
SELECT dedup.set_collection_options('long_src_c', '{"max_document_bytes": 2048}');
SELECT dedup.enable('long_src', 'body', title => 'title', source => 'src', collection => 'long_src_c');
SELECT id, dedup_doc IS NULL AS unchecked, dedup.summary(dedup_doc)->>'source' AS source FROM long_src ORDER BY id;
SELECT dedup.disable('long_src');
SELECT dedup.drop_collection('long_src_c');
DROP TABLE long_src;
-- The TRUNCATE trigger's recompute: STRICT, an unknown collection is 42704, and
-- only the extension's owner may call it.
SELECT dedup._recompute_truncated(NULL, 0) IS NULL AS null_gives_null;
SELECT err($$SELECT dedup._recompute_truncated('no_such_collection', 0)$$);
SELECT has_function_privilege('public', 'dedup._recompute_truncated(text, oid)', 'EXECUTE') AS public_may_call;

-- The trigger functions refuse a direct call (0A000) and a trigger fired otherwise
-- than enable installs it (39P01): attached as a BEFORE row trigger, a statement
-- function returned NULL and so dropped every row, silently.
SELECT err($$SELECT dedup._trigger()$$);
SELECT err($$SELECT dedup._row_stored()$$);
SELECT err($$SELECT dedup._statement_start()$$);
SELECT err($$SELECT dedup._statement_end()$$);
SELECT err($$SELECT dedup._config_changed()$$);
CREATE TABLE hostile_trig (id int);
CREATE TRIGGER t1 BEFORE INSERT ON hostile_trig FOR EACH ROW EXECUTE FUNCTION dedup._row_stored();
SELECT err($$INSERT INTO hostile_trig VALUES (1)$$);
DROP TRIGGER t1 ON hostile_trig;
CREATE TRIGGER t2 BEFORE INSERT ON hostile_trig FOR EACH ROW EXECUTE FUNCTION dedup._statement_start();
SELECT err($$INSERT INTO hostile_trig VALUES (1)$$);
DROP TRIGGER t2 ON hostile_trig;
CREATE TRIGGER t3 BEFORE INSERT ON hostile_trig FOR EACH ROW EXECUTE FUNCTION dedup._statement_end();
SELECT err($$INSERT INTO hostile_trig VALUES (1)$$);
DROP TRIGGER t3 ON hostile_trig;
CREATE TRIGGER t4 BEFORE INSERT ON hostile_trig FOR EACH ROW EXECUTE FUNCTION dedup._config_changed();
SELECT err($$INSERT INTO hostile_trig VALUES (1)$$);
DROP TRIGGER t4 ON hostile_trig;
SELECT count(*) AS rows_kept FROM hostile_trig;
DROP TABLE hostile_trig;
-- Messages quote at most 40 characters of what they refuse, and numbers short;
-- names of collections and models are at most 200 bytes.
SELECT err($$SELECT dedup.collection_limits(repeat('c', 100000))$$);
SELECT err($$SELECT dedup.tokens('x', repeat('l', 100000))$$);
SELECT err($$SELECT dedup.create_collection(repeat('c', 201))$$);
SELECT err($$SELECT dedup.create_collection('huge_k1', 'auto', 'bm25', 1e308, 0.75)$$);
SELECT err($$SELECT dedup.train(repeat('m', 201), 'x', 'SELECT 1', '{}')$$);
-- Found by an audit of README's error table (session 27):
-- a trigger of pg_dedup's functions made by hand, under another name than the
-- one dedup.enable gives it: 39P01 (a second dedup._row_stored counted each row
-- twice).
CREATE TABLE hostile_trg (id int PRIMARY KEY, body text);
SELECT dedup.enable('hostile_trg', 'body');
CREATE TRIGGER again AFTER INSERT OR UPDATE ON hostile_trg FOR EACH ROW EXECUTE FUNCTION dedup._row_stored();
SELECT err($$INSERT INTO hostile_trg VALUES (1, 'Мост через реку откроют весной после ремонта.')$$);
DROP TRIGGER again ON hostile_trg;
-- Nor under enable's name with a shard's suffix, on a table that is no shard.
CREATE TRIGGER dedup_row_stored_7 AFTER INSERT OR UPDATE ON hostile_trg FOR EACH ROW EXECUTE FUNCTION dedup._row_stored();
SELECT err($$INSERT INTO hostile_trg VALUES (1, 'Мост через реку откроют весной после ремонта.')$$);
DROP TRIGGER dedup_row_stored_7 ON hostile_trg;
-- The same for the delete trigger (a second one took each row out twice).
INSERT INTO hostile_trg VALUES (1, 'Мост через реку откроют весной после ремонта.');
CREATE TRIGGER twice AFTER DELETE ON hostile_trg FOR EACH ROW EXECUTE FUNCTION dedup._delete_trigger();
SELECT err($$DELETE FROM hostile_trg$$);
DROP TRIGGER twice ON hostile_trg;
-- And the truncate trigger, also under enable's name with a shard's suffix.
CREATE TRIGGER dedup_truncate_trigger_7 AFTER TRUNCATE ON hostile_trg FOR EACH STATEMENT EXECUTE FUNCTION dedup._truncate_trigger();
SELECT err($$TRUNCATE hostile_trg$$);
DROP TRIGGER dedup_truncate_trigger_7 ON hostile_trg;
-- The check itself: the name, never an empty or non-numeric suffix (no Citus
-- here, so no suffix at all); STRICT.
SELECT err($$SELECT dedup._check_trigger_name('_delete_trigger', 'dedup_delete_trigger', 'dedup_delete_trigger')$$);
SELECT err($$SELECT dedup._check_trigger_name('_delete_trigger', '', 'dedup_delete_trigger')$$);
SELECT err($$SELECT dedup._check_trigger_name('_delete_trigger', 'dedup_delete_trigger_', 'dedup_delete_trigger')$$);
SELECT err($$SELECT dedup._check_trigger_name('_delete_trigger', 'dedup_delete_trigger_x1', 'dedup_delete_trigger')$$);
SELECT dedup._check_trigger_name(NULL, 'x', 'y') IS NULL AS strict_null;
CREATE TABLE hostile_plain (id int PRIMARY KEY, body text);
CREATE TRIGGER by_hand BEFORE INSERT ON hostile_plain FOR EACH ROW EXECUTE FUNCTION dedup._trigger();
SELECT err($$INSERT INTO hostile_plain VALUES (1, 'Мост через реку откроют весной после ремонта.')$$);
DROP TABLE hostile_plain;
SELECT dedup.disable('hostile_trg');
DROP TABLE hostile_trg;
-- A time column of a domain, even over timestamptz: 0A000, as for a key column.
CREATE DOMAIN hostile_time AS timestamptz;
CREATE TABLE hostile_dom (id int PRIMARY KEY, pub hostile_time, body text);
SELECT err($$SELECT dedup.enable('hostile_dom', 'body', published_at => 'pub')$$);
DROP TABLE hostile_dom;
DROP DOMAIN hostile_time;
-- candidates of a relation that does not exist: 42P01, as everywhere.
SELECT err($$SELECT * FROM dedup.candidates(0::regclass, 'imatch:{1}', 5)$$);
-- A refused option's value is quoted at most 40 characters long.
SELECT dedup.create_collection('hostile_kernel');
SELECT err($$SELECT dedup.train('m', 'hostile_kernel', 'SELECT 1', jsonb_build_object('kernel', repeat('k', 100000)))$$);
SELECT dedup.drop_collection('hostile_kernel');

-- A document given as an argument (which any role can write as a literal) holds
-- at most the terms a text of the collection's max_document_bytes can give, one
-- per two bytes: more is refused (54000) before it is weighed (a literal of 12
-- million terms took 4 GB and a minute in compare, past cancels).
SELECT dedup.create_collection('tiny_limit', options => '{"max_document_bytes": 1024}');
CREATE TEMP TABLE many_terms AS
SELECT dedup.to_document(string_agg(translate(left(md5(g::text), 8), '0123456789', 'ghijklmnop'), ' ')) AS d
FROM generate_series(1, 600) g;
SELECT count(*) > 513 AS over_half_of_1024 FROM many_terms, dedup.terms(d);
SELECT err($$SELECT dedup.compare(d, d, 'tiny_limit') FROM many_terms$$);
SELECT err($$SELECT count(*) FROM dedup.weights((SELECT d FROM many_terms), 'tiny_limit')$$);
SELECT err($$SELECT dedup.signature(d, 'tiny_limit') FROM many_terms$$);
SELECT dedup.set_collection_options('tiny_limit', '{"max_document_bytes": 2048}') IS NOT NULL AS raised;
SELECT array_length(dedup.compare(d, d, 'tiny_limit'), 1) AS weighed FROM many_terms;
DROP TABLE many_terms;
SELECT dedup.drop_collection('tiny_limit');
