-- The extension's own queries never call a function or operator of a schema on the
-- caller's search_path: a superuser (the extension's owner) or a role with the
-- configuration rights calling a public function with "$user", public, where
-- another role may create objects, must not run that role's code. Each trap
-- matches its arguments better than pg_catalog's function (pg_catalog is searched
-- first, so only a closer match can win) and says so in a NOTICE: the expected
-- output has none.
CREATE SCHEMA regress_trap;
GRANT USAGE ON SCHEMA regress_trap TO PUBLIC;
SET search_path = regress_trap;
CREATE FUNCTION hit(w text) RETURNS void LANGUAGE plpgsql
    AS $$ BEGIN RAISE NOTICE 'trap % called as %', w, current_user; END $$;
CREATE FUNCTION unnest(a text[]) RETURNS SETOF text LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('unnest(text[])'); RETURN QUERY SELECT * FROM pg_catalog.unnest(a); END $$;
CREATE FUNCTION unnest(a oid[]) RETURNS SETOF oid LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('unnest(oid[])'); RETURN QUERY SELECT * FROM pg_catalog.unnest(a); END $$;
CREATE FUNCTION unnest(a bigint[]) RETURNS SETOF bigint LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('unnest(bigint[])'); RETURN QUERY SELECT * FROM pg_catalog.unnest(a); END $$;
CREATE FUNCTION unnest(a int[]) RETURNS SETOF int LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('unnest(int[])'); RETURN QUERY SELECT * FROM pg_catalog.unnest(a); END $$;
CREATE FUNCTION aa_oid(s oid[], v oid) RETURNS oid[] LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('array_agg(oid)'); RETURN pg_catalog.array_append(s, v); END $$;
CREATE AGGREGATE array_agg(oid) (sfunc = aa_oid, stype = oid[]);
CREATE FUNCTION aa_int8(s bigint[], v bigint) RETURNS bigint[] LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('array_agg(bigint)'); RETURN pg_catalog.array_append(s, v); END $$;
CREATE AGGREGATE array_agg(bigint) (sfunc = aa_int8, stype = bigint[]);
CREATE FUNCTION aa_int4(s int[], v int) RETURNS int[] LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('array_agg(int)'); RETURN pg_catalog.array_append(s, v); END $$;
CREATE AGGREGATE array_agg(int) (sfunc = aa_int4, stype = int[]);
CREATE FUNCTION aa_text(s text[], v text) RETURNS text[] LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('array_agg(text)'); RETURN pg_catalog.array_append(s, v); END $$;
CREATE AGGREGATE array_agg(text) (sfunc = aa_text, stype = text[]);
CREATE FUNCTION eq_or(a oid, b regclass) RETURNS bool LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('=(oid,regclass)'); RETURN a OPERATOR(pg_catalog.=) b::oid; END $$;
CREATE OPERATOR = (leftarg = oid, rightarg = regclass, function = eq_or);
CREATE FUNCTION eq_ro(a regclass, b oid) RETURNS bool LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('=(regclass,oid)'); RETURN a::oid OPERATOR(pg_catalog.=) b; END $$;
CREATE OPERATOR = (leftarg = regclass, rightarg = oid, function = eq_ro);
CREATE FUNCTION eq_rr(a regclass, b regclass) RETURNS bool LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('=(regclass,regclass)'); RETURN a::oid OPERATOR(pg_catalog.=) b::oid; END $$;
CREATE OPERATOR = (leftarg = regclass, rightarg = regclass, function = eq_rr);
CREATE FUNCTION eq_ti(a text, b int) RETURNS bool LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('=(text,int)'); RETURN a OPERATOR(pg_catalog.=) b::text; END $$;
CREATE OPERATOR = (leftarg = text, rightarg = int, function = eq_ti);
CREATE FUNCTION format(a text, b text) RETURNS text LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('format(text,text)'); RETURN pg_catalog.format(a, VARIADIC ARRAY[b]); END $$;
CREATE FUNCTION array_position(a text[], b text) RETURNS int LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('array_position(text[],text)'); RETURN pg_catalog.array_position(a, b); END $$;
CREATE FUNCTION array_length(a text[], d int) RETURNS int LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('array_length(text[],int)'); RETURN pg_catalog.array_length(a, d); END $$;
CREATE FUNCTION cardinality(a text[]) RETURNS int LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('cardinality(text[])'); RETURN pg_catalog.cardinality(a); END $$;
CREATE FUNCTION jsonb_build_object(a text, b text) RETURNS jsonb LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('jsonb_build_object(text,text)'); RETURN pg_catalog.jsonb_build_object(VARIADIC ARRAY[a, b]); END $$;
CREATE FUNCTION to_regclass(a name) RETURNS regclass LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('to_regclass(name)'); RETURN pg_catalog.to_regclass(a::text); END $$;
CREATE FUNCTION quote_ident(a name) RETURNS text LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('quote_ident(name)'); RETURN pg_catalog.quote_ident(a::text); END $$;
CREATE FUNCTION string_agg(a text, d name) RETURNS text LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('string_agg(text,name)'); RETURN a; END $$;
CREATE FUNCTION to_jsonb(a text) RETURNS jsonb LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('to_jsonb(text)'); RETURN pg_catalog.to_jsonb(a); END $$;
CREATE FUNCTION to_jsonb(a bigint) RETURNS jsonb LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('to_jsonb(bigint)'); RETURN pg_catalog.to_jsonb(a); END $$;
CREATE FUNCTION ov_tt(a text[], b text[]) RETURNS bool LANGUAGE plpgsql
    AS $$ BEGIN PERFORM regress_trap.hit('&&(text[],text[])'); RETURN a OPERATOR(pg_catalog.&&) b; END $$;
CREATE OPERATOR && (leftarg = text[], rightarg = text[], function = ov_tt);
RESET search_path;

-- A table and a collection to read, as the superuser with the trap schema where
-- public would be.
CREATE TABLE sp_news (id bigint PRIMARY KEY, title text, body text, published_at timestamptz, src text);
SET search_path = "$user", regress_trap, public;
SELECT dedup.enable('sp_news', 'body', title => 'title', published_at => 'published_at', source => 'src',
                    time_window => '30 days');
INSERT INTO sp_news VALUES
 (1, 'Harbour', 'The harbour of the old town reopened after a winter of repairs to its stone piers and lighthouse.', '2026-01-01', 'a'),
 (2, 'Harbour', 'The harbour of the old town reopened after a winter of repairs to its stone piers and lighthouse.', '2026-01-01', 'b'),
 (3, 'Chess', 'A chess club for pensioners opened in the library, with lessons every Thursday evening.', '2026-01-02', 'b');
UPDATE sp_news SET body = body || ' Updated.' WHERE id = 3;
DELETE FROM sp_news WHERE id = 3;
SELECT id, duplicate_of FROM sp_news ORDER BY id;
SELECT count(*) AS pairs FROM dedup.pairs('sp_news');
SELECT count(*) AS groups FROM dedup.groups('sp_news');
SELECT count(*) AS matrix FROM dedup.matrix_quality('sp_news');
SELECT dedup.is_duplicate('sp_news', 'The harbour of the old town reopened after a winter of repairs to its stone piers and lighthouse.');
SELECT count(*) AS originals FROM dedup.find_original('sp_news', dedup.to_document('The harbour of the old town reopened after a winter'));
SELECT count(*) AS candidates FROM dedup.candidates('sp_news', (SELECT dedup_sig FROM sp_news WHERE id = 1), 10);
SELECT count(*) AS weights FROM dedup.weights(dedup.to_document('harbour town'), 'sp_news');
SELECT count(*) AS top FROM dedup.top_terms(dedup.to_document('harbour town'), 'sp_news', 3);
SELECT dedup.signature(dedup.to_document('harbour town'), 'sp_news') IS NOT NULL AS signature;
SELECT dedup.compare(dedup.to_document('harbour town'), dedup.to_document('harbour'), 'sp_news') IS NOT NULL AS compare;
SELECT dedup.staleness('sp_news') >= 0 AS staleness;
SELECT count(*) AS limits FROM dedup.collection_limits('sp_news');
SELECT dedup.flush_stats('sp_news') IS NULL AS flushed;
SELECT count(*) >= 0 AS status FROM dedup.status;
SELECT dedup.set_time_window('sp_news', '10 days');
SELECT dedup.recompute('sp_news') IS NOT NULL AS recompute;
SELECT dedup.recompute('sp_news', 'dedup_doc', 'sp_news') IS NOT NULL AS recompute_table;
SELECT dedup.set_collection_options('sp_news', '{"min_shared_keys": 4}');
SELECT dedup.create_collection('sp_other');
SELECT dedup.add_document('sp_other', dedup.to_document('harbour'));
SELECT dedup.remove_document('sp_other', dedup.to_document('harbour'));
SELECT dedup.drop_collection('sp_other');
CREATE TEMP TABLE sp_pairs AS
SELECT dedup.to_document(pg_catalog.format('Story %s: the mayor opened bridge number %s over the river today.', i, i)) AS a,
       dedup.to_document(pg_catalog.format('Story %s: the mayor opened bridge number %s over the river today. More follows.', i, i)) AS b,
       true AS a_dup_b, i % 2 = 0 AS b_dup_a FROM generate_series(1, 10) i
UNION ALL
SELECT dedup.to_document(pg_catalog.format('Story %s: the mayor opened bridge number %s.', i, i)),
       dedup.to_document(pg_catalog.format('A storm closed airport %s for the night; %s flights were diverted.', i, i * 3)),
       false, false FROM generate_series(1, 10) i;
SELECT dedup.train('sp_model', 'sp_news', 'SELECT a, b, a_dup_b, b_dup_a FROM sp_pairs', '{"folds": 0}') IS NOT NULL AS trained;
SELECT count(*) AS evaluated FROM dedup.evaluate('sp_model', 'SELECT a, b, a_dup_b, b_dup_a FROM sp_pairs');
SELECT count(*) AS filter FROM dedup.filter_quality($$SELECT a, b, 'sp_news', a_dup_b FROM sp_pairs$$);
SELECT dedup.learn_authority('sp_news', $$SELECT a, b, a_dup_b, b_dup_a FROM sp_pairs$$) IS NOT NULL AS authority;
SELECT dedup.import_model(dedup.export_model('sp_model') || '{"name": "sp_model2"}') IS NOT NULL AS imported;
SELECT dedup.pair_score('sp_model', dedup.to_document('harbour town'), dedup.to_document('harbour')) IS NOT NULL AS score;
SELECT count(*) AS explained FROM dedup.explain_pair('sp_model', dedup.to_document('harbour town'), dedup.to_document('harbour'));
SELECT count(*) AS pairs_model FROM dedup.pairs('sp_news', 'sp_model');
DELETE FROM dedup.models WHERE name = 'sp_model2';
TRUNCATE sp_news;
ALTER TABLE sp_news RENAME COLUMN title TO headline;
ALTER TABLE sp_news ADD COLUMN extra int;
SELECT dedup.disable('sp_news');
CREATE TABLE sp_parts (id bigint, body text) PARTITION BY RANGE (id);
CREATE TABLE sp_parts1 PARTITION OF sp_parts FOR VALUES FROM (0) TO (100);
ALTER TABLE sp_parts ADD PRIMARY KEY (id);
SELECT dedup.enable('sp_parts', 'body');
INSERT INTO sp_parts VALUES (1, 'The harbour of the old town reopened after a winter of repairs to its stone piers and lighthouse.');
CREATE TABLE sp_parts2 PARTITION OF sp_parts FOR VALUES FROM (100) TO (200);
INSERT INTO sp_parts VALUES (150, 'The harbour of the old town reopened after a winter of repairs to its stone piers and lighthouse.');
ALTER TABLE sp_parts DETACH PARTITION sp_parts2;
ALTER TABLE sp_parts ATTACH PARTITION sp_parts2 FOR VALUES FROM (100) TO (200);
TRUNCATE sp_parts1;
DROP TABLE sp_parts2;
SELECT dedup.disable('sp_parts');
DROP TABLE sp_parts;

-- A role with the configuration rights (README, Security), the same path.
CREATE ROLE regress_dedup_dba;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA dedup TO regress_dedup_dba;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA dedup TO regress_dedup_dba;
GRANT SELECT ON sp_news TO regress_dedup_dba;
GRANT SELECT ON sp_pairs TO regress_dedup_dba;
INSERT INTO sp_news VALUES
 (1, 'Harbour', 'The harbour of the old town reopened after a winter of repairs to its stone piers and lighthouse.', '2026-01-01', 'a', NULL);
SET ROLE regress_dedup_dba;
SELECT count(*) AS weights FROM dedup.weights(dedup.to_document('harbour town'), 'sp_news');
SELECT count(*) AS top FROM dedup.top_terms(dedup.to_document('harbour town'), 'sp_news', 3);
SELECT dedup.signature(dedup.to_document('harbour town'), 'sp_news') IS NOT NULL AS signature;
SELECT dedup.compare(dedup.to_document('harbour town'), dedup.to_document('harbour'), 'sp_news') IS NOT NULL AS compare;
SELECT dedup.train('sp_dba_model', 'sp_news', 'SELECT a, b, a_dup_b, b_dup_a FROM sp_pairs', '{"folds": 0}') IS NOT NULL AS trained;
SELECT count(*) AS filter FROM dedup.filter_quality($$SELECT a, b, 'sp_news', a_dup_b FROM sp_pairs$$);
SELECT count(*) AS evaluated FROM dedup.evaluate('sp_dba_model', 'SELECT a, b, a_dup_b, b_dup_a FROM sp_pairs');
SELECT dedup.learn_authority('sp_news', $$SELECT a, b, a_dup_b, b_dup_a FROM sp_pairs$$) IS NOT NULL AS authority;
SELECT count(*) AS explained FROM dedup.explain_pair('sp_dba_model', dedup.to_document('harbour town'), dedup.to_document('harbour'));
DELETE FROM dedup.models WHERE name IN ('sp_dba_model', 'sp_model');
RESET ROLE;
RESET search_path;
DROP TABLE sp_news, sp_pairs;
SELECT dedup.drop_collection('sp_news');
DROP SCHEMA regress_trap CASCADE;
REVOKE ALL ON ALL TABLES IN SCHEMA dedup FROM regress_dedup_dba;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA dedup FROM regress_dedup_dba;
DROP ROLE regress_dedup_dba;
