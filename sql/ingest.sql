-- Deduplication inside INSERT: dedup.enable / dedup.disable, the row trigger,
-- the rejected-rows table, and the public wrappers of the analyst functions.

CREATE TABLE dedup.enabled_tables (
    tbl                  regclass PRIMARY KEY,
    collection_id        int NOT NULL,
    created_collection   boolean NOT NULL,
    body_column          name NOT NULL,
    title_column         name,
    published_at_column  name,
    source_column        name,
    model                text,
    action               text NOT NULL CHECK (action IN ('mark', 'skip', 'error')),
    model_column         name,
    key_column           name NOT NULL,
    enabled_at           timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE dedup.enabled_tables IS 'Tables deduplicated on insert, and how (see dedup.enable)';

CREATE TABLE dedup.rejected (
    id            bigserial PRIMARY KEY,
    tbl           regclass NOT NULL,
    row_data      jsonb NOT NULL,
    original_key  text,
    verdict       dedup.verdict,
    score         float8,
    rejected_at   timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE dedup.rejected IS 'Rows that action ''skip'' kept out of their table, so nothing is lost silently';

SELECT pg_catalog.pg_extension_config_dump('dedup.enabled_tables', '');
SELECT pg_catalog.pg_extension_config_dump('dedup.rejected', '');
SELECT pg_catalog.pg_extension_config_dump('dedup.rejected_id_seq', '');

-- The row trigger dedup._trigger() is written in Rust (src/pg/trigger.rs): BEFORE
-- INSERT, and BEFORE UPDATE OF the text columns.

-- Any change to the tables the trigger's configuration comes from (enabled
-- tables, collections, source authorities, models) empties every backend's cache of it
-- (src/pg/config_cache.rs).
CREATE TRIGGER config_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON dedup.enabled_tables
    FOR EACH STATEMENT EXECUTE FUNCTION dedup._config_changed();
CREATE TRIGGER config_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON dedup.collections
    FOR EACH STATEMENT EXECUTE FUNCTION dedup._config_changed();
CREATE TRIGGER config_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON dedup.sources
    FOR EACH STATEMENT EXECUTE FUNCTION dedup._config_changed();
CREATE TRIGGER config_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON dedup.models
    FOR EACH STATEMENT EXECUTE FUNCTION dedup._config_changed();

-- Keeps the collection statistics right when rows go away.
-- SECURITY DEFINER with a pinned search_path: a role that may delete from an
-- enabled table needs no rights on the extension's tables.
CREATE FUNCTION dedup._delete_trigger() RETURNS trigger
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.dedup_doc IS NOT NULL THEN
        PERFORM dedup._forget(TG_RELID, OLD.dedup_doc);
    END IF;
    RETURN OLD;
END $$;

-- TRUNCATE of an enabled table: its collection's statistics are rebuilt from the
-- tables it reads (the truncated one now empty). A recompute reads every other
-- table of a shared collection too.
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

CREATE FUNCTION dedup.enable(
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
COMMENT ON FUNCTION dedup.enable(regclass, name, name, name, name, text, text, text, name) IS
    'Adds dedup columns, a GIN index and a row trigger to tbl, backfills existing rows; returns the rows backfilled';

CREATE FUNCTION dedup.disable(tbl regclass) RETURNS void
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
COMMENT ON FUNCTION dedup.disable(regclass) IS
    'Removes what dedup.enable added to tbl (trigger, index, columns) and a collection it created';

-- DROP TABLE (or DROP SCHEMA ... CASCADE) of a registered table, or DROP COLUMN of
-- a column a collection reads, takes its registration with it: otherwise
-- dedup.status, dedup.recompute and a later dedup.enable of a table with the same
-- name would all fail on the dropped relation. A collection that dedup.enable
-- created goes too once nothing reads it; a shared one keeps counting the dropped
-- documents until dedup.recompute, and a NOTICE says so. SECURITY DEFINER: the
-- owner of a table may drop it without rights on the dedup schema's tables.
CREATE FUNCTION dedup._forget_dropped() RETURNS event_trigger
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
LANGUAGE plpgsql AS $$
DECLARE
    gone record;
    coll_id int;
    enabled dedup.enabled_tables;
BEGIN
    -- DROP EXTENSION drops the registry with everything else.
    IF to_regclass('dedup.enabled_tables') IS NULL OR to_regclass('dedup.collection_tables') IS NULL THEN
        RETURN;
    END IF;
    FOR gone IN
        SELECT o.objid, o.object_type, o.object_identity, o.address_names[3] AS column_name
        FROM pg_event_trigger_dropped_objects() o
        WHERE o.classid = 'pg_catalog.pg_class'::regclass AND o.object_type IN ('table', 'table column')
    LOOP
        SELECT * INTO enabled FROM dedup.enabled_tables e WHERE e.tbl::oid = gone.objid;
        -- The columns of an enabled table are dedup.disable's business.
        CONTINUE WHEN gone.object_type = 'table column' AND enabled.tbl IS NOT NULL;
        DELETE FROM dedup.enabled_tables e WHERE e.tbl::oid = gone.objid;
        FOR coll_id IN
            DELETE FROM dedup.collection_tables c
            WHERE c.tbl::oid = gone.objid AND (gone.object_type = 'table' OR c.doc_column = gone.column_name)
            RETURNING c.collection_id
        LOOP
            IF enabled.created_collection AND enabled.collection_id = coll_id
               AND NOT EXISTS (SELECT 1 FROM dedup.collection_tables c WHERE c.collection_id = coll_id) THEN
                PERFORM dedup.drop_collection((SELECT name FROM dedup.collections WHERE id = coll_id));
            ELSE
                RAISE NOTICE 'collection "%" still counts the documents of dropped % %',
                    (SELECT name FROM dedup.collections WHERE id = coll_id),
                    replace(gone.object_type, 'table ', ''), gone.object_identity
                    USING HINT = 'dedup.recompute rebuilds its statistics from the tables it still reads';
            END IF;
        END LOOP;
    END LOOP;
END $$;
CREATE EVENT TRIGGER dedup_forget_dropped ON sql_drop EXECUTE FUNCTION dedup._forget_dropped();

CREATE FUNCTION dedup.is_duplicate(tbl regclass, body text, title text DEFAULT NULL,
                                   published_at timestamptz DEFAULT NULL, source text DEFAULT NULL)
    RETURNS boolean STABLE PARALLEL RESTRICTED LANGUAGE sql
    AS $$ SELECT dedup._is_duplicate(tbl::oid, body, title, published_at, source) $$;
COMMENT ON FUNCTION dedup.is_duplicate(regclass, text, text, timestamptz, text) IS
    'The trigger''s decision for a text, without inserting it: true when it duplicates a row of tbl';

CREATE FUNCTION dedup.find_original(tbl regclass, doc dedup.document)
    RETURNS TABLE(key text, verdict dedup.verdict, score float8) STABLE STRICT PARALLEL RESTRICTED LANGUAGE sql
    AS $$ SELECT * FROM dedup._find_original(tbl::oid, doc) $$;
COMMENT ON FUNCTION dedup.find_original(regclass, dedup.document) IS
    'The originals (first of each chain) that doc duplicates in tbl, best first';

CREATE FUNCTION dedup.pairs(tbl regclass, model text DEFAULT NULL)
    RETURNS TABLE(a text, b text, verdict dedup.verdict, score float8) STABLE PARALLEL RESTRICTED LANGUAGE sql
    AS $$ SELECT * FROM dedup._pairs(tbl::oid, model) $$;
COMMENT ON FUNCTION dedup.pairs(regclass, text) IS
    'Every duplicate pair of tbl (a < b by key), candidates found through the signature index';

CREATE FUNCTION dedup.groups(tbl regclass, model text DEFAULT NULL)
    RETURNS TABLE(key text, group_id bigint, is_original boolean) STABLE PARALLEL RESTRICTED LANGUAGE sql
    AS $$ SELECT * FROM dedup._groups(tbl::oid, model) $$;
COMMENT ON FUNCTION dedup.groups(regclass, text) IS
    'Connected groups of duplicates; the original is the earliest document, then the most authoritative';

CREATE FUNCTION dedup.matrix_quality(tbl regclass, model text DEFAULT NULL)
    RETURNS TABLE(pairs bigint, symmetry float8, transitivity float8) STABLE PARALLEL RESTRICTED LANGUAGE sql
    AS $$ SELECT * FROM dedup._matrix_quality(tbl::oid, model) $$;
COMMENT ON FUNCTION dedup.matrix_quality(regclass, text) IS
    'Lande et al.''s symmetry S and transitivity T of the duplicate relation of tbl';

-- Per collection: documents, duplicates, rejected rows, last recompute, staleness.
CREATE FUNCTION dedup._duplicates(collection_id int) RETURNS bigint
STABLE STRICT PARALLEL SAFE LANGUAGE plpgsql AS $$
DECLARE
    t regclass;
    n bigint := 0;
    k bigint;
BEGIN
    FOR t IN SELECT e.tbl FROM dedup.enabled_tables e WHERE e.collection_id = _duplicates.collection_id
             AND EXISTS (SELECT 1 FROM pg_catalog.pg_class r WHERE r.oid = e.tbl) LOOP
        EXECUTE format('SELECT count(*) FROM %s WHERE duplicate_of IS NOT NULL', t) INTO k;
        n := n + k;
    END LOOP;
    RETURN n;
END $$;

CREATE VIEW dedup.status AS
SELECT c.name AS collection,
       s.n_docs + (SELECT coalesce(sum(p.n_docs), 0) FROM dedup.term_stats_pending p
                   WHERE p.collection_id = c.id)::bigint AS documents,
       dedup._duplicates(c.id) AS duplicates,
       (SELECT count(*) FROM dedup.rejected r JOIN dedup.enabled_tables e ON e.tbl = r.tbl
        WHERE e.collection_id = c.id) AS rejected,
       s.last_recompute,
       dedup.staleness(c.name) AS staleness
FROM dedup.collections c JOIN dedup.collection_stats s ON s.collection_id = c.id;
COMMENT ON VIEW dedup.status IS 'Per collection: documents, duplicates, rejected rows, last recompute and staleness';

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

-- Privileges: PUBLIC may use the schema (its types, and the functions it may
-- execute), and nothing of the extension's tables; the trigger does its
-- bookkeeping with the extension owner's rights (src/pg/privilege.rs).
GRANT USAGE ON SCHEMA dedup TO PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA dedup FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA dedup FROM PUBLIC;
