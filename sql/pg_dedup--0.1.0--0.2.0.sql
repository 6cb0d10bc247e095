-- pg_dedup 0.1.0 -> 0.2.0. Run by ALTER EXTENSION pg_dedup UPDATE (search_path is
-- the extension's schema). The result equals a fresh install of 0.2.0
-- (tests/upgrade/upgrade.sh compares the catalogs).
\echo Use "ALTER EXTENSION pg_dedup UPDATE TO '0.2.0'" to load this file. \quit

-- A transaction's statistics changes are one pending row (src/pg/stats.rs), with
-- its change of N, total length and change count (0.1.0's rows counted N at once).
ALTER TABLE dedup.term_stats_pending ADD COLUMN dfs int8[],
    ADD COLUMN n_docs bigint NOT NULL DEFAULT 0,
    ADD COLUMN total_len bigint NOT NULL DEFAULT 0,
    ADD COLUMN changes bigint NOT NULL DEFAULT 0;
COMMENT ON TABLE dedup.term_stats_pending IS
    'Committed statistics changes waiting to be folded into term_stats and collection_stats (dedup.stats_batch); dedup.flush_stats folds them now';

-- Ownership checks.
-- The table's single-column primary key: its name and type (one definition: the
-- trigger's Rust code and dedup.enable both ask this).
CREATE FUNCTION dedup._primary_key(tbl regclass, OUT name name, OUT type text)
STABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp LANGUAGE sql AS $$
    SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod)
    FROM pg_catalog.pg_index i
    JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
    WHERE i.indrelid = tbl AND i.indisprimary AND i.indnatts = 1
$$;
COMMENT ON FUNCTION dedup._primary_key(regclass) IS
    'The single-column primary key of tbl: its name and type (no row without one)';

CREATE FUNCTION dedup._require_owner(tbl regclass) RETURNS void
STABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp LANGUAGE plpgsql AS $$
BEGIN
    IF NOT pg_catalog.pg_has_role(current_user,
            (SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid = tbl), 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', tbl USING ERRCODE = 'insufficient_privilege';
    END IF;
END $$;
COMMENT ON FUNCTION dedup._require_owner(regclass) IS
    'Raises 42501 unless the current user owns tbl (or is a member of its owning role)';

CREATE FUNCTION dedup._require_collection_owner(collection text) RETURNS void
STABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp LANGUAGE plpgsql AS $$
DECLARE t regclass;
BEGIN
    FOR t IN SELECT ct.tbl FROM dedup.collection_tables ct JOIN dedup.collections c ON c.id = ct.collection_id
             WHERE c.name = collection AND EXISTS (SELECT 1 FROM pg_catalog.pg_class r WHERE r.oid = ct.tbl) LOOP
        PERFORM dedup._require_owner(t);
    END LOOP;
END $$;
COMMENT ON FUNCTION dedup._require_collection_owner(text) IS
    'Raises 42501 unless the current user owns every table the collection reads';

-- recompute(tbl, ...) checks ownership.
CREATE OR REPLACE FUNCTION dedup.recompute(tbl regclass, doc_column name, collection text) RETURNS bigint
    VOLATILE STRICT PARALLEL UNSAFE LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM dedup._require_owner(tbl);
    PERFORM dedup._require_collection_owner(collection);
    RETURN dedup._recompute(collection, tbl::oid, doc_column::text);
END $$;

-- New C functions.
CREATE  FUNCTION "collection_limits"(
	"collection" TEXT /* & str */
) RETURNS TABLE (
	"max_document_bytes" bigint,  /* i64 */
	"min_word_length" INT,  /* i32 */
	"min_shared_keys" INT,  /* i32 */
	"similarity_threshold" double precision  /* f64 */
)
STRICT STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'collection_limits_wrapper';

CREATE  FUNCTION "set_collection_options"(
	"collection" TEXT, /* & str */
	"options" jsonb /* JsonB */
) RETURNS jsonb /* JsonB */
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'set_collection_options_wrapper';

CREATE  FUNCTION "_originals"(
	"tbl" oid, /* pg_sys :: Oid */
	"model" TEXT /* Option < & str > */
) RETURNS TABLE (
	"key" TEXT,  /* String */
	"original" TEXT  /* String */
)
STABLE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_originals_wrapper';

-- Table lookups run only in the leader: in a parallel worker they failed with
-- "cannot assign XIDs during a parallel operation".
ALTER FUNCTION dedup._candidates(oid, dedup.signature, integer) PARALLEL RESTRICTED;
ALTER FUNCTION dedup.candidates(regclass, dedup.signature, integer) PARALLEL RESTRICTED;
ALTER FUNCTION dedup._is_duplicate(oid, text, text, timestamptz, text) PARALLEL RESTRICTED;
ALTER FUNCTION dedup.is_duplicate(regclass, text, text, timestamptz, text) PARALLEL RESTRICTED;
ALTER FUNCTION dedup._find_original(oid, dedup.document) PARALLEL RESTRICTED;
ALTER FUNCTION dedup.find_original(regclass, dedup.document) PARALLEL RESTRICTED;
ALTER FUNCTION dedup._pairs(oid, text) PARALLEL RESTRICTED;
ALTER FUNCTION dedup.pairs(regclass, text) PARALLEL RESTRICTED;
ALTER FUNCTION dedup._groups(oid, text) PARALLEL RESTRICTED;
ALTER FUNCTION dedup.groups(regclass, text) PARALLEL RESTRICTED;
ALTER FUNCTION dedup._matrix_quality(oid, text) PARALLEL RESTRICTED;
ALTER FUNCTION dedup.matrix_quality(regclass, text) PARALLEL RESTRICTED;

CREATE FUNCTION "_statement_end"()
	RETURNS TRIGGER
	LANGUAGE c
	AS 'MODULE_PATHNAME', '_statement_end_wrapper';

CREATE FUNCTION "_statement_start"()
	RETURNS TRIGGER
	LANGUAGE c
	AS 'MODULE_PATHNAME', '_statement_start_wrapper';

CREATE FUNCTION "_row_stored"()
	RETURNS TRIGGER
	LANGUAGE c
	AS 'MODULE_PATHNAME', '_row_stored_wrapper';

-- The delete trigger runs with the owner's rights.
CREATE OR REPLACE FUNCTION dedup._delete_trigger() RETURNS trigger
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.dedup_doc IS NOT NULL THEN
        PERFORM dedup._forget(TG_RELID, OLD.dedup_doc);
    END IF;
    RETURN OLD;
END $$;

CREATE FUNCTION dedup._truncate_trigger() RETURNS trigger
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM dedup._recompute(c.name, NULL, NULL)
    FROM dedup.enabled_tables e JOIN dedup.collections c ON c.id = e.collection_id
    WHERE e.tbl = TG_RELID;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION dedup._truncate_trigger() IS
    'TRUNCATE trigger dedup.enable installs: rebuilds the collection statistics without the truncated rows';

-- enable and disable: ownership, the collection's limits, the new triggers.
CREATE OR REPLACE FUNCTION dedup.enable(
    tbl regclass,
    body name,
    title name DEFAULT NULL,
    published_at name DEFAULT NULL,
    source name DEFAULT NULL,
    collection text DEFAULT NULL,
    model text DEFAULT NULL,
    action text DEFAULT 'mark',
    model_column name DEFAULT NULL
) RETURNS bigint
VOLATILE PARALLEL UNSAFE LANGUAGE plpgsql AS $$
DECLARE
    key_col name;
    key_type text;
    -- The default collection is the table's own: its name, schema-qualified
    -- outside schema public, so tables of one name in two schemas never share one.
    coll text := coalesce(collection, (SELECT CASE WHEN n.nspname = 'public' THEN c.relname
                                                   ELSE n.nspname || '.' || c.relname END
                                       FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                                       WHERE c.oid = tbl));
    created boolean := false;
    coll_id int;
    col name;
    text_cols text;
    idx text;
    n bigint;
    lim_bytes bigint;
    lim_words int;
    saved_words text;
    saved_bytes text;
BEGIN
    IF tbl IS NULL OR body IS NULL THEN
        RAISE EXCEPTION 'tbl and body must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM dedup._require_owner(tbl);
    PERFORM dedup._require_collection_owner(coll);
    IF EXISTS (SELECT 1 FROM dedup.enabled_tables e WHERE e.tbl = enable.tbl) THEN
        RAISE EXCEPTION 'table % is already enabled for deduplication', tbl
            USING ERRCODE = 'duplicate_object', HINT = 'call dedup.disable first to change its settings';
    END IF;
    SELECT k.name, k.type INTO key_col, key_type FROM dedup._primary_key(tbl) k;
    IF key_col IS NULL THEN
        RAISE EXCEPTION 'table % has no single-column primary key', tbl
            USING ERRCODE = 'invalid_table_definition',
                  HINT = 'pg_dedup stores the original''s key in duplicate_of: add a primary key such as "id bigint generated always as identity primary key"';
    END IF;
    FOREACH col IN ARRAY ARRAY[body, title, published_at, source, model_column] LOOP
        IF col IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM pg_attribute WHERE attrelid = tbl AND attname = col AND attnum > 0 AND NOT attisdropped) THEN
            RAISE EXCEPTION 'column "%" of relation % does not exist', col, tbl USING ERRCODE = 'undefined_column';
        END IF;
    END LOOP;
    -- No model: the built-in 'default'; 'threshold': the threshold rule (stored as NULL).
    model := CASE WHEN model IS NULL THEN 'default' WHEN model = 'threshold' THEN NULL ELSE model END;
    PERFORM dedup._validate_enable(model, action);
    IF NOT EXISTS (SELECT 1 FROM dedup.collections c WHERE c.name = coll) THEN
        PERFORM dedup.create_collection(coll);
        created := true;
    END IF;
    SELECT id INTO coll_id FROM dedup.collections c WHERE c.name = coll;

    EXECUTE format('ALTER TABLE %s ADD COLUMN dedup_doc dedup.document, ADD COLUMN dedup_sig dedup.signature, '
                   'ADD COLUMN duplicate_of %s, ADD COLUMN dedup_verdict dedup.verdict', tbl, key_type);
    idx := format('%I.%I', (SELECT nspname FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid WHERE c.oid = tbl),
                  (SELECT relname FROM pg_class WHERE oid = tbl) || '_dedup_sig_idx');
    EXECUTE format('CREATE INDEX %I ON %s USING gin (dedup_sig dedup.signature_ops)',
                   (SELECT relname FROM pg_class WHERE oid = tbl) || '_dedup_sig_idx', tbl);
    -- Documents stay in the row, compressed (STORAGE MAIN), rather than in the TOAST
    -- table: every insert reads its candidates' documents, and an out-of-line one
    -- costs a TOAST index probe and chunk fetches on top of the heap fetch. At 100k
    -- rows of ~850-word documents this took the trigger from ~180 to ~195 docs/s.
    EXECUTE format('ALTER TABLE %s ALTER COLUMN dedup_doc SET STORAGE MAIN', tbl);
    -- lz4 compresses a document several times faster than the default pglz (pglz
    -- was a tenth of an insert's time); servers built without lz4 keep pglz.
    BEGIN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN dedup_doc SET COMPRESSION lz4', tbl);
    EXCEPTION WHEN feature_not_supported THEN
        NULL;
    END;
    INSERT INTO dedup.enabled_tables (tbl, collection_id, created_collection, body_column, title_column,
                                      published_at_column, source_column, model, action, model_column, key_column)
    VALUES (tbl, coll_id, created, body, title, published_at, source, model, action, model_column, key_col);
    INSERT INTO dedup.collection_tables (collection_id, tbl, doc_column, sig_column)
    VALUES (coll_id, tbl, 'dedup_doc', 'dedup_sig')
    ON CONFLICT ON CONSTRAINT collection_tables_pkey DO UPDATE SET doc_column = 'dedup_doc', sig_column = 'dedup_sig';

    -- Backfill in one pass: documents, then statistics and signatures by recompute,
    -- then duplicate marks from the same pairwise decision as dedup.pairs.
    -- A text over the collection's max_document_bytes is stored unchecked, as the
    -- trigger does, and words are kept by the collection's min_word_length.
    SELECT l.max_document_bytes, l.min_word_length INTO lim_bytes, lim_words
    FROM dedup.collection_limits(coll) l;
    saved_words := current_setting('dedup.min_word_length');
    saved_bytes := current_setting('dedup.max_document_bytes');
    PERFORM set_config('dedup.min_word_length', lim_words::text, true);
    PERFORM set_config('dedup.max_document_bytes', lim_bytes::text, true);
    EXECUTE format('UPDATE %1$s SET dedup_doc = CASE WHEN octet_length(%2$I::text) <= $1 '
                   '    THEN dedup.to_document(%2$I::text, %3$s, %4$s, %5$s, %6$L) END, '
                   'dedup_verdict = CASE WHEN octet_length(%2$I::text) <= $1 THEN ''distinct''::dedup.verdict END',
                   tbl, body,
                   CASE WHEN title IS NULL THEN 'NULL' ELSE format('%I::text', title) END,
                   CASE WHEN published_at IS NULL THEN 'NULL' ELSE format('%I::timestamptz', published_at) END,
                   CASE WHEN source IS NULL THEN 'NULL' ELSE format('%I::text', source) END,
                   (SELECT c.lang FROM dedup.collections c WHERE c.id = coll_id))
    USING lim_bytes;
    GET DIAGNOSTICS n = ROW_COUNT;
    PERFORM set_config('dedup.min_word_length', saved_words, true);
    PERFORM set_config('dedup.max_document_bytes', saved_bytes, true);
    RAISE NOTICE 'enable %: % existing rows read', tbl, n;
    IF n > 0 THEN
        PERFORM dedup.recompute(coll);
    END IF;
    -- The index takes the backfill through its pending list (fastupdate), which is
    -- then merged in one pass and switched off: every insert looks candidates up,
    -- and a lookup reads the whole pending list (up to gin_pending_list_limit,
    -- 4 MB): 3.1 ms instead of 0.1 ms per lookup in a freshly enabled 5,000-row
    -- table. (Built after the backfill instead, the index would be unusable until
    -- this transaction ends: the backfill's HOT updates set indcheckxmin.)
    PERFORM pg_catalog.gin_clean_pending_list(idx::regclass);
    EXECUTE format('ALTER INDEX %s SET (fastupdate = off)', idx);
    IF n > 0 THEN
        EXECUTE format('ANALYZE %s', tbl);
        -- What the trigger would have marked, the rows taken earliest first (not
        -- connected groups: two texts quoted in one anthology are not each other's
        -- copies).
        EXECUTE format('UPDATE %s t SET duplicate_of = o.original::%s, dedup_verdict = ''a_duplicates_b'' '
                       'FROM dedup._originals(%L::regclass::oid, NULL) o WHERE t.%I::text = o.key',
                       tbl, key_type, tbl, key_col);
    END IF;

    -- dedup_doc is among them: a document set by hand is replaced by the text's own,
    -- so the statistics never count a document the table does not hold.
    text_cols := (SELECT string_agg(quote_ident(c), ', ')
                  FROM unnest(ARRAY[body, title, published_at, source, model_column, 'dedup_doc']) AS c WHERE c IS NOT NULL);
    EXECUTE format('CREATE TRIGGER dedup_trigger BEFORE INSERT OR UPDATE OF %s ON %s '
                   'FOR EACH ROW EXECUTE FUNCTION dedup._trigger()', text_cols, tbl);
    EXECUTE format('CREATE TRIGGER dedup_delete_trigger AFTER DELETE ON %s '
                   'FOR EACH ROW EXECUTE FUNCTION dedup._delete_trigger()', tbl);
    EXECUTE format('CREATE TRIGGER dedup_truncate_trigger AFTER TRUNCATE ON %s '
                   'FOR EACH STATEMENT EXECUTE FUNCTION dedup._truncate_trigger()', tbl);
    -- Follow each statement, so that rows counted but never stored (ON CONFLICT, a
    -- later trigger) leave the statistics (src/pg/statement.rs); the end also
    -- releases the signature-key locks of the statement's last row (src/pg/keylocks.rs).
    EXECUTE format('CREATE TRIGGER dedup_statement_start BEFORE INSERT OR UPDATE ON %s '
                   'FOR EACH STATEMENT EXECUTE FUNCTION dedup._statement_start()', tbl);
    EXECUTE format('CREATE TRIGGER dedup_row_stored AFTER INSERT OR UPDATE OF %s ON %s '
                   'FOR EACH ROW EXECUTE FUNCTION dedup._row_stored()', text_cols, tbl);
    EXECUTE format('CREATE TRIGGER dedup_statement_end AFTER INSERT OR UPDATE ON %s '
                   'FOR EACH STATEMENT EXECUTE FUNCTION dedup._statement_end()', tbl);
    RETURN n;
END $$;

CREATE OR REPLACE FUNCTION dedup.disable(tbl regclass) RETURNS void
VOLATILE STRICT PARALLEL UNSAFE LANGUAGE plpgsql AS $$
DECLARE
    cfg dedup.enabled_tables;
    coll text;
BEGIN
    PERFORM dedup._require_owner(tbl);
    SELECT * INTO cfg FROM dedup.enabled_tables e WHERE e.tbl = disable.tbl;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % is not enabled for deduplication', tbl USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    EXECUTE format('DROP TRIGGER IF EXISTS dedup_trigger ON %s', tbl);
    EXECUTE format('DROP TRIGGER IF EXISTS dedup_delete_trigger ON %s', tbl);
    EXECUTE format('DROP TRIGGER IF EXISTS dedup_statement_end ON %s', tbl);
    EXECUTE format('DROP TRIGGER IF EXISTS dedup_statement_start ON %s', tbl);
    EXECUTE format('DROP TRIGGER IF EXISTS dedup_row_stored ON %s', tbl);
    EXECUTE format('DROP TRIGGER IF EXISTS dedup_truncate_trigger ON %s', tbl);
    EXECUTE format('ALTER TABLE %s DROP COLUMN IF EXISTS dedup_sig, DROP COLUMN IF EXISTS dedup_doc, '
                   'DROP COLUMN IF EXISTS duplicate_of, DROP COLUMN IF EXISTS dedup_verdict', tbl);
    DELETE FROM dedup.collection_tables c WHERE c.tbl = disable.tbl AND c.collection_id = cfg.collection_id;
    DELETE FROM dedup.enabled_tables e WHERE e.tbl = disable.tbl;
    SELECT name INTO coll FROM dedup.collections WHERE id = cfg.collection_id;
    IF cfg.created_collection AND coll IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM dedup.collection_tables WHERE collection_id = cfg.collection_id) THEN
        PERFORM dedup.drop_collection(coll);
    END IF;
END $$;

COMMENT ON FUNCTION dedup.set_collection_options(text, jsonb) IS
    'Changes what a collection enforces (max_document_bytes, min_word_length, min_shared_keys, similarity_threshold); returns its options';
COMMENT ON FUNCTION dedup.collection_limits(text) IS
    'What a collection enforces, defaults filled in: the trigger reads these, not the session settings';
COMMENT ON FUNCTION dedup._statement_end() IS
    'Statement trigger dedup.enable installs: releases the signature-key locks of the statement''s last row and checks its statistics changes against the rows stored';
COMMENT ON FUNCTION dedup._statement_start() IS
    'Statement trigger dedup.enable installs: opens the statement''s own level of statistics changes';
COMMENT ON FUNCTION dedup._row_stored() IS
    'AFTER row trigger dedup.enable installs: records each stored row, so rows the executor dropped after the row trigger leave the statistics';

-- Tables enabled under 0.1.0 get the triggers dedup.enable now installs.
DO $$
DECLARE
    e dedup.enabled_tables;
    cols text;
BEGIN
    FOR e IN SELECT * FROM dedup.enabled_tables LOOP
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class r WHERE r.oid = e.tbl);
        cols := (SELECT string_agg(quote_ident(c), ', ')
                 FROM unnest(ARRAY[e.body_column, e.title_column, e.published_at_column, e.source_column,
                                   e.model_column, 'dedup_doc']) AS c WHERE c IS NOT NULL);
        EXECUTE format('DROP TRIGGER IF EXISTS dedup_trigger ON %s', e.tbl);
        EXECUTE format('CREATE TRIGGER dedup_trigger BEFORE INSERT OR UPDATE OF %s ON %s '
                       'FOR EACH ROW EXECUTE FUNCTION dedup._trigger()', cols, e.tbl);
        EXECUTE format('CREATE TRIGGER dedup_truncate_trigger AFTER TRUNCATE ON %s '
                       'FOR EACH STATEMENT EXECUTE FUNCTION dedup._truncate_trigger()', e.tbl);
        EXECUTE format('CREATE TRIGGER dedup_statement_start BEFORE INSERT OR UPDATE ON %s '
                       'FOR EACH STATEMENT EXECUTE FUNCTION dedup._statement_start()', e.tbl);
        EXECUTE format('CREATE TRIGGER dedup_row_stored AFTER INSERT OR UPDATE OF %s ON %s '
                       'FOR EACH ROW EXECUTE FUNCTION dedup._row_stored()', cols, e.tbl);
        EXECUTE format('CREATE TRIGGER dedup_statement_end AFTER INSERT OR UPDATE ON %s '
                       'FOR EACH STATEMENT EXECUTE FUNCTION dedup._statement_end()', e.tbl);
    END LOOP;
END $$;

-- Privileges: PUBLIC may use the schema (its types, and the functions it may
-- execute), and nothing of the extension's tables; the trigger does its
-- bookkeeping with the extension owner's rights (src/pg/privilege.rs).
GRANT USAGE ON SCHEMA dedup TO PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA dedup FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA dedup FROM PUBLIC;

-- 0.2.0 changes the defaults of new collections (topwords signatures of 16 words,
-- 4 shared keys, BM25 k1 = 2.0: see README, "Candidate filter"). Collections that
-- exist keep what they were created with: their stored signatures were computed so.
UPDATE dedup.collections
   SET options = '{"signature_scheme": "imatch", "signature_topwords": 12, "min_shared_keys": 6}'::jsonb || options;
CREATE OR REPLACE FUNCTION dedup."create_collection"(
	"name" TEXT,
	"lang" TEXT DEFAULT 'auto',
	"weighting" TEXT DEFAULT 'bm25',
	"k1" double precision DEFAULT 2.0,
	"b" double precision DEFAULT 0.75,
	"options" jsonb DEFAULT '{}'
) RETURNS void
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'create_collection_wrapper';

-- A comment for every public function (sql/comments.sql).
COMMENT ON FUNCTION dedup.add_document(text, dedup.document) IS
    'Adds a document to a collection''s statistics, written at once (for documents kept outside an enabled table)';
COMMENT ON FUNCTION dedup.remove_document(text, dedup.document) IS
    'Removes a document from a collection''s statistics, written at once (the inverse of add_document)';
COMMENT ON FUNCTION dedup.classify_pair(text, dedup.document, dedup.document) IS
    'The verdict of a model (NULL: the threshold rule) on a pair: distinct, a_duplicates_b, b_duplicates_a or mutual';
COMMENT ON FUNCTION dedup.compare(dedup.document, dedup.document, text) IS
    'The pair vector ρ(a, b) under a collection''s weights, in dedup.feature_names() order; NaN where a feature does not apply';
COMMENT ON FUNCTION dedup.create_collection(text, text, text, double precision, double precision, jsonb) IS
    'Creates a collection: language, weighting (bm25 or tf-ridf), BM25 k1 and b, options (signature scheme and what it enforces)';
COMMENT ON FUNCTION dedup.drop_collection(text) IS
    'Drops a collection and its statistics; refused while an enabled table uses it';
COMMENT ON FUNCTION dedup.explain_pair(text, dedup.document, dedup.document) IS
    'Each feature of the pair in both directions and its contribution to the model''s decision value';
COMMENT ON FUNCTION dedup.export_model(text) IS
    'A stored model (or the built-in default) as versioned JSON, for dedup.import_model elsewhere';
COMMENT ON FUNCTION dedup.import_model(jsonb) IS
    'Stores a model exported by dedup.export_model; returns its name';
COMMENT ON FUNCTION dedup.feature_names() IS
    'The names of the pair features, in the order of dedup.compare';
COMMENT ON FUNCTION dedup.filter_quality(text) IS
    'Recall and efficiency of the candidate filter on labelled pairs (a, b, collection, label), as in Andreev et al. Table 1';
COMMENT ON FUNCTION dedup.fingerprint(text) IS
    'The exact-duplicate key of a text: equal for texts that differ only in case, punctuation, whitespace or markup';
COMMENT ON FUNCTION dedup.flush_stats(text) IS
    'Writes this transaction''s statistics changes of a collection and folds its pending documents (dedup.stats_batch) now; returns the documents folded';
COMMENT ON FUNCTION dedup.learn_authority(text, text) IS
    'Estimates each source''s authority (its share of originals) from labelled pairs and stores it; returns the sources written';
COMMENT ON FUNCTION dedup.numbers(dedup.document) IS
    'The numbers of a document, normalised, in text order';
COMMENT ON FUNCTION dedup.pair_score(text, dedup.document, dedup.document) IS
    'A model''s decision value for "a adds nothing to b": positive means duplicate';
COMMENT ON FUNCTION dedup.shared_keys(dedup.signature, dedup.signature) IS
    'How many keys two signatures share';
COMMENT ON FUNCTION dedup.signature(dedup.document, text) IS
    'A document''s signature under a collection''s weights and signature options';
COMMENT ON FUNCTION dedup.similarity(dedup.signature, dedup.signature) IS
    'Shared keys over the smaller key count (0 when either is empty)';
COMMENT ON FUNCTION dedup.staleness(text) IS
    'How far a collection''s statistics moved since its last recompute: documents added or removed since, over its documents now (0 = fresh)';
COMMENT ON FUNCTION dedup.summary(dedup.document) IS
    'A document''s sizes as jsonb: bytes, words, terms, numbers, sentences, paragraphs, images, links, source, time';
COMMENT ON FUNCTION dedup.terms(dedup.document) IS
    'A document''s stemmed body terms with their frequencies';
COMMENT ON FUNCTION dedup.to_document(text, text, timestamp with time zone, text, text) IS
    'The document model of a text: stems, numbers, sentences, paragraphs, images, links, title, time and source';
COMMENT ON FUNCTION dedup.tokens(text, text) IS
    'The stems of a text in order, stop words left out (russian, english, simple or auto)';
COMMENT ON FUNCTION dedup.top_terms(dedup.document, text, integer) IS
    'A document''s k heaviest terms under a collection''s weights';
COMMENT ON FUNCTION dedup.train(text, text, text, jsonb) IS
    'Trains and stores a named SVM from labelled pairs (a, b, a_dup_b, b_dup_a); returns its cross-validated metrics';
COMMENT ON FUNCTION dedup.weights(dedup.document, text, text) IS
    'Each body term''s weight under a collection''s statistics (bm25 or tf-ridf)';
