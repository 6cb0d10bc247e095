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
-- The whole row identifies a pending row (sql/collections.sql).
ALTER TABLE dedup.term_stats_pending REPLICA IDENTITY FULL;
-- 0.1.0 counted them in collection_stats.pending, which nothing reads any more.
ALTER TABLE dedup.collection_stats DROP COLUMN pending;
-- A table the collection read was dropped since the last recompute, and its
-- documents are still counted: only the configuration rights read the
-- statistics then (src/pg/privilege.rs, may_read_collection).
ALTER TABLE dedup.collection_stats ADD COLUMN dropped_documents boolean NOT NULL DEFAULT false;
COMMENT ON TABLE dedup.term_stats_pending IS
    'Committed statistics changes waiting to be folded into term_stats and collection_stats (dedup.stats_batch); dedup.flush_stats folds them now';

-- A dropped table's rows go with it (dedup._forget_dropped, on every DROP in the
-- database): without it each dropped table, a temporary one too, read them all.
CREATE INDEX rejected_tbl ON dedup.rejected (tbl);

-- The key of the trigger's signature-key lock tags (src/pg/keylocks.rs): pg_locks
-- shows a keyed hash of each key, not the key. Private; not dumped.
CREATE TABLE dedup.lock_secret (
    only_row  boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    secret    uuid NOT NULL DEFAULT pg_catalog.gen_random_uuid()
);
COMMENT ON TABLE dedup.lock_secret IS 'The key that hides signature keys in the trigger''s advisory lock tags; private to the extension''s owner';
INSERT INTO dedup.lock_secret DEFAULT VALUES;
-- Trigger and event trigger functions pin their search_path (they run in the
-- session of whoever writes the configuration or issues the DDL).
ALTER FUNCTION dedup._config_changed() SET search_path = pg_catalog, pg_temp;
CREATE TRIGGER config_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON dedup.lock_secret
    FOR EACH STATEMENT EXECUTE FUNCTION dedup._config_changed();

-- A key of several columns (a partitioned table's) and the time window.
ALTER TABLE dedup.enabled_tables ADD COLUMN key_type regtype,
    ADD COLUMN time_window interval CHECK (time_window > interval '0');

-- Ownership checks.
-- Every column of the table's primary key, in key order, with its type (one row,
-- none without a key): dedup.enable stores a key of several columns in
-- duplicate_of as a composite value of them (one definition: the Rust code and
-- dedup.enable both ask this).
CREATE FUNCTION dedup._key_columns(tbl regclass, OUT names name[], OUT types text[])
STABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp LANGUAGE sql AS $$
    SELECT pg_catalog.array_agg(a.attname ORDER BY k.i),
           pg_catalog.array_agg(pg_catalog.format_type(a.atttypid, a.atttypmod) ORDER BY k.i)
    FROM pg_catalog.pg_index x
    CROSS JOIN LATERAL pg_catalog.unnest(x.indkey::pg_catalog.int2[]) WITH ORDINALITY AS k(att, i)
    JOIN pg_catalog.pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.att
    -- The key's columns, not those a covering index INCLUDEs.
    WHERE x.indrelid = tbl AND x.indisprimary AND k.i <= x.indnkeyatts
    HAVING pg_catalog.count(*) > 0
$$;
COMMENT ON FUNCTION dedup._key_columns(regclass) IS
    'Every primary key column of tbl in key order, and their types (no row without a key)';

CREATE FUNCTION dedup._require_owner(tbl regclass) RETURNS void
STABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp LANGUAGE plpgsql AS $$
DECLARE
    owner oid := (SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid = tbl);
BEGIN
    IF owner IS NULL THEN
        RAISE EXCEPTION 'relation with OID % does not exist', tbl::oid USING ERRCODE = 'undefined_table';
    END IF;
    IF NOT pg_catalog.pg_has_role(current_user, owner, 'USAGE') THEN
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
        IF NOT pg_catalog.pg_has_role(current_user, (SELECT r.relowner FROM pg_catalog.pg_class r WHERE r.oid = t), 'USAGE') THEN
            RAISE EXCEPTION 'must be owner of table %', t USING ERRCODE = 'insufficient_privilege',
                HINT = format('collection "%s" reads that table: only a role that owns every table of a collection may change its statistics or join it', collection);
        END IF;
    END LOOP;
END $$;
COMMENT ON FUNCTION dedup._require_collection_owner(text) IS
    'Raises 42501 unless the current user owns every table the collection reads';

-- recompute(tbl, ...) checks ownership.
CREATE OR REPLACE FUNCTION dedup.recompute(tbl regclass, doc_column name, collection text) RETURNS bigint
    VOLATILE STRICT PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM dedup._require_owner(tbl);
    PERFORM dedup._require_collection_owner(collection);
    RETURN dedup._recompute(collection, tbl::oid, doc_column::text);
END $$;

-- Equality: the same stored bytes, as bytea's (its own C functions read any
-- varlena). What a UNION, a DISTINCT, a comparison of whole rows and logical
-- replication's REPLICA IDENTITY FULL look up for each column.
CREATE FUNCTION dedup._document_eq(dedup.document, dedup.document) RETURNS boolean
    IMMUTABLE STRICT PARALLEL SAFE LANGUAGE internal AS 'byteaeq';
CREATE FUNCTION dedup._document_hash(dedup.document) RETURNS int4
    IMMUTABLE STRICT PARALLEL SAFE LANGUAGE internal AS 'hashvarlena';
CREATE OPERATOR dedup.= (
    LEFTARG = dedup.document,
    RIGHTARG = dedup.document,
    FUNCTION = dedup._document_eq,
    COMMUTATOR = OPERATOR(dedup.=),
    RESTRICT = eqsel,
    JOIN = eqjoinsel,
    HASHES
);
CREATE FUNCTION dedup._document_ne(dedup.document, dedup.document) RETURNS boolean
    IMMUTABLE STRICT PARALLEL SAFE LANGUAGE internal AS 'byteane';
CREATE OPERATOR dedup.<> (
    LEFTARG = dedup.document,
    RIGHTARG = dedup.document,
    FUNCTION = dedup._document_ne,
    COMMUTATOR = OPERATOR(dedup.<>),
    NEGATOR = OPERATOR(dedup.=),
    RESTRICT = neqsel,
    JOIN = neqjoinsel
);
CREATE OPERATOR CLASS dedup.document_hash_ops DEFAULT FOR TYPE dedup.document USING hash AS
    OPERATOR 1 dedup.= (dedup.document, dedup.document),
    FUNCTION 1 dedup._document_hash(dedup.document);

-- Equality: the same stored bytes, as for dedup.document.
CREATE FUNCTION dedup._signature_eq(dedup.signature, dedup.signature) RETURNS boolean
    IMMUTABLE STRICT PARALLEL SAFE LANGUAGE internal AS 'byteaeq';
CREATE FUNCTION dedup._signature_hash(dedup.signature) RETURNS int4
    IMMUTABLE STRICT PARALLEL SAFE LANGUAGE internal AS 'hashvarlena';
CREATE OPERATOR dedup.= (
    LEFTARG = dedup.signature,
    RIGHTARG = dedup.signature,
    FUNCTION = dedup._signature_eq,
    COMMUTATOR = OPERATOR(dedup.=),
    RESTRICT = eqsel,
    JOIN = eqjoinsel,
    HASHES
);
CREATE FUNCTION dedup._signature_ne(dedup.signature, dedup.signature) RETURNS boolean
    IMMUTABLE STRICT PARALLEL SAFE LANGUAGE internal AS 'byteane';
CREATE OPERATOR dedup.<> (
    LEFTARG = dedup.signature,
    RIGHTARG = dedup.signature,
    FUNCTION = dedup._signature_ne,
    COMMUTATOR = OPERATOR(dedup.<>),
    NEGATOR = OPERATOR(dedup.=),
    RESTRICT = neqsel,
    JOIN = neqjoinsel
);
CREATE OPERATOR CLASS dedup.signature_hash_ops DEFAULT FOR TYPE dedup.signature USING hash AS
    OPERATOR 1 dedup.= (dedup.signature, dedup.signature),
    FUNCTION 1 dedup._signature_hash(dedup.signature);

-- New C functions.
CREATE  FUNCTION "collection_limits"(
	"collection" TEXT /* & str */
) RETURNS TABLE (
	"max_document_bytes" bigint,  /* i64 */
	"min_word_length" INT,  /* i32 */
	"min_shared_keys" INT,  /* i32 */
	"similarity_threshold" double precision  /* f64 */
)
STRICT STABLE
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
	"tbl" oid, /* Option < pg_sys :: Oid > */
	"model" TEXT /* Option < & str > */
) RETURNS TABLE (
	"key" TEXT,  /* String */
	"original" TEXT,  /* Option < String > */
	"verdict" dedup.verdict  /* verdict */
)
STABLE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_originals_wrapper';

CREATE  FUNCTION "_count_partition"(
	"tbl" oid, /* pg_sys :: Oid */
	"part" oid, /* pg_sys :: Oid */
	"sign" INT /* i32 */
) RETURNS bigint /* i64 */
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_count_partition_wrapper';

-- The TRUNCATE trigger's recompute (src/pg/recompute.rs).
CREATE  FUNCTION "_recompute_truncated"(
	"collection" TEXT, /* &str */
	"truncated" oid /* pg_sys :: Oid */
) RETURNS bigint /* i64 */
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_recompute_truncated_wrapper';

-- Whether an enabled table's collection still counts a dropped table's documents,
-- for enable (src/pg/registration.rs).
CREATE  FUNCTION "_counts_dropped_documents"(
	"tbl" oid /* pg_sys :: Oid */
) RETURNS bool
STRICT STABLE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_counts_dropped_documents_wrapper';

-- Whether a REPEATABLE READ snapshot sees a trigger's setup (src/pg/snapshot_setup.rs).
CREATE  FUNCTION "_require_setup_in_snapshot"(
	"tbl" oid, /* pg_sys :: Oid */
	"tgname" TEXT /* &str */
) RETURNS void
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_require_setup_in_snapshot_wrapper';

-- enable's backfill analyses each row as the trigger does (src/pg/ingest.rs).
CREATE  FUNCTION "_table_document"(
	"tbl" oid, /* Option < pg_sys :: Oid > */
	"body" TEXT, /* Option < & str > */
	"title" TEXT, /* Option < & str > */
	"published_at" timestamp with time zone, /* Option < TimestampWithTimeZone > */
	"source" TEXT /* Option < & str > */
) RETURNS dedup.document /* Option < DocumentDatum > */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_table_document_wrapper';
-- A time column's value as the trigger reads it (src/pg/times.rs).
CREATE  FUNCTION "_published"(
	"value" anyelement /* pgrx::datum::anyelement::AnyElement */
) RETURNS timestamp with time zone /* core::option::Option<pgrx::datum::time_stamp_with_timezone::TimestampWithTimeZone> */
STRICT STABLE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_published_wrapper';
-- How many rows it analysed without their title or source, for enable's WARNING.
CREATE  FUNCTION "_table_document_left_out"() RETURNS bigint /* i64 */
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_table_document_left_out_wrapper';

-- enable, disable and set_time_window write the registration as the extension's
-- owner once the caller owns the table (src/pg/registration.rs).
CREATE  FUNCTION "_register_table"(
	"tbl" oid, /* Option < pg_sys :: Oid > */
	"collection" TEXT, /* Option < & str > */
	"body" TEXT, /* Option < & str > */
	"title" TEXT, /* Option < & str > */
	"published_at" TEXT, /* Option < & str > */
	"source" TEXT, /* Option < & str > */
	"model" TEXT, /* Option < & str > */
	"action" TEXT, /* Option < & str > */
	"model_column" TEXT, /* Option < & str > */
	"key_column" TEXT, /* Option < & str > */
	"key_type" oid, /* Option < pg_sys :: Oid > */
	"time_window" interval /* Option < Interval > */
) RETURNS INT /* i32 */
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_register_table_wrapper';

CREATE  FUNCTION "_unregister_table"(
	"tbl" oid /* pg_sys :: Oid */
) RETURNS TEXT /* Option < String > */
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_unregister_table_wrapper';

CREATE  FUNCTION "_set_time_window"(
	"tbl" oid, /* Option < pg_sys :: Oid > */
	"time_window" interval /* Option < Interval > */
) RETURNS void
VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_set_time_window_wrapper';

CREATE  FUNCTION "_recheck_partition"(
	"part" oid, /* pg_sys :: Oid */
	"body_column" TEXT /* & str */
) RETURNS bigint /* i64 */
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_recheck_partition_wrapper';

CREATE  FUNCTION "_detached_partitions"() RETURNS oid[] /* alloc::vec::Vec<pgrx_pg_sys::submodules::oids::Oid> */
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_detached_partitions_wrapper';

CREATE  FUNCTION "_may_read_collection"(
	"collection" TEXT /* & str */
) RETURNS bool /* bool */
STRICT STABLE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_may_read_collection_wrapper';

-- Every role may look; it sees the collections whose tables it may read (or all,
-- with the configuration rights). security_barrier: the filter runs before any
-- function of the caller's sees a row.
CREATE OR REPLACE VIEW dedup.status WITH (security_barrier) AS
SELECT c.name AS collection,
       s.n_docs + (SELECT coalesce(sum(p.n_docs), 0) FROM dedup.term_stats_pending p
                   WHERE p.collection_id = c.id)::bigint AS documents,
       dedup._duplicates(c.id) AS duplicates,
       (SELECT count(*) FROM dedup.rejected r JOIN dedup.enabled_tables e ON e.tbl = r.tbl
        WHERE e.collection_id = c.id) AS rejected,
       s.last_recompute,
       dedup.staleness(c.name) AS staleness,
       -- Document changes (an insert or a delete one, an update two) whose
       -- statistics wait for a fold, counted as the folds count them (see README: growing
       -- means no fold runs). The net count of documents, which deletes make
       -- negative and updates leave at 0, hid a backlog.
       (SELECT coalesce(sum(greatest(p.changes, 1)), 0) FROM dedup.term_stats_pending p
        WHERE p.collection_id = c.id)::bigint AS pending_documents
FROM dedup.collections c JOIN dedup.collection_stats s ON s.collection_id = c.id
WHERE dedup._may_read_collection(c.name);
COMMENT ON VIEW dedup.status IS 'Per collection: documents, duplicates, rejected rows, last recompute, staleness, and document changes whose statistics wait for a fold';

CREATE  FUNCTION "_marked_rows"(
	"tbl" oid /* pg_sys :: Oid */
) RETURNS bigint /* i64 */
STRICT STABLE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_marked_rows_wrapper';

-- dedup.status counts each table's marked rows as the table's owner.
CREATE OR REPLACE FUNCTION dedup._duplicates(collection_id int) RETURNS bigint
STABLE STRICT SET search_path = pg_catalog, pg_temp LANGUAGE plpgsql AS $$
DECLARE
    t regclass;
    n bigint := 0;
    unknown boolean := false;
BEGIN
    -- dedup.status lists only the collections the caller may read; called
    -- directly, this says so rather than count (the WARNING below is about the
    -- tables' owners, not the caller).
    IF NOT dedup._may_read_collection((SELECT c.name FROM dedup.collections c
                                       WHERE c.id = _duplicates.collection_id)) THEN
        RAISE EXCEPTION 'permission denied for collection %', _duplicates.collection_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    FOR t IN SELECT e.tbl FROM dedup.enabled_tables e WHERE e.collection_id = _duplicates.collection_id
             AND EXISTS (SELECT 1 FROM pg_catalog.pg_class r WHERE r.oid = e.tbl) LOOP
        -- As the table's owner (src/pg/analyst.rs). An owner who may not read its
        -- own table (no USAGE on its schema) leaves this collection's count
        -- unknown, not dedup.status failing for everyone.
        BEGIN
            n := n + dedup._marked_rows(t::oid);
        EXCEPTION WHEN insufficient_privilege THEN
            unknown := true;
            RAISE WARNING 'duplicates of % not counted: %', t, SQLERRM
                USING HINT = 'its owner needs USAGE on the table''s schema (and SELECT on the table)';
        END;
    END LOOP;
    RETURN CASE WHEN unknown THEN NULL ELSE n END;
END $$;

CREATE  FUNCTION "_leaves_searched"() RETURNS bigint /* i64 */
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_leaves_searched_wrapper';

-- Table lookups are PARALLEL UNSAFE: in a parallel worker they failed with
-- "cannot assign XIDs during a parallel operation", and in the leader of a command
-- that writes (CREATE TABLE AS) under a parallel plan with "cannot start commands
-- during a parallel operation".
ALTER FUNCTION dedup._candidates(oid, dedup.signature, integer) PARALLEL UNSAFE;
-- It reads the models as the extension's owner (SPI): not in a parallel worker.
ALTER FUNCTION dedup._validate_enable(text, text) PARALLEL UNSAFE;
-- As enable, disable and the other recompute: whatever the caller's search_path.
ALTER FUNCTION dedup.recompute(text) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION dedup.candidates(regclass, dedup.signature, integer) PARALLEL UNSAFE;
ALTER FUNCTION dedup._is_duplicate(oid, text, text, timestamptz, text) PARALLEL UNSAFE;
ALTER FUNCTION dedup.is_duplicate(regclass, text, text, timestamptz, text) PARALLEL UNSAFE;
ALTER FUNCTION dedup._find_original(oid, dedup.document) PARALLEL UNSAFE;
ALTER FUNCTION dedup.find_original(regclass, dedup.document) PARALLEL UNSAFE;
ALTER FUNCTION dedup._pairs(oid, text) PARALLEL UNSAFE;
ALTER FUNCTION dedup.pairs(regclass, text) PARALLEL UNSAFE;
COMMENT ON FUNCTION dedup.pairs(regclass, text) IS
    'The duplicate pairs of tbl (a < b by key): each row with its 50 best candidates found through the signature index';
ALTER FUNCTION dedup._groups(oid, text) PARALLEL UNSAFE;
ALTER FUNCTION dedup.groups(regclass, text) PARALLEL UNSAFE;
ALTER FUNCTION dedup._matrix_quality(oid, text) PARALLEL UNSAFE;
ALTER FUNCTION dedup.matrix_quality(regclass, text) PARALLEL UNSAFE;

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

-- Raises 39P01 unless a trigger function fires under the name dedup.enable gives
-- its trigger (src/pg/trigger_entry.rs: the check of the C trigger functions).
CREATE FUNCTION dedup._check_trigger_name(function text, tg_name text, expected text) RETURNS void
    STRICT STABLE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'dedup_check_trigger_name';
COMMENT ON FUNCTION dedup._check_trigger_name(text, text, text) IS
    'Raises 39P01 unless tg_name is expected (or, where Citus is installed, expected_<shard id>): the trigger name check of dedup''s trigger functions';

-- The delete trigger runs with the owner's rights.
CREATE OR REPLACE FUNCTION dedup._delete_trigger() RETURNS trigger
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
LANGUAGE plpgsql AS $$
BEGIN
    -- Only under the name dedup.enable gives it (with a shard's _<id> where Citus
    -- is installed): a second such trigger would take each row out twice.
    PERFORM dedup._check_trigger_name('_delete_trigger', TG_NAME, 'dedup_delete_trigger');
    -- Only as dedup.enable installs it: a column of another type would be cast to
    -- dedup.document by a cast its owner wrote, with this function's rights.
    IF pg_catalog.pg_typeof(OLD.dedup_doc) <> 'dedup.document'::pg_catalog.regtype THEN
        RAISE EXCEPTION 'dedup._delete_trigger fired on a table whose dedup_doc is not a dedup.document'
            USING ERRCODE = 'trigger_protocol_violated', HINT = 'let dedup.enable install it';
    END IF;
    IF OLD.dedup_doc IS NOT NULL THEN
        PERFORM dedup._forget(TG_RELID, OLD.dedup_doc);
    END IF;
    RETURN OLD;
END $$;

CREATE FUNCTION dedup._truncate_trigger() RETURNS trigger
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM dedup._check_trigger_name('_truncate_trigger', TG_NAME, 'dedup_truncate_trigger');
    -- Under REPEATABLE READ, a table enabled after the snapshot has no
    -- registration in it: 40001 rather than leave its truncated rows counted.
    PERFORM dedup._require_setup_in_snapshot(TG_RELID, TG_NAME);
    PERFORM dedup._recompute_truncated(c.name, TG_RELID)
    FROM dedup.enabled_tables e JOIN dedup.collections c ON c.id = e.collection_id
    WHERE e.tbl = TG_RELID OR e.tbl IN (SELECT a.relid FROM pg_catalog.pg_partition_ancestors(TG_RELID) a);
    RETURN NULL;
END $$;
COMMENT ON FUNCTION dedup._truncate_trigger() IS
    'TRUNCATE trigger dedup.enable installs: rebuilds the collection statistics without the truncated rows';

-- The statement triggers of the partitions of an enabled partitioned table.
-- PostgreSQL clones a partitioned table's row triggers onto its partitions (also
-- those created or attached later), not its statement triggers, and a statement
-- that names a partition fires only the partition's own: each partition below the
-- enabled table gets dedup_statement_start, dedup_statement_end and
-- dedup_truncate_trigger, with the enabled table's OID as argument (which tells a
-- partition that was detached). Returns the partitions that got them now.
CREATE FUNCTION dedup._partition_triggers(tbl regclass) RETURNS SETOF regclass
VOLATILE STRICT PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp LANGUAGE plpgsql AS $$
DECLARE
    part regclass;
    state record;
BEGIN
    FOR part IN
        SELECT t.relid FROM pg_catalog.pg_partition_tree(tbl) t
        WHERE t.relid <> tbl AND NOT EXISTS (
            SELECT 1 FROM pg_catalog.pg_trigger g WHERE g.tgrelid = t.relid AND g.tgname = 'dedup_statement_start')
        ORDER BY t.level, t.relid::oid
    LOOP
        EXECUTE format('CREATE TRIGGER dedup_statement_start BEFORE INSERT OR UPDATE ON %s '
                       'FOR EACH STATEMENT EXECUTE FUNCTION dedup._statement_start(%L)', part, tbl::oid);
        EXECUTE format('CREATE TRIGGER dedup_statement_end AFTER INSERT OR UPDATE ON %s '
                       'FOR EACH STATEMENT EXECUTE FUNCTION dedup._statement_end(%L)', part, tbl::oid);
        EXECUTE format('CREATE TRIGGER dedup_truncate_trigger AFTER TRUNCATE ON %s '
                       'FOR EACH STATEMENT EXECUTE FUNCTION dedup._truncate_trigger(%L)', part, tbl::oid);
        -- Each fires when the partitioned table's trigger of its name does (ENABLE
        -- ALWAYS on a logical replication subscriber, say).
        FOR state IN SELECT g.tgname, g.tgenabled FROM pg_catalog.pg_trigger g
                     WHERE g.tgrelid = tbl AND g.tgenabled <> 'O'
                       AND g.tgname IN ('dedup_statement_start', 'dedup_statement_end', 'dedup_truncate_trigger')
        LOOP
            EXECUTE format('ALTER TABLE %s %s TRIGGER %I', part,
                           CASE state.tgenabled WHEN 'A' THEN 'ENABLE ALWAYS' WHEN 'R' THEN 'ENABLE REPLICA'
                                ELSE 'DISABLE' END, state.tgname);
        END LOOP;
        RETURN NEXT part;
    END LOOP;
END $$;
COMMENT ON FUNCTION dedup._partition_triggers(regclass) IS
    'Gives each partition of an enabled partitioned table the statement triggers PostgreSQL does not clone; returns the partitions that got them';

-- Whether an ALTER TABLE command retypes duplicate_of (src/pg/retype.rs).
CREATE FUNCTION dedup._retypes_duplicate_of(cmd pg_ddl_command) RETURNS boolean
    STRICT VOLATILE PARALLEL UNSAFE LANGUAGE c AS 'MODULE_PATHNAME', 'dedup_retypes_duplicate_of';
COMMENT ON FUNCTION dedup._retypes_duplicate_of(pg_ddl_command) IS
    'Whether a collected ALTER TABLE command changes the type of a column named duplicate_of (the event trigger refuses a type that is not the key''s)';

-- What one command of pg_event_trigger_ddl_commands() does to partitions
-- (src/pg/attach.rs).
CREATE FUNCTION dedup._partition_command(cmd pg_ddl_command) RETURNS text
    STRICT VOLATILE PARALLEL UNSAFE LANGUAGE c AS 'MODULE_PATHNAME', 'dedup_partition_command';
COMMENT ON FUNCTION dedup._partition_command(pg_ddl_command) IS
    'What a collected DDL command does to partitions: added (CREATE TABLE ... PARTITION OF, ATTACH PARTITION), detached, or NULL';

-- Drops the composite type of a table's key (dedup.disable, DROP TABLE), unless a
-- table still uses it: a partition detached from the enabled table keeps its
-- duplicate_of column.
CREATE FUNCTION dedup._drop_key_type(key_type text) RETURNS void
VOLATILE STRICT PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp LANGUAGE plpgsql AS $$
DECLARE
    t regtype;
BEGIN
    -- A type that is gone prints as its bare OID (dropped with its schema, say).
    IF key_type ~ '^[0-9]+$' THEN
        RETURN;
    END IF;
    -- Only a composite type, named by its own quoted name, never the text given.
    t := pg_catalog.to_regtype(key_type);
    IF t IS NULL OR NOT EXISTS (SELECT 1 FROM pg_catalog.pg_type ty JOIN pg_catalog.pg_class k ON k.oid = ty.typrelid
                                WHERE ty.oid = t AND k.relkind = 'c') THEN
        RETURN;
    END IF;
    EXECUTE format('DROP TYPE %s', t);
EXCEPTION WHEN dependent_objects_still_exist THEN
    RAISE NOTICE 'type % is kept: a table that left the enabled one still has a duplicate_of of that type', key_type
        USING HINT = 'drop the type once no table uses it';
END $$;
COMMENT ON FUNCTION dedup._drop_key_type(text) IS
    'Drops the composite key type dedup.enable created, unless a detached partition still uses it';

-- DDL that adds or removes partitions (CREATE TABLE ... PARTITION OF, ALTER TABLE
-- ... ATTACH / DETACH PARTITION) keeps an enabled partitioned table whole:
-- - a new partition gets the statement triggers (dedup._partition_triggers); the
--   documents of rows it brings along are counted, and rows without one are
--   checked by the row trigger, one at a time, as if inserted (an UPDATE of
--   dedup_doc, which the trigger replaces by the text's own);
-- - a partition that left takes its documents out of the statistics, and its
--   statement triggers go (PostgreSQL drops the cloned row triggers itself).
-- SECURITY DEFINER: the owner of a table may change its partitions without rights
-- on the dedup schema's tables.
CREATE FUNCTION dedup._partitions_changed() RETURNS event_trigger
SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET citus.allow_nested_distributed_execution = on
LANGUAGE plpgsql AS $$
DECLARE
    e dedup.enabled_tables;
    part regclass;
    root oid;
    detach_root oid;
    detached oid[];
BEGIN
    -- Temporary tables (a recompute's) are never partitions of an enabled table;
    -- the DDL a Citus coordinator runs on a worker (shards) never concerns one.
    -- Nor does DDL that adds or removes no partition: pg_restore adds an enabled
    -- partitioned table's constraints after its statistics and before its
    -- partitions' dumped statement triggers, which must find them unchanged.
    IF to_regclass('dedup.enabled_tables') IS NULL
       OR (pg_catalog.current_setting('application_name') LIKE 'citus\_internal%'
           AND pg_catalog.to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL)
       OR NOT EXISTS (SELECT 1 FROM pg_catalog.pg_event_trigger_ddl_commands() c
                      WHERE dedup._partition_command(c.command) IS NOT NULL)
       OR NOT EXISTS (
        -- Only DDL on a partitioned table or a partition can concern one.
        SELECT 1 FROM pg_catalog.pg_event_trigger_ddl_commands() c
        JOIN pg_catalog.pg_class r ON r.oid = c.objid
        WHERE c.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND c.schema_name IS DISTINCT FROM 'pg_temp'
          AND (r.relkind = 'p' OR r.relispartition)) THEN
        RETURN;
    END IF;
    -- A tree partitioned by an expression anywhere is refused: building its key
    -- would run the expression's functions with this function's rights.
    SELECT x.tbl INTO part FROM dedup.enabled_tables x
    WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_partition_tree(x.tbl) t
                  JOIN pg_catalog.pg_partitioned_table p ON p.partrelid = t.relid
                  WHERE p.partexprs IS NOT NULL)
    LIMIT 1;
    IF part IS NOT NULL THEN
        RAISE EXCEPTION 'a partition of % is partitioned by an expression, which pg_dedup does not read', part
            USING ERRCODE = 'feature_not_supported', HINT = 'partition by columns';
    END IF;
    -- The enabled table a DETACH took partitions from: its statement triggers name
    -- it by OID, which a dump and restore does not keep.
    SELECT x.tbl::oid INTO detach_root
    FROM pg_catalog.pg_event_trigger_ddl_commands() c, dedup.enabled_tables x
    WHERE dedup._partition_command(c.command) = 'detached'
      AND (x.tbl::oid = c.objid OR x.tbl IN (SELECT a.relid FROM pg_catalog.pg_partition_ancestors(c.objid) a))
    LIMIT 1;
    -- The tables the DETACH took (PostgreSQL names each), whoever owns them.
    detached := dedup._detached_partitions();
    -- A partition that left: its table's owner must be the enabled table's (as
    -- ATTACH asks), so that a table of another role's, given the trigger by hand,
    -- takes no documents out of someone else's statistics.
    -- (Any role may give a table of its own such a trigger: an argument that is
    -- no OID names no table.)
    FOR part, root IN
        SELECT g.tgrelid, CASE WHEN a.arg ~ '^[0-9]{1,10}$' AND a.arg::int8 <= 4294967295 THEN a.arg::oid END
        FROM pg_catalog.pg_trigger g,
             LATERAL (SELECT split_part(encode(g.tgargs, 'escape'), '\000', 1) AS arg) a
        WHERE g.tgname = 'dedup_statement_start' AND g.tgnargs = 1
          AND g.tgfoid = 'dedup._statement_start()'::regprocedure
          AND NOT EXISTS (SELECT 1 FROM dedup.enabled_tables x
                          WHERE x.tbl IN (SELECT a.relid FROM pg_catalog.pg_partition_ancestors(g.tgrelid) a))
          -- Only after a DETACH, and only partitions of the table it detached
          -- from (or of one restored under another OID): another role's DDL
          -- touches no one else's tables.
          AND detach_root IS NOT NULL
    LOOP
        CONTINUE WHEN root IS NULL;
        CONTINUE WHEN root <> detach_root AND EXISTS (SELECT 1 FROM dedup.enabled_tables x WHERE x.tbl::oid = root);
        IF NOT EXISTS (SELECT 1 FROM dedup.enabled_tables x WHERE x.tbl::oid = root) THEN
            root := coalesce(detach_root, root);
        END IF;
        -- Only a table the DETACH took (or one below it), or one whose owner may act
        -- as the enabled table's (as ATTACH asks), loses the triggers: another
        -- role's table, given them by hand, keeps them. (ALTER TABLE ... OWNER TO
        -- of a partitioned table leaves its partitions' owners as they were.)
        CONTINUE WHEN NOT (part::oid = ANY (detached)
                           OR EXISTS (SELECT 1 FROM pg_catalog.pg_partition_ancestors(part) a
                                      WHERE a.relid::oid = ANY (detached)))
                  AND NOT coalesce(pg_catalog.pg_has_role(
            (SELECT r.relowner FROM pg_catalog.pg_class r WHERE r.oid = part),
            (SELECT r.relowner FROM pg_catalog.pg_class r WHERE r.oid = root), 'USAGE'), false);
        EXECUTE format('DROP TRIGGER dedup_statement_start ON %s', part);
        EXECUTE format('DROP TRIGGER IF EXISTS dedup_statement_end ON %s', part);
        EXECUTE format('DROP TRIGGER IF EXISTS dedup_truncate_trigger ON %s', part);
        -- Each table below it has the triggers too: the documents of each are
        -- taken out once, when its turn comes.
        IF EXISTS (SELECT 1 FROM dedup.enabled_tables x WHERE x.tbl::oid = root)
           AND (SELECT r.relkind FROM pg_catalog.pg_class r WHERE r.oid = part) = 'r' THEN
            PERFORM dedup._count_partition(root, part, -1);
        END IF;
    END LOOP;
    -- The enabled partitioned tables whose tree the command changed, and no
    -- other: partitions of other roles' tables are theirs to repair (their
    -- triggers and rows would run in this session).
    FOR e IN SELECT * FROM dedup.enabled_tables x
             WHERE (SELECT r.relkind FROM pg_catalog.pg_class r WHERE r.oid = x.tbl) = 'p'
               AND EXISTS (SELECT 1 FROM pg_catalog.pg_event_trigger_ddl_commands() c
                           WHERE c.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
                             AND c.objid IN (SELECT t.relid FROM pg_catalog.pg_partition_tree(x.tbl) t)) LOOP
        FOR part IN SELECT * FROM dedup._partition_triggers(e.tbl) LOOP
            CONTINUE WHEN (SELECT relkind FROM pg_catalog.pg_class WHERE oid = part) <> 'r';
            PERFORM dedup._count_partition(e.tbl, part, 1);
            -- As the partition's owner (src/pg/attach.rs).
            PERFORM dedup._recheck_partition(part, e.body_column);
        END LOOP;
    END LOOP;
END $$;

-- DROP TABLE of a partition of an enabled table: its documents leave the
-- statistics first (src/pg/attach.rs; after the drop nothing can read them).
-- Not pinned to a search_path: it resolves the names the DDL gives (DROP TABLE
-- t) as the command will, in the issuer's search_path; its queries are
-- schema-qualified (src/pg/attach.rs).
CREATE FUNCTION dedup._partition_dropping() RETURNS event_trigger
    LANGUAGE c AS 'MODULE_PATHNAME', 'dedup_partition_dropping';
COMMENT ON FUNCTION dedup._partition_dropping() IS
    'Event trigger: before a partition of an enabled table is dropped (DROP TABLE, DROP SCHEMA ... CASCADE, DROP OWNED), its documents leave the collection statistics; before one is created, attached or detached, the collection''s statistics lock is taken';
-- ALTER TABLE and CREATE TABLE too: partition DDL under an enabled table takes
-- the statistics lock before it locks any table (src/pg/attach.rs).
CREATE EVENT TRIGGER dedup_partition_dropping ON ddl_command_start
    WHEN TAG IN ('DROP TABLE', 'ALTER TABLE', 'CREATE TABLE', 'DROP SCHEMA', 'DROP OWNED')
    EXECUTE FUNCTION dedup._partition_dropping();
CREATE EVENT TRIGGER dedup_partitions_changed ON ddl_command_end
    WHEN TAG IN ('CREATE TABLE', 'ALTER TABLE') EXECUTE FUNCTION dedup._partitions_changed();

-- DDL that would leave an enabled table in a state pg_dedup cannot follow is
-- refused:
-- - a table that inherits from it (INHERITS, or ALTER TABLE ... INHERIT) gets none
--   of its triggers, while every read of the enabled table reads its rows;
-- - FORCE ROW LEVEL SECURITY on it or one of its partitions: pg_dedup reads the
--   table as its owner, whom the policies would then hide rows from.
CREATE FUNCTION dedup._unsupported_ddl() RETURNS event_trigger
SET search_path = pg_catalog, pg_temp SET citus.allow_nested_distributed_execution = on LANGUAGE plpgsql AS $$
DECLARE
    child regclass;
    parent regclass;
BEGIN
    IF to_regclass('dedup.enabled_tables') IS NULL
       OR (pg_catalog.current_setting('application_name') LIKE 'citus\_internal%'
           AND pg_catalog.to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL) THEN
        RETURN;
    END IF;
    SELECT i.inhrelid::pg_catalog.regclass, i.inhparent::pg_catalog.regclass INTO child, parent
    FROM pg_catalog.pg_event_trigger_ddl_commands() c
    JOIN pg_catalog.pg_inherits i ON i.inhrelid = c.objid
    JOIN pg_catalog.pg_class p ON p.oid = i.inhparent AND p.relkind = 'r'
    WHERE c.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
      AND EXISTS (SELECT 1 FROM dedup.enabled_tables x WHERE x.tbl::pg_catalog.oid = i.inhparent)
    LIMIT 1;
    IF child IS NOT NULL THEN
        RAISE EXCEPTION 'table % cannot inherit from %, which is enabled for deduplication', child, parent
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'its rows would be read as the enabled table''s and never checked: use declarative partitioning, which pg_dedup follows';
    END IF;
    -- (The relation a command names and every partition below it: ATTACH
    -- PARTITION names the partitioned table.)
    -- (Looked up by OID: joined, the planner read all of pg_class for every
    -- CREATE and ALTER TABLE in the database, 3 ms each at 13,000 relations.)
    SELECT r.oid::pg_catalog.regclass INTO child
    FROM pg_catalog.pg_class r
    WHERE r.oid OPERATOR(pg_catalog.=) ANY (ARRAY(
              SELECT c.objid FROM pg_catalog.pg_event_trigger_ddl_commands() c
              WHERE c.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
              UNION
              SELECT t.relid FROM pg_catalog.pg_event_trigger_ddl_commands() c,
                                  pg_catalog.pg_partition_tree(c.objid) t
              WHERE c.classid = 'pg_catalog.pg_class'::pg_catalog.regclass))
      AND r.relforcerowsecurity
      AND EXISTS (SELECT 1 FROM dedup.enabled_tables x
                  WHERE x.tbl::pg_catalog.oid = r.oid
                     OR x.tbl IN (SELECT a.relid FROM pg_catalog.pg_partition_ancestors(r.oid) a))
    LIMIT 1;
    IF child IS NOT NULL THEN
        RAISE EXCEPTION 'row-level security cannot be forced on %: it is enabled for deduplication, or a partition of such a table', child
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'pg_dedup reads the table as its owner, and must read every row; the policies apply to every other role without FORCE';
    END IF;
END $$;
COMMENT ON FUNCTION dedup._unsupported_ddl() IS
    'Event trigger: refuses an inheritance child of an enabled table, and FORCE ROW LEVEL SECURITY on one';
CREATE EVENT TRIGGER dedup_unsupported_ddl ON ddl_command_end
    WHEN TAG IN ('CREATE TABLE', 'ALTER TABLE', 'CREATE FOREIGN TABLE', 'ALTER FOREIGN TABLE')
    EXECUTE FUNCTION dedup._unsupported_ddl();

-- A table's name, schema-qualified whatever the search_path: how statements on the
-- extension's tables name a table on Citus, where each node has its own OID for it.
-- Declared IMMUTABLE, which it is only while the table keeps its name, because
-- Citus runs no other function on a column in an UPDATE or DELETE; it is used
-- only there, never in an index or a stored value.
CREATE FUNCTION dedup._qualified(tbl regclass) RETURNS text
IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp LANGUAGE sql AS $$ SELECT tbl::text $$;
COMMENT ON FUNCTION dedup._qualified(regclass) IS
    'The schema-qualified name of tbl, whatever the search_path (internal; IMMUTABLE for Citus only while the table keeps its name: never index it)';

-- Citus (docs/scale-out.md): whether tbl is a distributed table of a Citus
-- cluster (false without Citus).
CREATE FUNCTION dedup._citus_distributed(tbl regclass) RETURNS boolean
STABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp LANGUAGE plpgsql AS $$
DECLARE
    d boolean;
BEGIN
    IF pg_catalog.to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        RETURN false;
    END IF;
    EXECUTE 'SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition WHERE logicalrelid = $1)' INTO d USING tbl;
    RETURN d;
END $$;
COMMENT ON FUNCTION dedup._citus_distributed(regclass) IS
    'Whether tbl is a Citus distributed or reference table (false without Citus)';

-- The extension's tables as Citus reference tables, a copy on every node: the
-- trigger on every shard on every worker reads the same configuration, models and
-- statistics, and its changes reach all of them in one transaction. Done once, by
-- the first dedup.enable of a distributed table.
-- Citus copies a table's rows to new copies as they are stored, and a regclass
-- or regtype is stored as an OID, which means another table (or none) on another
-- node: the rows of the extension's tables that name tables are put back one by
-- one, by name, which each node reads as its own table's OID. make_reference:
-- the table becomes a reference table in between (dedup._citus_catalog);
-- without it the rows are written again on every node (dedup.citus_resync).
CREATE FUNCTION dedup._citus_named_rows(t regclass, make_reference boolean) RETURNS void
VOLATILE PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp SET citus.enable_unsafe_triggers = on
LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    IF t = 'dedup.enabled_tables'::regclass THEN
        CREATE TEMP TABLE _dedup_named ON COMMIT DROP AS SELECT * FROM dedup.enabled_tables;
        DELETE FROM dedup.enabled_tables;
        IF make_reference THEN
            PERFORM create_reference_table(t);
        END IF;
        FOR r IN SELECT * FROM _dedup_named LOOP
            INSERT INTO dedup.enabled_tables (tbl, collection_id, created_collection, body_column, title_column,
                published_at_column, source_column, model, action, model_column, key_column, enabled_at,
                key_type, time_window)
            VALUES (r.tbl, r.collection_id, r.created_collection, r.body_column, r.title_column,
                r.published_at_column, r.source_column, r.model, r.action, r.model_column, r.key_column,
                r.enabled_at, r.key_type, r.time_window);
        END LOOP;
    ELSIF t = 'dedup.collection_tables'::regclass THEN
        CREATE TEMP TABLE _dedup_named ON COMMIT DROP AS SELECT * FROM dedup.collection_tables;
        DELETE FROM dedup.collection_tables;
        IF make_reference THEN
            PERFORM create_reference_table(t);
        END IF;
        FOR r IN SELECT * FROM _dedup_named LOOP
            INSERT INTO dedup.collection_tables (collection_id, tbl, doc_column, sig_column)
            VALUES (r.collection_id, r.tbl, r.doc_column, r.sig_column);
        END LOOP;
    ELSIF t = 'dedup.rejected'::regclass THEN
        CREATE TEMP TABLE _dedup_named ON COMMIT DROP AS SELECT * FROM dedup.rejected;
        DELETE FROM dedup.rejected;
        IF make_reference THEN
            PERFORM create_reference_table(t);
        END IF;
        FOR r IN SELECT * FROM _dedup_named LOOP
            INSERT INTO dedup.rejected (id, tbl, row_data, original_key, verdict, score, rejected_at)
            VALUES (r.id, r.tbl, r.row_data, r.original_key, r.verdict, r.score, r.rejected_at);
        END LOOP;
    ELSE
        RAISE EXCEPTION 'table % names no table', t USING ERRCODE = 'invalid_parameter_value';
    END IF;
    DROP TABLE _dedup_named;
END $$;
COMMENT ON FUNCTION dedup._citus_named_rows(regclass, boolean) IS
    'Writes the rows of a pg_dedup table that name tables again, by name, so that every Citus node''s copy names its own tables';

CREATE FUNCTION dedup._citus_catalog() RETURNS void
VOLATILE PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp SET citus.enable_unsafe_triggers = on
LANGUAGE plpgsql AS $$
DECLARE
    t regclass;
BEGIN
    -- The copies on the workers name the enabled tables, which must exist there.
    SELECT e.tbl INTO t FROM dedup.enabled_tables e WHERE NOT dedup._citus_distributed(e.tbl) LIMIT 1;
    IF t IS NOT NULL THEN
        RAISE EXCEPTION 'table % is enabled for deduplication and is not distributed', t
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'on Citus every enabled table is a distributed table: distribute it with dedup.distribute, or disable it';
    END IF;
    FOREACH t IN ARRAY ARRAY['dedup.collections', 'dedup.collection_stats', 'dedup.term_stats',
                             'dedup.term_stats_pending', 'dedup.collection_tables', 'dedup.enabled_tables',
                             'dedup.models', 'dedup.sources', 'dedup.rejected']::regclass[] LOOP
        CONTINUE WHEN dedup._citus_distributed(t);
        IF t IN ('dedup.enabled_tables'::regclass, 'dedup.collection_tables'::regclass, 'dedup.rejected'::regclass) THEN
            PERFORM dedup._citus_named_rows(t, true);
        ELSE
            EXECUTE 'SELECT create_reference_table($1)' USING t;
        END IF;
    END LOOP;
END $$;
COMMENT ON FUNCTION dedup._citus_catalog() IS
    'Makes the extension''s tables Citus reference tables (once), for a distributed table dedup.enable enables';

-- An enabled table becomes a Citus distributed table, rows, documents,
-- signatures, marks and statistics as they are: the extension's tables become
-- reference tables, and Citus copies the triggers to every shard.
CREATE FUNCTION dedup.distribute(tbl regclass, distribution_column name) RETURNS void
VOLATILE STRICT PARALLEL UNSAFE SET citus.enable_unsafe_triggers = on SET search_path = pg_catalog, pg_temp LANGUAGE plpgsql AS $$
BEGIN
    PERFORM dedup._require_owner(tbl);
    IF NOT EXISTS (SELECT 1 FROM dedup.enabled_tables e WHERE e.tbl = distribute.tbl) THEN
        RAISE EXCEPTION 'table % is not enabled for deduplication', tbl USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = 'a table that is not enabled is distributed with create_distributed_table';
    END IF;
    IF pg_catalog.to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        RAISE EXCEPTION 'the citus extension is not installed in this database' USING ERRCODE = 'undefined_object';
    END IF;
    -- Citus would copy the TRUNCATE trigger to the shards, and then not drop it
    -- with the table's (it does not propagate a TRUNCATE trigger created later).
    EXECUTE format('DROP TRIGGER dedup_truncate_trigger ON %s', tbl);
    EXECUTE 'SELECT create_distributed_table($1, $2)' USING tbl, distribution_column::text;
    EXECUTE format('CREATE TRIGGER dedup_truncate_trigger AFTER TRUNCATE ON %s '
                   'FOR EACH STATEMENT EXECUTE FUNCTION dedup._truncate_trigger()', tbl);
    PERFORM dedup._citus_catalog();
END $$;
COMMENT ON FUNCTION dedup.distribute(regclass, name) IS
    'Makes an enabled table a Citus distributed table (hash-distributed by distribution_column), keeping what pg_dedup stored';

-- A worker added to the cluster after tables were enabled gets copies of the
-- extension's tables that name the coordinator's table OIDs (Citus copies the
-- rows as stored): the rows that name tables are written again, by name, on every
-- node. The configuration rights (it rewrites the extension's tables).
CREATE FUNCTION dedup.citus_resync() RETURNS void
VOLATILE PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp LANGUAGE plpgsql AS $$
DECLARE
    t regclass;
BEGIN
    IF pg_catalog.to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        RAISE EXCEPTION 'the citus extension is not installed in this database' USING ERRCODE = 'undefined_object';
    END IF;
    IF NOT pg_catalog.has_table_privilege('dedup.enabled_tables', 'INSERT, DELETE') THEN
        RAISE EXCEPTION 'permission denied for dedup.citus_resync' USING ERRCODE = 'insufficient_privilege',
            HINT = 'it rewrites the extension''s tables: it needs the configuration rights (README, Security)';
    END IF;
    FOREACH t IN ARRAY ARRAY['dedup.collection_tables', 'dedup.enabled_tables', 'dedup.rejected']::regclass[] LOOP
        IF dedup._citus_distributed(t) THEN
            PERFORM dedup._citus_named_rows(t, false);
        END IF;
    END LOOP;
END $$;
COMMENT ON FUNCTION dedup.citus_resync() IS
    'On Citus, after adding a worker: writes the extension''s rows that name tables again on every node, by name';

DROP FUNCTION dedup.enable(regclass, name, name, name, name, text, text, text, name);
-- The name <table><suffix> in the table's schema, or <table><suffix>1, 2, ... when
-- a relation or type has it already (a table renamed since it was enabled keeps
-- its index and key type).
-- <table><suffix> with the table's name cut, by whole characters, so that it and
-- a number of up to 3 digits after it fit in an identifier (63 bytes), which
-- PostgreSQL would otherwise cut by bytes where nothing looks for it.
CREATE FUNCTION dedup._name_base(tbl regclass, suffix text) RETURNS text
STABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp LANGUAGE plpgsql AS $$
DECLARE
    rel text := (SELECT c.relname::text FROM pg_catalog.pg_class c WHERE c.oid = tbl);
BEGIN
    WHILE pg_catalog.octet_length(rel || suffix) > 60 AND rel <> '' LOOP
        rel := pg_catalog.left(rel, -1);
    END LOOP;
    RETURN rel || suffix;
END $$;
COMMENT ON FUNCTION dedup._name_base(regclass, text) IS
    'The table''s name, cut to fit an identifier with the suffix and a number, then the suffix: the base of dedup._free_name';

CREATE FUNCTION dedup._free_name(tbl regclass, suffix text) RETURNS text
STABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp LANGUAGE plpgsql AS $$
DECLARE
    nsp oid := (SELECT c.relnamespace FROM pg_catalog.pg_class c WHERE c.oid = tbl);
    base text := dedup._name_base(tbl, suffix);
    name text := base;
    i int := 0;
BEGIN
    WHILE EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE c.relnamespace = nsp AND c.relname = name)
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_type y WHERE y.typnamespace = nsp AND y.typname = name) LOOP
        i := i + 1;
        name := base || i;
    END LOOP;
    RETURN name;
END $$;
COMMENT ON FUNCTION dedup._free_name(regclass, text) IS
    'A name <table><suffix> no relation or type of the table''s schema has yet, for dedup.enable''s index and key type';

CREATE FUNCTION dedup.enable(
    tbl regclass,
    body name,
    title name DEFAULT NULL,
    published_at name DEFAULT NULL,
    source name DEFAULT NULL,
    collection text DEFAULT NULL,
    model text DEFAULT NULL,
    action text DEFAULT 'mark',
    model_column name DEFAULT NULL,
    time_window interval DEFAULT NULL
) RETURNS bigint
-- Citus refuses triggers on a distributed table without it (docs/scale-out.md).
-- Keys travel as text in the backfill: a caller's extra_float_digits below 1
-- would round a float key into one no row has.
VOLATILE PARALLEL UNSAFE SET citus.enable_unsafe_triggers = on SET extra_float_digits = 3 SET search_path = pg_catalog, pg_temp LANGUAGE plpgsql AS $$
DECLARE
    key_cols name[];
    key_types text[];
    key_type text;
    composite text;
    key_match text;
    -- The default collection is the table's own: its name, schema-qualified
    -- outside schema public, so tables of one name in two schemas never share one.
    coll text := coalesce(collection, (SELECT CASE WHEN n.nspname = 'public' THEN c.relname
                                                   ELSE n.nspname || '.' || c.relname END
                                       FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                                       WHERE c.oid = tbl));
    partitioned boolean;
    distributed boolean;
    other_rows boolean;
    other regclass;
    coll_id int;
    col name;
    text_cols text;
    idx text;
    idx_name text;
    leaf_idx regclass;
    n bigint;
    lim_bytes bigint;
    n_unchecked bigint := 0;
    n_left_out bigint := 0;
BEGIN
    IF tbl IS NULL OR body IS NULL THEN
        RAISE EXCEPTION 'tbl and body must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM dedup._require_owner(tbl);
    -- The table's own collection is named after it; one of that name that already
    -- reads another table (a table renamed since it was enabled, say) is that
    -- table's, and is joined only when asked for by name.
    IF collection IS NULL AND EXISTS (
           SELECT 1 FROM dedup.collection_tables t JOIN dedup.collections c ON c.id = t.collection_id
           WHERE c.name = coll AND t.tbl <> enable.tbl) THEN
        RAISE EXCEPTION 'collection "%" already reads table %', coll,
            (SELECT string_agg(t.tbl::text, ', ' ORDER BY t.tbl::text) FROM dedup.collection_tables t
             JOIN dedup.collections c ON c.id = t.collection_id WHERE c.name = coll)
            USING ERRCODE = 'duplicate_object',
                  HINT = format('pass collection => %L to share its statistics, or another name for a collection of the table''s own', coll);
    END IF;
    PERFORM dedup._require_collection_owner(coll);
    -- An extension's own table (pg_dedup's configuration, say) is not the caller's.
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
               WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.objid = tbl
                 AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e') THEN
        RAISE EXCEPTION 'table % belongs to an extension', tbl
            USING ERRCODE = 'feature_not_supported', HINT = 'enable a table of your own';
    END IF;
    IF (SELECT c.relkind NOT IN ('r', 'p') OR c.relpersistence = 't' FROM pg_catalog.pg_class c WHERE c.oid = tbl) THEN
        RAISE EXCEPTION '% is %', tbl,
            CASE WHEN (SELECT c.relkind IN ('r', 'p') FROM pg_catalog.pg_class c WHERE c.oid = tbl)
                 THEN 'a temporary table' ELSE 'not a table' END
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'enable a table or a partitioned table, not a view or a temporary table';
    END IF;
    -- Inheritance children (INHERITS, not partitions) get none of the table's
    -- triggers, while every read of the table reads their rows as its own.
    SELECT i.inhrelid::pg_catalog.regclass INTO other FROM pg_catalog.pg_inherits i
    JOIN pg_catalog.pg_class c ON c.oid = i.inhparent AND c.relkind = 'r'
    WHERE i.inhparent = tbl LIMIT 1;
    IF other IS NOT NULL THEN
        RAISE EXCEPTION 'table % has inheritance children (%)', tbl, other
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'their rows would be read as the table''s and never checked: use declarative partitioning, which pg_dedup follows';
    END IF;
    SELECT c.oid::pg_catalog.regclass INTO other FROM pg_catalog.pg_class c
    WHERE c.relforcerowsecurity
      AND (c.oid = tbl OR c.oid IN (SELECT t.relid FROM pg_catalog.pg_partition_tree(tbl) t))
    ORDER BY c.oid = tbl DESC LIMIT 1;
    IF other IS NOT NULL THEN
        RAISE EXCEPTION 'table % has FORCE ROW LEVEL SECURITY', other
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'pg_dedup reads the table as its owner, and must read every row: ALTER TABLE ... NO FORCE ROW LEVEL SECURITY (the policies still apply to every other role)';
    END IF;
    IF EXISTS (SELECT 1 FROM dedup.enabled_tables e WHERE e.tbl = enable.tbl) THEN
        RAISE EXCEPTION 'table % is already enabled for deduplication', tbl
            USING ERRCODE = 'duplicate_object', HINT = 'call dedup.disable first to change its settings';
    END IF;
    -- One enabled table per partition tree, its root: its partitions are
    -- deduplicated with it.
    SELECT e.tbl INTO other FROM dedup.enabled_tables e
    WHERE e.tbl IN (SELECT a.relid FROM pg_catalog.pg_partition_ancestors(enable.tbl) a);
    IF other IS NOT NULL THEN
        RAISE EXCEPTION 'table % is a partition of %, which is enabled for deduplication', tbl, other
            USING ERRCODE = 'duplicate_object', HINT = 'its rows are deduplicated with the rest of the partitioned table';
    END IF;
    IF (SELECT c.relispartition FROM pg_catalog.pg_class c WHERE c.oid = tbl) THEN
        RAISE EXCEPTION 'table % is a partition of %', tbl, pg_catalog.pg_partition_root(tbl)
            USING ERRCODE = 'wrong_object_type', HINT = 'enable the partitioned table: its partitions are deduplicated with it';
    END IF;
    SELECT e.tbl INTO other FROM dedup.enabled_tables e
    WHERE e.tbl IN (SELECT t.relid FROM pg_catalog.pg_partition_tree(enable.tbl) t) LIMIT 1;
    IF other IS NOT NULL THEN
        RAISE EXCEPTION 'partition % of table % is enabled for deduplication', other, tbl
            USING ERRCODE = 'duplicate_object', HINT = 'call dedup.disable on the partition first';
    END IF;
    SELECT k.names, k.types INTO key_cols, key_types FROM dedup._key_columns(tbl) k;
    IF key_cols IS NULL THEN
        RAISE EXCEPTION 'table % has no primary key', tbl
            USING ERRCODE = 'invalid_table_definition',
                  HINT = 'pg_dedup stores the original''s key in duplicate_of: add a primary key such as "id bigint generated always as identity primary key"';
    END IF;
    -- A BEFORE trigger sees a generated column NULL: the row's key unknown, an
    -- ON CONFLICT target could not be told from a new row.
    SELECT a.attname INTO col FROM pg_catalog.pg_attribute a
    WHERE a.attrelid = tbl AND a.attname = ANY (key_cols) AND a.attgenerated <> '' LIMIT 1;
    IF col IS NOT NULL THEN
        RAISE EXCEPTION 'primary key column "%" of relation % is a generated column', col, tbl
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'the trigger runs before PostgreSQL computes it: give the table a key the rows store, such as an identity column';
    END IF;
    FOREACH col IN ARRAY ARRAY[body, title, published_at, source, model_column] LOOP
        IF col IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM pg_attribute WHERE attrelid = tbl AND attname = col AND attnum > 0 AND NOT attisdropped) THEN
            RAISE EXCEPTION 'column "%" of relation % does not exist', col, tbl USING ERRCODE = 'undefined_column';
        END IF;
    END LOOP;
    -- One column in two roles (title => the body's): refused before the backfill,
    -- which CREATE TRIGGER ... UPDATE OF would otherwise refuse after.
    SELECT c INTO col FROM pg_catalog.unnest(ARRAY[body, title, published_at, source, model_column]) AS c
    WHERE c IS NOT NULL GROUP BY c HAVING pg_catalog.count(*) > 1 LIMIT 1;
    IF col IS NOT NULL THEN
        RAISE EXCEPTION 'column "%" is named by more than one of body, title, published_at, source and model_column', col
            USING ERRCODE = 'invalid_parameter_value', HINT = 'each of them names a column of its own';
    END IF;
    -- A domain (over a time type too) is refused as for the key columns: its
    -- checks would run with the extension owner's rights (src/pg/ingest.rs).
    IF published_at IS NOT NULL AND (SELECT y.typtype = 'd' FROM pg_catalog.pg_attribute a
                                     JOIN pg_catalog.pg_type y ON y.oid = a.atttypid
                                     WHERE a.attrelid = tbl AND a.attname = published_at) THEN
        RAISE EXCEPTION 'column "%" of table % is of type %, which pg_dedup does not read', published_at, tbl,
            (SELECT a.atttypid::regtype FROM pg_catalog.pg_attribute a WHERE a.attrelid = tbl AND a.attname = published_at)
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'the key columns, the time column and duplicate_of must be of built-in types or enums: a domain''s checks or a cast of the table owner''s would run with the extension owner''s rights';
    END IF;
    -- The trigger reads the time directly or through its text form.
    IF published_at IS NOT NULL AND (SELECT a.atttypid NOT IN ('timestamptz'::regtype, 'timestamp'::regtype, 'date'::regtype,
                                                                'text'::regtype, 'varchar'::regtype)
                                     FROM pg_attribute a WHERE a.attrelid = tbl AND a.attname = published_at) THEN
        RAISE EXCEPTION 'column "%" of relation % is of type %, not a time', published_at, tbl,
            (SELECT a.atttypid::regtype FROM pg_attribute a WHERE a.attrelid = tbl AND a.attname = published_at)
            USING ERRCODE = 'datatype_mismatch', HINT = 'published_at names a timestamptz, timestamp, date or text column';
    END IF;
    SELECT a.attname INTO col FROM pg_attribute a
    WHERE a.attrelid = tbl AND a.attnum > 0 AND NOT a.attisdropped
      AND a.attname IN ('dedup_doc', 'dedup_sig', 'duplicate_of', 'dedup_verdict') LIMIT 1;
    IF col IS NOT NULL THEN
        RAISE EXCEPTION 'table % already has a column "%"', tbl, col
            USING ERRCODE = 'duplicate_column',
                  HINT = 'dedup.enable adds dedup_doc, dedup_sig, duplicate_of and dedup_verdict: rename the table''s own column; dedup.disable removes those a copy made with LIKE ... INCLUDING ALL brought along, or that a table no longer enabled kept; columns that came without pg_dedup''s index (CREATE TABLE AS, a logical replication subscriber''s) are data: drop them with ALTER TABLE ... DROP COLUMN';
    END IF;
    PERFORM dedup._validate_window(published_at, time_window);
    -- No model: the built-in 'default'; 'threshold': the threshold rule (stored as NULL).
    model := CASE WHEN model IS NULL THEN 'default' WHEN model = 'threshold' THEN NULL ELSE model END;
    -- An action is a keyword: any case, as PostgreSQL's own option values.
    action := pg_catalog.lower(action);
    PERFORM dedup._validate_enable(model, action);
    partitioned := (SELECT c.relkind = 'p' FROM pg_catalog.pg_class c WHERE c.oid = tbl);
    -- A Citus distributed table: the extension's tables become reference tables,
    -- so that the trigger on every shard reads and writes the same ones.
    distributed := dedup._citus_distributed(tbl);
    -- A reference table is written on every node in one statement, which the
    -- statistics writes cannot follow (0A000 at every insert): refused here.
    IF distributed THEN
        EXECUTE 'SELECT p.partmethod = ''n'' FROM pg_catalog.pg_dist_partition p WHERE p.logicalrelid = $1'
            INTO other_rows USING tbl;
        IF other_rows THEN
            RAISE EXCEPTION 'table % is a Citus reference table', tbl
                USING ERRCODE = 'feature_not_supported',
                      HINT = 'enable a hash-distributed table (create_distributed_table), or a table of a database without Citus';
        END IF;
    END IF;
    IF NOT distributed AND dedup._citus_distributed('dedup.enabled_tables') THEN
        RAISE EXCEPTION 'table % is not distributed, and this database''s enabled tables are', tbl
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'distribute it first (create_distributed_table), or enable it, in another database';
    END IF;
    IF distributed THEN
        -- Its rows would be backfilled shard by shard, each blind to the others'
        -- new documents until the end: enable the table, then distribute it.
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s)', tbl) INTO other_rows;
        IF other_rows THEN
            RAISE EXCEPTION 'distributed table % already holds rows', tbl
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'enable a distributed table while it is empty, or enable the table before distributing it with dedup.distribute';
        END IF;
        PERFORM dedup._citus_catalog();
    END IF;

    -- duplicate_of holds the original's key: of the key column's type, or, for a
    -- key of several columns (a partitioned table's key holds its partition
    -- columns), of a composite type of them, <table>_dedup_key, beside the table.
    IF array_length(key_cols, 1) = 1 THEN
        key_type := key_types[1];
        key_match := format('t.%I::text = o.key', key_cols[1]);
    ELSE
        -- <table>_dedup_key, or <table>_dedup_key1, 2, ... when a table renamed
        -- since it was enabled (or a detached partition) still has that one.
        composite := format('%I.%I', (SELECT nspname FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid WHERE c.oid = tbl),
                            dedup._free_name(tbl, '_dedup_key'));
        EXECUTE format('CREATE TYPE %s AS (%s)', composite,
                       (SELECT string_agg(format('%I %s', k.name, k.type), ', ' ORDER BY k.i)
                        FROM unnest(key_cols, key_types) WITH ORDINALITY AS k(name, type, i)));
        -- Made by whoever enables the table (a superuser, a member of its owner's
        -- role), but the table's owner's, as ALTER TABLE ... OWNER TO keeps it: its
        -- owner disables the table, which drops the type.
        IF (SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid = tbl)
           IS DISTINCT FROM (SELECT y.typowner FROM pg_catalog.pg_type y WHERE y.oid = composite::pg_catalog.regtype) THEN
            BEGIN
                EXECUTE format('ALTER TYPE %s OWNER TO %I', composite,
                               (SELECT pg_catalog.pg_get_userbyid(c.relowner) FROM pg_catalog.pg_class c WHERE c.oid = tbl));
            EXCEPTION WHEN insufficient_privilege THEN
                RAISE WARNING 'type % keeps its owner: %', composite, SQLERRM
                    USING HINT = 'its owner or a superuser can give it to the table''s owner with ALTER TYPE ... OWNER TO; until then the table''s owner cannot disable the table';
            END;
        END IF;
        key_type := composite;
        key_match := (SELECT string_agg(format('t.%1$I = (o.k).%1$I', c), ' AND ') FROM unnest(key_cols) c);
    END IF;
    EXECUTE format('ALTER TABLE %s ADD COLUMN dedup_doc dedup.document, ADD COLUMN dedup_sig dedup.signature, '
                   'ADD COLUMN duplicate_of %s, ADD COLUMN dedup_verdict dedup.verdict', tbl, key_type);
    -- <table>_dedup_sig_idx, or with a number when that name is taken (see above).
    idx_name := dedup._free_name(tbl, '_dedup_sig_idx');
    idx := format('%I.%I', (SELECT nspname FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid WHERE c.oid = tbl), idx_name);
    -- A partitioned table's index is one per partition, and a partition created
    -- later gets one with the same options: fastupdate is off from the start (see
    -- below), and on only in the partitions the backfill fills. So is a distributed
    -- table's, one per shard.
    EXECUTE format('CREATE INDEX %I ON %s USING gin (dedup_sig dedup.signature_ops)%s',
                   idx_name, tbl,
                   CASE WHEN partitioned OR distributed THEN ' WITH (fastupdate = off)' ELSE '' END);
    IF partitioned THEN
        FOR leaf_idx IN SELECT t.relid FROM pg_catalog.pg_partition_tree(idx::regclass) t WHERE t.isleaf LOOP
            EXECUTE format('ALTER INDEX %s SET (fastupdate = on)', leaf_idx);
        END LOOP;
    END IF;
    -- Documents stay in the row, compressed (STORAGE MAIN), rather than in the TOAST
    -- table: every insert reads its candidates' documents, and an out-of-line one
    -- costs a TOAST index probe and chunk fetches on top of the heap fetch. At 100k
    -- rows of ~850-word documents this took the trigger from ~180 to ~195 docs/s.
    -- Citus refuses SET STORAGE on a distributed table, and its run_command_on_shards
    -- would wait for this transaction's own locks: docs/scale-out.md gives the
    -- command to run after enable.
    IF NOT distributed THEN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN dedup_doc SET STORAGE MAIN', tbl);
    END IF;
    -- lz4 compresses a document several times faster than the default pglz (pglz
    -- was a tenth of an insert's time); servers built without lz4 keep pglz.
    BEGIN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN dedup_doc SET COMPRESSION lz4', tbl);
    EXCEPTION WHEN feature_not_supported THEN
        NULL;
    END;
    -- The registration (and the collection, when there is none of that name) is
    -- written as the extension's owner once the caller is found to own the table
    -- (src/pg/registration.rs): the table's owner needs no rights on dedup's tables.
    coll_id := dedup._register_table(tbl::oid, coll, body, title, published_at, source, model, action,
                                     model_column, key_cols[1], composite::regtype::oid, time_window);
    -- Before any other DDL (the backfill creates temporary tables): a partition
    -- without them would look new to dedup._partitions_changed.
    PERFORM dedup._partition_triggers(tbl);
    -- A collection that still counts the documents of a dropped table (a table
    -- dropped and made again, enabled into the collection a model kept) is
    -- rebuilt from its tables now: left, the dropped table's words stayed counted
    -- for good on an empty table, and its owner could not read the collection.
    IF dedup._counts_dropped_documents(tbl::oid) THEN
        PERFORM dedup.recompute(coll);
    END IF;

    -- Backfill in one pass: documents, then statistics and signatures by recompute,
    -- then duplicate marks from the same pairwise decision as dedup.pairs.
    -- Each text is analysed as the trigger analyses it (dedup._table_document: the
    -- collection's language and limits, not the session's settings): one over the
    -- collection's max_document_bytes is stored unchecked, a title or source over
    -- its limit is left out.
    SELECT l.max_document_bytes INTO lim_bytes FROM dedup.collection_limits(coll) l;
    -- (A distributed table is empty, see above: Citus would refuse the CASE.)
    n := 0;
    IF NOT distributed THEN
        PERFORM dedup._table_document_left_out();
        EXECUTE format('UPDATE %1$s SET dedup_doc = dedup._table_document($2, %2$I::text, %3$s, %4$s, %5$s), '
                       'dedup_verdict = CASE WHEN octet_length(%2$I::text) <= $1 THEN ''distinct''::dedup.verdict END',
                       tbl, body,
                       CASE WHEN title IS NULL THEN 'NULL' ELSE format('%I::text', title) END,
                       CASE WHEN published_at IS NULL THEN 'NULL' ELSE format('dedup._published(%I)', published_at) END,
                       CASE WHEN source IS NULL THEN 'NULL' ELSE format('%I::text', source) END)
        USING lim_bytes, tbl::oid;
        GET DIAGNOSTICS n = ROW_COUNT;
        -- What the trigger reports row by row, said once for the whole backfill.
        n_left_out := dedup._table_document_left_out();
        EXECUTE format('SELECT count(*) FROM %s WHERE octet_length(%I::text) > $1', tbl, body)
            INTO n_unchecked USING lim_bytes;
    END IF;
    RAISE NOTICE 'enable %: % existing rows read', tbl, n;
    IF n_unchecked > 0 THEN
        RAISE WARNING 'enable %: % existing rows have a text over the max_document_bytes of collection "%" (%): they are stored unchecked',
                      tbl, n_unchecked, coll, lim_bytes
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = format('raise the collection''s limit with dedup.set_collection_options, then rewrite those rows to check them: UPDATE %s SET %I = %I WHERE dedup_doc IS NULL',
                                tbl, body, body);
    END IF;
    IF n_left_out > 0 THEN
        RAISE WARNING 'enable %: % existing rows have a title or source over its limit: they are checked without it',
                      tbl, n_left_out
            USING ERRCODE = 'program_limit_exceeded';
    END IF;
    IF n > 0 THEN
        PERFORM dedup.recompute(coll);
    END IF;
    -- The index takes the backfill through its pending list (fastupdate), which is
    -- then merged in one pass and switched off: every insert looks candidates up,
    -- and a lookup reads the whole pending list (up to gin_pending_list_limit,
    -- 4 MB): 3.1 ms instead of 0.1 ms per lookup in a freshly enabled 5,000-row
    -- table. (Built after the backfill instead, the index would be unusable until
    -- this transaction ends: the backfill's HOT updates set indcheckxmin.)
    FOR leaf_idx IN SELECT t.relid FROM pg_catalog.pg_partition_tree(idx::regclass) t WHERE t.isleaf
                    UNION ALL SELECT idx::regclass WHERE NOT partitioned AND NOT distributed LOOP
        PERFORM pg_catalog.gin_clean_pending_list(leaf_idx);
        EXECUTE format('ALTER INDEX %s SET (fastupdate = off)', leaf_idx);
    END LOOP;
    IF n > 0 THEN
        EXECUTE format('ANALYZE %s', tbl);
        -- What the trigger would have marked, the rows taken earliest first (not
        -- connected groups: two texts quoted in one anthology are not each other's
        -- copies).
        EXECUTE format('UPDATE %s t SET duplicate_of = o.original::%s, dedup_verdict = o.verdict '
                       'FROM %s WHERE %s', tbl, key_type,
                       CASE WHEN composite IS NULL THEN format('dedup._originals(%L::regclass::oid, NULL) o', tbl)
                            ELSE format('(SELECT o.key::%s AS k, o.original, o.verdict FROM dedup._originals(%L::regclass::oid, NULL) o) o',
                                        composite, tbl) END,
                       key_match);
    END IF;

    -- dedup_doc is among them: a document set by hand is replaced by the text's own,
    -- so the statistics never count a document the table does not hold.
    text_cols := (SELECT string_agg(quote_ident(c), ', ')
                  FROM unnest(ARRAY[body, title, published_at, source, model_column, 'dedup_doc']) AS c WHERE c IS NOT NULL);
    -- On a partitioned table, BEFORE every UPDATE: an update of any column may move
    -- the row to another partition, which PostgreSQL carries out as a delete and an
    -- insert whose triggers fire too (src/pg/trigger.rs tells them apart).
    EXECUTE format('CREATE TRIGGER dedup_trigger BEFORE INSERT OR UPDATE%s ON %s '
                   'FOR EACH ROW EXECUTE FUNCTION dedup._trigger()',
                   CASE WHEN partitioned THEN '' ELSE ' OF ' || text_cols END, tbl);
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
    -- A logical replication subscriber's apply worker fires only ENABLE ALWAYS (or
    -- REPLICA) triggers: the new ones are not, whatever the old ones were.
    -- (pg_partition_tree lists a partitioned table's tree, and nothing for a table
    -- that is not partitioned.)
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_subscription_rel r
               WHERE r.srrelid = tbl OR r.srrelid IN (SELECT t.relid FROM pg_catalog.pg_partition_tree(tbl) t)) THEN
        RAISE NOTICE 'table % is subscribed to: replicated rows go unchecked until its dedup triggers are enabled always', tbl
            USING HINT = 'ALTER TABLE ... ENABLE ALWAYS TRIGGER each of dedup_trigger, dedup_delete_trigger, dedup_truncate_trigger, dedup_statement_start, dedup_row_stored and dedup_statement_end (README, Logical replication)';
    END IF;
    -- A publication of all the table's columns now sends pg_dedup's too, and the
    -- rows enable marked as updates: a subscriber's table without them stops
    -- applying ("missing replicated columns").
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_publication_tables p
               JOIN pg_catalog.pg_namespace s ON s.nspname = p.schemaname
               JOIN pg_catalog.pg_class c ON c.relnamespace = s.oid AND c.relname = p.tablename
               WHERE 'dedup_doc' = ANY (p.attnames)
                 AND (c.oid = tbl OR c.oid IN (SELECT t.relid FROM pg_catalog.pg_partition_tree(tbl) t))) THEN
        RAISE WARNING 'table % is published with all its columns: its subscribers now receive dedup_doc, dedup_sig, duplicate_of and dedup_verdict', tbl
            USING HINT = 'a subscriber''s table without them stops applying: add them there, or publish a column list without them (README, Logical replication)';
    END IF;
    RETURN n;
END $$;
COMMENT ON FUNCTION dedup.enable(regclass, name, name, name, name, text, text, text, name, interval) IS
    'Adds dedup columns, a GIN index and a row trigger to tbl (a partitioned one too), backfills existing rows; returns the rows backfilled';

-- A time window needs the time it compares, and is positive.
CREATE FUNCTION dedup._validate_window(published_at name, time_window interval) RETURNS void
IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp LANGUAGE plpgsql AS $$
BEGIN
    IF time_window IS NOT NULL AND published_at IS NULL THEN
        RAISE EXCEPTION 'a time window needs the published_at column'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'name the column that holds each row''s publication time: dedup.enable(..., published_at => ''published'')';
    END IF;
    IF time_window <= interval '0' THEN
        RAISE EXCEPTION 'time_window must be positive, got %', time_window USING ERRCODE = 'invalid_parameter_value';
    END IF;
END $$;
COMMENT ON FUNCTION dedup._validate_window(name, interval) IS
    'Raises 22023 for a time window without a published_at column, or one that is not positive';

-- The window is the table's: its owner changes it (NULL removes it). Every
-- backend's trigger sees the new one at its next statement.
CREATE FUNCTION dedup.set_time_window(tbl regclass, time_window interval) RETURNS void
VOLATILE PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp LANGUAGE plpgsql AS $$
BEGIN
    IF tbl IS NULL THEN
        RAISE EXCEPTION 'tbl must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM dedup._require_owner(tbl);
    -- As the extension's owner (src/pg/registration.rs).
    PERFORM dedup._set_time_window(tbl::oid, time_window);
END $$;
COMMENT ON FUNCTION dedup.set_time_window(regclass, interval) IS
    'Sets (NULL: removes) the time window of an enabled table: a new row is compared with the rows published within it';

CREATE OR REPLACE FUNCTION dedup.disable(tbl regclass) RETURNS void
VOLATILE STRICT PARALLEL UNSAFE SET citus.enable_unsafe_triggers = on SET search_path = pg_catalog, pg_temp LANGUAGE plpgsql AS $$
DECLARE
    key_type text;
    part regclass;
    trg name;
    registered boolean;
    leftovers boolean;
    all_columns boolean;
    depends text;
BEGIN
    PERFORM dedup._require_owner(tbl);
    registered := EXISTS (SELECT 1 FROM dedup.enabled_tables e WHERE e.tbl = disable.tbl);
    -- A table that is not enabled may still carry what enable added: after a
    -- restore that lost its registration (the single COPY of enabled_tables
    -- failed), a copy made with LIKE ... INCLUDING ALL, a partition detached from
    -- an enabled table. Its rows go unchecked; disable removes them, so that
    -- enable can start again. Never from a partition (its columns are its
    -- parent's).
    -- What enable added is all four of its columns, of its types and the table's
    -- own (not inherited), with the GIN index on dedup_sig (a copy made with
    -- CREATE TABLE AS has the columns and no index: its own data), or its
    -- triggers: a table's own dedup_doc, or one that dedup.recompute reads as a
    -- collection's documents, is the user's. Nor a table with an enabled table in
    -- its partition tree.
    all_columns := (SELECT count(*) = 4 FROM pg_catalog.pg_attribute a
                    WHERE a.attrelid = tbl AND a.attnum > 0 AND NOT a.attisdropped AND a.attinhcount = 0
                      AND ((a.attname, a.atttypid) IN (('dedup_doc', 'dedup.document'::regtype),
                                                       ('dedup_sig', 'dedup.signature'::regtype),
                                                       ('dedup_verdict', 'dedup.verdict'::regtype))
                           OR a.attname = 'duplicate_of'))
        AND EXISTS (SELECT 1 FROM pg_catalog.pg_index i
                    JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
                    JOIN pg_catalog.pg_am am ON am.oid = ic.relam
                    JOIN pg_catalog.pg_attribute s ON s.attrelid = i.indrelid AND s.attnum = i.indkey[0]
                    WHERE i.indrelid = tbl AND am.amname = 'gin' AND s.attname = 'dedup_sig');
    leftovers := NOT registered
        AND (SELECT c.relkind IN ('r', 'p') AND NOT c.relispartition FROM pg_catalog.pg_class c WHERE c.oid = tbl)
        AND NOT EXISTS (SELECT 1 FROM dedup.collection_tables ct WHERE ct.tbl = disable.tbl)
        AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_partition_tree(tbl) r
                        JOIN dedup.enabled_tables e ON e.tbl = r.relid)
        AND (all_columns
             OR EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid
                        WHERE t.tgrelid = tbl AND NOT t.tgisinternal AND t.tgname LIKE 'dedup\_%'
                          AND p.pronamespace = 'dedup'::regnamespace));
    IF NOT registered AND NOT leftovers THEN
        RAISE EXCEPTION 'table % is not enabled for deduplication', tbl
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    -- The table first, as the DROP TRIGGER below would take it: writers still in
    -- a transaction commit (their statistics) before the registration and the
    -- collection change, instead of waiting on them while disable waits on the
    -- table (40P01 for one side). The registration goes first, with the
    -- collection enable created for the table once nothing else reads it (as the
    -- extension's owner: src/pg/registration.rs, which takes the collection's
    -- statistics lock and then the table): the column changes below fire
    -- dedup._partitions_changed, which must not find the table enabled.
    IF registered THEN
        key_type := dedup._unregister_table(tbl::oid);
    ELSE
        EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', tbl);
        RAISE NOTICE 'table % is not enabled: removing the columns and triggers dedup.enable had added', tbl;
        -- The composite key type enable made for a key of several columns.
        SELECT ty.oid::regtype::text INTO key_type
        FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type ty ON ty.oid = a.atttypid
             JOIN pg_catalog.pg_class k ON k.oid = ty.typrelid
        WHERE a.attrelid = tbl AND a.attname = 'duplicate_of' AND NOT a.attisdropped
          AND k.relkind = 'c' AND ty.typname LIKE '%\_dedup\_key%'
          AND NOT EXISTS (SELECT 1 FROM dedup.enabled_tables e WHERE e.key_type = ty.oid)
          AND all_columns AND pg_catalog.pg_has_role(ty.typowner, 'USAGE');
    END IF;
    -- pg_dedup's triggers on the table and its partitions (the row triggers'
    -- clones on the partitions go with them).
    FOR part, trg IN
        SELECT t.tgrelid::regclass, t.tgname FROM pg_catalog.pg_trigger t
               JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid
        WHERE (t.tgrelid = tbl OR t.tgrelid IN (SELECT r.relid FROM pg_catalog.pg_partition_tree(tbl) r))
          AND NOT t.tgisinternal AND t.tgparentid = 0 AND p.pronamespace = 'dedup'::regnamespace
          AND t.tgname IN ('dedup_trigger', 'dedup_delete_trigger', 'dedup_statement_end',
                           'dedup_statement_start', 'dedup_row_stored', 'dedup_truncate_trigger')
          AND (t.tgrelid = tbl OR t.tgname IN ('dedup_statement_start', 'dedup_statement_end',
                                               'dedup_truncate_trigger'))
    LOOP
        EXECUTE format('DROP TRIGGER %I ON %s', trg, part);
    END LOOP;
    -- A table no longer enabled loses the columns only when all four are enable's.
    -- A view that reads one of them (a SELECT * made after enable) keeps them:
    -- say so, instead of PostgreSQL's hint to drop ... CASCADE, which would drop
    -- the user's view. An index, constraint or extended statistics of the user's
    -- on them PostgreSQL would drop without a word (an audit: a partial index
    -- WHERE duplicate_of IS NULL lost by a settings change): refused the same
    -- way. pg_dedup's own signature index is not the user's.
    IF registered OR all_columns THEN
        SELECT pg_catalog.string_agg(DISTINCT pg_catalog.pg_describe_object(d.classid, d.objid, 0), ', ')
        INTO depends
        FROM pg_catalog.pg_depend d
        JOIN pg_catalog.pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
        WHERE d.refclassid = 'pg_catalog.pg_class'::regclass AND d.deptype = 'a'
          AND d.refobjid IN (SELECT r.relid FROM pg_catalog.pg_partition_tree(tbl) r UNION ALL SELECT tbl::oid)
          AND a.attname IN ('dedup_sig', 'dedup_doc', 'duplicate_of', 'dedup_verdict')
          AND d.classid IN ('pg_catalog.pg_class'::regclass, 'pg_catalog.pg_constraint'::regclass,
                            'pg_catalog.pg_statistic_ext'::regclass)
          AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_index i JOIN pg_catalog.pg_opclass o ON o.oid = i.indclass[0]
                          WHERE d.classid = 'pg_catalog.pg_class'::regclass AND i.indexrelid = d.objid
                            AND i.indnatts = 1 AND o.opcname = 'signature_ops'
                            AND o.opcnamespace = 'dedup'::regnamespace);
        IF depends IS NOT NULL THEN
            RAISE EXCEPTION 'cannot disable %: % use the columns enable added', tbl, depends
                USING ERRCODE = 'dependent_objects_still_exist',
                      HINT = 'PostgreSQL would drop them with the columns: drop them in the transaction and make them again after enable; see README, Changing an enabled table''s settings';
        END IF;
        BEGIN
            EXECUTE format('ALTER TABLE %s DROP COLUMN IF EXISTS dedup_sig, DROP COLUMN IF EXISTS dedup_doc, '
                           'DROP COLUMN IF EXISTS duplicate_of, DROP COLUMN IF EXISTS dedup_verdict', tbl);
        EXCEPTION WHEN dependent_objects_still_exist THEN
            GET STACKED DIAGNOSTICS depends = PG_EXCEPTION_DETAIL;
            RAISE EXCEPTION 'cannot disable %: other objects use the columns enable added', tbl
                USING ERRCODE = 'dependent_objects_still_exist', DETAIL = depends,
                      HINT = 'drop those objects in the transaction and make them again after enable (a view made with SELECT * takes dedup_doc, dedup_sig, duplicate_of and dedup_verdict along; a view, policy, trigger condition, function or publication may name one); see README, Changing an enabled table''s settings';
        END;
    END IF;
    IF key_type IS NOT NULL THEN
        PERFORM dedup._drop_key_type(key_type);
    END IF;
END $$;
COMMENT ON FUNCTION dedup.disable(regclass) IS
    'Removes what dedup.enable added to tbl (trigger, index, columns) and a collection it created; also what it left on a table no longer enabled';

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

-- DROP TABLE (or DROP SCHEMA ... CASCADE) of a registered table, or DROP COLUMN of
-- a column a collection reads, takes its registration with it: otherwise
-- dedup.status, dedup.recompute and a later dedup.enable of a table with the same
-- name would all fail on the dropped relation. A collection that dedup.enable
-- created goes too once nothing reads it; a shared one keeps counting the dropped
-- documents until dedup.recompute, and a NOTICE says so. SECURITY DEFINER: the
-- owner of a table may drop it without rights on the dedup schema's tables.
CREATE OR REPLACE FUNCTION dedup._forget_dropped() RETURNS event_trigger
SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET citus.allow_nested_distributed_execution = on
LANGUAGE plpgsql AS $$
DECLARE
    gone record;
    coll_id int;
    enabled dedup.enabled_tables;
BEGIN
    -- DROP EXTENSION drops the registry with everything else; what a Citus
    -- coordinator drops on a worker (shards) is never registered there.
    IF to_regclass('dedup.enabled_tables') IS NULL OR to_regclass('dedup.collection_tables') IS NULL
       OR (pg_catalog.current_setting('application_name') LIKE 'citus\_internal%'
           AND pg_catalog.to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL) THEN
        RETURN;
    END IF;
    FOR gone IN
        SELECT o.objid, o.object_type, o.object_identity, o.address_names[3] AS column_name
        FROM pg_event_trigger_dropped_objects() o
        WHERE o.classid = 'pg_catalog.pg_class'::regclass AND o.object_type IN ('table', 'table column')
    LOOP
        -- The rows 'skip' kept out of a dropped table go with it: its OID may name
        -- another table, of another owner, later (dedup.rejected_rows).
        IF gone.object_type = 'table' THEN
            DELETE FROM dedup.rejected r WHERE r.tbl::oid = gone.objid;
        END IF;
        SELECT * INTO enabled FROM dedup.enabled_tables e WHERE e.tbl::oid = gone.objid;
        -- The columns of an enabled table are dedup.disable's business: one that
        -- dedup.enable was given cannot go while the table is enabled.
        IF gone.object_type = 'table column' AND enabled.tbl IS NOT NULL THEN
            IF gone.column_name IN (enabled.body_column, enabled.title_column, enabled.published_at_column,
                                    enabled.source_column, enabled.model_column) THEN
                RAISE EXCEPTION 'cannot drop column % of table %: pg_dedup reads it', quote_ident(gone.column_name), enabled.tbl
                    USING ERRCODE = 'dependent_objects_still_exist',
                          HINT = format('call dedup.disable(%L) first', enabled.tbl::text);
            END IF;
            -- pg_dedup's own columns and the key's: ALTER TABLE is
            -- dedup._key_type_changed's to refuse, at its end; a drop that cascades
            -- from another command (DROP TYPE or DROP SCHEMA of the key's composite
            -- type, DROP OWNED) is refused here, unless the table goes too.
            IF TG_TAG <> 'ALTER TABLE'
               AND (gone.column_name IN ('dedup_doc', 'dedup_sig', 'duplicate_of', 'dedup_verdict', enabled.key_column)
                    OR gone.column_name IN (SELECT a.attname FROM pg_catalog.pg_type y
                                            JOIN pg_catalog.pg_attribute a ON a.attrelid = y.typrelid AND a.attnum > 0
                                            WHERE y.oid = enabled.key_type))
               AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_event_trigger_dropped_objects() o
                               WHERE o.classid = 'pg_catalog.pg_class'::regclass AND o.objid = gone.objid
                                 AND o.object_type = 'table') THEN
                RAISE EXCEPTION 'cannot drop column % of table %: pg_dedup uses it while the table is enabled', quote_ident(gone.column_name), enabled.tbl
                    USING ERRCODE = 'dependent_objects_still_exist',
                          HINT = format('call dedup.disable(%L) first', enabled.tbl::text);
            END IF;
            CONTINUE;
        END IF;
        IF gone.object_type = 'table' AND enabled.tbl IS NOT NULL AND dedup._citus_distributed('dedup.enabled_tables') THEN
            -- On Citus the copies on the workers name the table by their own OIDs,
            -- gone there too: the collection's rows that name no live table go.
            EXECUTE format('DELETE FROM dedup.enabled_tables e WHERE e.collection_id = %s AND dedup._qualified(e.tbl) <> ALL (%L::text[])',
                           enabled.collection_id,
                           (SELECT coalesce(array_agg(dedup._qualified(x.tbl)), '{}') FROM dedup.enabled_tables x
                            WHERE x.collection_id = enabled.collection_id AND x.tbl::oid <> gone.objid));
            EXECUTE format('DELETE FROM dedup.collection_tables c WHERE c.collection_id = %s AND dedup._qualified(c.tbl) <> ALL (%L::text[])',
                           enabled.collection_id,
                           (SELECT coalesce(array_agg(dedup._qualified(x.tbl)), '{}') FROM dedup.collection_tables x
                            WHERE x.collection_id = enabled.collection_id AND x.tbl::oid <> gone.objid));
            IF enabled.created_collection AND NOT EXISTS (
                   SELECT 1 FROM dedup.collection_tables c WHERE c.collection_id = enabled.collection_id)
               AND NOT EXISTS (SELECT 1 FROM dedup.models m JOIN dedup.collections k ON k.name = m.collection
                               WHERE k.id = enabled.collection_id) THEN
                PERFORM dedup.drop_collection((SELECT name FROM dedup.collections WHERE id = enabled.collection_id));
            END IF;
            IF enabled.key_type IS NOT NULL THEN
                PERFORM dedup._drop_key_type(enabled.key_type::text);
            END IF;
            CONTINUE;
        END IF;
        -- Only a registered table: the DELETE's statement trigger tells every
        -- backend to drop its cached configuration (a temporary table's drop did).
        IF enabled.tbl IS NOT NULL THEN
            DELETE FROM dedup.enabled_tables e WHERE e.tbl::oid = gone.objid;
        END IF;
        -- The composite type of its key goes with it.
        IF gone.object_type = 'table' AND enabled.key_type IS NOT NULL THEN
            PERFORM dedup._drop_key_type(enabled.key_type::text);
        END IF;
        FOR coll_id IN
            DELETE FROM dedup.collection_tables c
            WHERE c.tbl::oid = gone.objid AND (gone.object_type = 'table' OR c.doc_column = gone.column_name)
            RETURNING c.collection_id
        LOOP
            IF enabled.created_collection AND enabled.collection_id = coll_id
               AND NOT EXISTS (SELECT 1 FROM dedup.collection_tables c WHERE c.collection_id = coll_id)
               AND NOT EXISTS (SELECT 1 FROM dedup.models m JOIN dedup.collections k ON k.name = m.collection
                               WHERE k.id = coll_id) THEN
                PERFORM dedup.drop_collection((SELECT name FROM dedup.collections WHERE id = coll_id));
            ELSE
                -- The tables left (enabled with collection => this one) inherit a
                -- collection enable created: the last of them takes it along.
                IF enabled.created_collection AND enabled.collection_id = coll_id THEN
                    UPDATE dedup.enabled_tables x SET created_collection = true WHERE x.collection_id = coll_id;
                END IF;
                -- Whoever reads the tables left could read the dropped one's words
                -- in the statistics: until a recompute, only the configuration
                -- rights read them.
                UPDATE dedup.collection_stats s SET dropped_documents = true WHERE s.collection_id = coll_id;
                RAISE NOTICE 'collection "%" still counts the documents of dropped % %',
                    (SELECT name FROM dedup.collections WHERE id = coll_id),
                    replace(gone.object_type, 'table ', ''), gone.object_identity
                    USING HINT = 'dedup.recompute rebuilds its statistics from the tables it still reads; until then only roles with the configuration rights read them';
            END IF;
        END LOOP;
    END LOOP;
END $$;

-- ALTER TABLE ... RENAME COLUMN of a column dedup.enable was given (body, title,
-- time, source or model): the configuration follows the new name, as a view
-- follows a renamed column. A renamed key column is refused (duplicate_of's
-- composite type names the key columns): disable, rename, enable.
CREATE FUNCTION dedup._columns_renamed() RETURNS event_trigger
SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET citus.allow_nested_distributed_execution = on
LANGUAGE plpgsql AS $$
DECLARE
    cmd record;
    e dedup.enabled_tables;
    new_name name;
    gone name[];
BEGIN
    IF to_regclass('dedup.enabled_tables') IS NULL
       OR (pg_catalog.current_setting('application_name') LIKE 'citus\_internal%'
           AND pg_catalog.to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL) THEN
        RETURN;
    END IF;
    FOR cmd IN SELECT d.objid, d.objsubid FROM pg_catalog.pg_event_trigger_ddl_commands() d
               WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
                 AND d.object_type = 'table column' AND d.objsubid > 0
    LOOP
        SELECT * INTO e FROM dedup.enabled_tables x WHERE x.tbl::oid = cmd.objid;
        CONTINUE WHEN e.tbl IS NULL;
        SELECT a.attname INTO new_name FROM pg_catalog.pg_attribute a
        WHERE a.attrelid = cmd.objid AND a.attnum = cmd.objsubid AND NOT a.attisdropped;
        -- The names the table no longer has were the renamed column's.
        SELECT coalesce(array_agg(n), '{}') INTO gone
        FROM unnest(ARRAY[e.body_column, e.title_column, e.published_at_column, e.source_column,
                          e.model_column, e.key_column]
                    || coalesce((SELECT array_agg(a.attname) FROM pg_catalog.pg_type y
                                 JOIN pg_catalog.pg_attribute a ON a.attrelid = y.typrelid AND a.attnum > 0
                                 WHERE y.oid = e.key_type), '{}')) n
        WHERE n IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM pg_catalog.pg_attribute a
            WHERE a.attrelid = cmd.objid AND a.attname = n AND NOT a.attisdropped);
        CONTINUE WHEN cardinality(gone) = 0 OR new_name IS NULL;
        IF e.key_column = ANY (gone) OR EXISTS (
               SELECT 1 FROM pg_catalog.pg_type y JOIN pg_catalog.pg_attribute a ON a.attrelid = y.typrelid
               WHERE y.oid = e.key_type AND a.attname = ANY (gone)) THEN
            RAISE EXCEPTION 'cannot rename primary key column % of table %: pg_dedup names it', quote_ident(gone[1]), e.tbl
                USING ERRCODE = 'feature_not_supported',
                      HINT = format('call dedup.disable(%L), rename, and dedup.enable the table again', e.tbl::text);
        END IF;
        UPDATE dedup.enabled_tables x SET
            body_column = CASE WHEN x.body_column = ANY (gone) THEN new_name ELSE x.body_column END,
            title_column = CASE WHEN x.title_column = ANY (gone) THEN new_name ELSE x.title_column END,
            published_at_column = CASE WHEN x.published_at_column = ANY (gone) THEN new_name ELSE x.published_at_column END,
            source_column = CASE WHEN x.source_column = ANY (gone) THEN new_name ELSE x.source_column END,
            model_column = CASE WHEN x.model_column = ANY (gone) THEN new_name ELSE x.model_column END
        WHERE x.tbl = e.tbl;
    END LOOP;
END $$;
COMMENT ON FUNCTION dedup._columns_renamed() IS
    'Event trigger: a renamed column that dedup.enable was given is followed in dedup.enabled_tables; a renamed key column is refused';
CREATE EVENT TRIGGER dedup_columns_renamed ON ddl_command_end
    WHEN TAG IN ('ALTER TABLE') EXECUTE FUNCTION dedup._columns_renamed();

-- duplicate_of holds a key of the table: when ALTER TABLE changes the key
-- column's type (int to bigint, say), duplicate_of follows, or the next copy of a
-- row whose key no longer fits would fail to insert. Only when the table's owner
-- itself altered the table, with its own rights (not SECURITY DEFINER): the
-- rewrite runs the table's CHECK constraints and casts, which are the owner's
-- code, so another role (a superuser, a member of the owner's role) gets a WARNING
-- with the command instead. A cast that fails leaves duplicate_of as it was, with
-- a WARNING that says what to run. A key of several columns cannot follow (its
-- composite type is in use): a WARNING says so.
CREATE FUNCTION dedup._key_type_changed() RETURNS event_trigger
SET search_path = pg_catalog, pg_temp SET citus.allow_nested_distributed_execution = on
LANGUAGE plpgsql AS $$
DECLARE
    r record;
    want text;
    key_names text[];
BEGIN
    IF to_regclass('dedup.enabled_tables') IS NULL
       OR (pg_catalog.current_setting('application_name') LIKE 'citus\_internal%'
           AND pg_catalog.to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL) THEN
        RETURN;
    END IF;
    -- The composite key type (ALTER TYPE): its fields stay the key's columns, in
    -- order, or duplicate_of's values stop naming rows (DROP ATTRIBUTE ... CASCADE
    -- would cut every mark). Its name, owner and schema may change (it follows
    -- its table to another schema by itself).
    IF TG_TAG = 'ALTER TYPE' THEN
        FOR r IN SELECT DISTINCT e.tbl, e.key_type
                 FROM pg_catalog.pg_event_trigger_ddl_commands() c
                 JOIN pg_catalog.pg_type y ON (c.classid = 'pg_catalog.pg_type'::pg_catalog.regclass AND y.oid = c.objid)
                                           OR (c.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND y.typrelid = c.objid)
                 JOIN dedup.enabled_tables e ON e.key_type = y.oid
        LOOP
            key_names := (SELECT pg_catalog.array_agg(a.attname::text ORDER BY a.attnum) FROM pg_catalog.pg_type y
                            JOIN pg_catalog.pg_attribute a ON a.attrelid = y.typrelid AND a.attnum > 0 AND NOT a.attisdropped
                           WHERE y.oid = r.key_type);
            IF key_names IS DISTINCT FROM coalesce((SELECT k.names::text[] FROM dedup._key_columns(r.tbl) k), key_names)
               OR key_names IS NULL THEN
                RAISE EXCEPTION 'cannot change the fields of type %: duplicate_of of table % holds its values', r.key_type, r.tbl
                    USING ERRCODE = 'dependent_objects_still_exist',
                          HINT = format('call dedup.disable(%L) first', r.tbl::text);
            END IF;
        END LOOP;
        RETURN;
    END IF;
    -- An ALTER TABLE of no enabled table is none of pg_dedup's business: return
    -- before any query below names an internal function, whose EXECUTE a DBA may
    -- have revoked from PUBLIC (PostgreSQL checks it when a query starts, even for
    -- a function it never calls).
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_event_trigger_ddl_commands() c
                   JOIN dedup.enabled_tables e ON e.tbl::oid = c.objid
                   WHERE c.classid = 'pg_catalog.pg_class'::pg_catalog.regclass) THEN
        RETURN;
    END IF;
    -- pg_dedup's columns stay while the table is enabled: without them its inserts
    -- fail, and dedup.status, which counts each table's duplicate_of, fails for
    -- every role that can read the collection.
    FOR r IN SELECT DISTINCT e.tbl, m.col
             FROM pg_catalog.pg_event_trigger_ddl_commands() c
             JOIN dedup.enabled_tables e ON e.tbl::oid = c.objid
             CROSS JOIN (VALUES ('dedup_doc', 'dedup.document'::regtype), ('dedup_sig', 'dedup.signature'::regtype),
                                ('duplicate_of', NULL), ('dedup_verdict', 'dedup.verdict'::regtype)) AS m(col, typ)
             WHERE c.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
               AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                               WHERE a.attrelid = e.tbl AND a.attname = m.col AND a.attnum > 0 AND NOT a.attisdropped
                                 AND (m.typ IS NULL OR a.atttypid = m.typ))
    LOOP
        RAISE EXCEPTION 'column % of table % belongs to pg_dedup while the table is enabled (dropped, renamed or of another type)', quote_ident(r.col), r.tbl
            USING ERRCODE = 'dependent_objects_still_exist',
                  HINT = format('call dedup.disable(%L) first: it removes the columns', r.tbl::text);
    END LOOP;
    -- duplicate_of follows the key's type by itself (below); a type the owner
    -- gives it otherwise is refused, as a drop or rename is: followed after the
    -- fact, it kept whatever values the owner's USING left (USING NULL: none).
    FOR r IN SELECT DISTINCT e.tbl, e.key_column, e.key_type
             FROM pg_catalog.pg_event_trigger_ddl_commands() c
             JOIN dedup.enabled_tables e ON e.tbl::oid = c.objid
             WHERE c.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
               AND dedup._retypes_duplicate_of(c.command)
    LOOP
        IF EXISTS (SELECT 1 FROM pg_catalog.pg_attribute d
                   WHERE d.attrelid = r.tbl AND d.attname = 'duplicate_of' AND NOT d.attisdropped
                     AND CASE WHEN r.key_type IS NOT NULL THEN d.atttypid <> r.key_type
                              ELSE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute k
                                               WHERE k.attrelid = r.tbl AND k.attname = r.key_column AND NOT k.attisdropped
                                                 AND k.atttypid = d.atttypid AND k.atttypmod = d.atttypmod) END) THEN
            RAISE EXCEPTION 'column duplicate_of of table % belongs to pg_dedup while the table is enabled (dropped, renamed or of another type)', r.tbl
                USING ERRCODE = 'dependent_objects_still_exist',
                      HINT = format('it takes the type of the table''s key by itself; to change it otherwise, call dedup.disable(%L) first: it removes the column', r.tbl::text);
        END IF;
    END LOOP;
    -- The primary key stays what enable found: duplicate_of holds its values, and
    -- a row whose key no longer identifies it would never be named an original
    -- (another key, or a key column dropped, is refused).
    -- A composite key type follows its table into another schema (SET SCHEMA),
    -- where enable made it and looks for it.
    FOR r IN SELECT DISTINCT e.tbl, e.key_column, e.key_type
             FROM pg_catalog.pg_event_trigger_ddl_commands() c
             JOIN dedup.enabled_tables e ON e.tbl::oid = c.objid
             WHERE c.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
    LOOP
        -- (A table left with no primary key for a while passes, as pg_restore
        -- --clean leaves one before it drops the table; a key column must stay.)
        key_names := (CASE WHEN r.key_type IS NULL THEN ARRAY[r.key_column::text]
                           ELSE (SELECT pg_catalog.array_agg(a.attname::text ORDER BY a.attnum) FROM pg_catalog.pg_type y
                                   JOIN pg_catalog.pg_attribute a ON a.attrelid = y.typrelid AND a.attnum > 0 AND NOT a.attisdropped
                                  WHERE y.oid = r.key_type) END);
        IF coalesce((SELECT k.names::text[] FROM dedup._key_columns(r.tbl) k), key_names) IS DISTINCT FROM key_names
           OR EXISTS (SELECT 1 FROM pg_catalog.unnest(key_names) n
                      WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                                        WHERE a.attrelid = r.tbl AND a.attname = n AND a.attnum > 0 AND NOT a.attisdropped)) THEN
            RAISE EXCEPTION 'cannot change the primary key of table %: its duplicate_of holds the key''s values', r.tbl
                USING ERRCODE = 'feature_not_supported',
                      HINT = format('call dedup.disable(%L), change the key, and dedup.enable the table again', r.tbl::text);
        END IF;
        IF r.key_type IS NOT NULL AND (SELECT y.typnamespace FROM pg_catalog.pg_type y WHERE y.oid = r.key_type)
                                      <> (SELECT c.relnamespace FROM pg_catalog.pg_class c WHERE c.oid = r.tbl) THEN
            BEGIN
                EXECUTE format('ALTER TYPE %s SET SCHEMA %I', r.key_type,
                               (SELECT n.nspname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                                WHERE c.oid = r.tbl));
            EXCEPTION WHEN OTHERS THEN
                RAISE WARNING 'type % stays where it is: %', r.key_type, SQLERRM
                    USING HINT = 'move it to the table''s schema with ALTER TYPE ... SET SCHEMA';
            END;
        END IF;
    END LOOP;
    FOR r IN SELECT DISTINCT e.tbl, e.key_type, k.attname AS key_name, k.atttypid AS key_typid,
                    k.atttypmod AS key_typmod, d.atttypid AS dup_typid, d.atttypmod AS dup_typmod
             FROM pg_catalog.pg_event_trigger_ddl_commands() c
             JOIN dedup.enabled_tables e ON e.tbl::oid = c.objid
             JOIN pg_catalog.pg_attribute k ON k.attrelid = e.tbl AND k.attname = e.key_column AND NOT k.attisdropped
             JOIN pg_catalog.pg_attribute d ON d.attrelid = e.tbl AND d.attname = 'duplicate_of' AND NOT d.attisdropped
             WHERE c.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
    LOOP
        IF r.key_type IS NOT NULL THEN
            -- The composite type follows the table's owner (ALTER TABLE ... OWNER
            -- TO), so that the new owner can disable the table, which drops it.
            IF (SELECT y.typowner FROM pg_catalog.pg_type y WHERE y.oid = r.key_type)
               IS DISTINCT FROM (SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid = r.tbl) THEN
                BEGIN
                    EXECUTE format('ALTER TYPE %s OWNER TO %I', r.key_type,
                                   (SELECT pg_catalog.pg_get_userbyid(c.relowner) FROM pg_catalog.pg_class c WHERE c.oid = r.tbl));
                EXCEPTION WHEN insufficient_privilege THEN
                    RAISE WARNING 'type % keeps its owner: %', r.key_type, SQLERRM
                        USING HINT = 'its owner or a superuser can give it to the table''s owner with ALTER TYPE ... OWNER TO';
                END;
            END IF;
            -- A key of several columns: duplicate_of is of the composite type
            -- enable made, and PostgreSQL cannot change the type of an attribute
            -- of a composite type a table column uses.
            IF EXISTS (SELECT 1 FROM pg_catalog.pg_type y
                         JOIN pg_catalog.pg_attribute a ON a.attrelid = y.typrelid AND a.attnum > 0 AND NOT a.attisdropped
                         JOIN pg_catalog.pg_attribute t ON t.attrelid = r.tbl AND t.attname = a.attname AND NOT t.attisdropped
                        WHERE y.oid = r.key_type AND (t.atttypid, t.atttypmod) IS DISTINCT FROM (a.atttypid, a.atttypmod)) THEN
                RAISE WARNING 'duplicate_of of table % keeps the key''s old types (%): a copy of a row whose key does not fit them fails to insert', r.tbl, r.key_type
                    USING HINT = format('call dedup.disable(%L) and dedup.enable the table again: enable makes the key type anew and marks the rows again', r.tbl::text);
            END IF;
            want := NULL;
        ELSIF (r.key_typid, r.key_typmod) IS DISTINCT FROM (r.dup_typid, r.dup_typmod) THEN
            want := format('ALTER TABLE %s ALTER COLUMN duplicate_of TYPE %s USING duplicate_of::text::%s',
                           r.tbl, format_type(r.key_typid, r.key_typmod), format_type(r.key_typid, r.key_typmod));
        ELSE
            want := NULL;
        END IF;
        CONTINUE WHEN want IS NULL;
        IF (SELECT pg_catalog.pg_get_userbyid(c.relowner) FROM pg_catalog.pg_class c WHERE c.oid = r.tbl)
           IS DISTINCT FROM current_user THEN
            RAISE WARNING 'duplicate_of of table % keeps the key''s old type', r.tbl
                USING HINT = format('the table''s owner can run %s', want);
            CONTINUE;
        END IF;
        -- A stored original's key that does not fit the new type (a change whose
        -- USING maps keys anew) would fail every later copy of that row: the
        -- change is refused.
        BEGIN
            EXECUTE want;
        EXCEPTION WHEN data_exception THEN
            RAISE EXCEPTION 'cannot change the type of the key of table %: its duplicate_of holds keys that do not fit the new type', r.tbl
                USING ERRCODE = 'feature_not_supported', DETAIL = SQLERRM,
                      HINT = format('call dedup.disable(%L), change the key, and dedup.enable the table again', r.tbl::text);
        WHEN lock_not_available OR deadlock_detected OR serialization_failure OR query_canceled THEN
            RAISE;
        WHEN OTHERS THEN
            RAISE WARNING 'duplicate_of of table % keeps the key''s old type: %', r.tbl, SQLERRM
                USING HINT = format('run %s, or dedup.disable and dedup.enable the table', want);
        END;
    END LOOP;
END $$;
COMMENT ON FUNCTION dedup._key_type_changed() IS
    'Event trigger: refuses to drop or rename pg_dedup''s columns of an enabled table; when its owner changes its key column''s type, duplicate_of follows (otherwise, and for a key of several columns, a WARNING); a composite key type follows the table''s owner and schema; refuses a changed primary key, and changed fields of the composite key type';
CREATE EVENT TRIGGER dedup_key_type_changed ON ddl_command_end
    WHEN TAG IN ('ALTER TABLE', 'ALTER TYPE') EXECUTE FUNCTION dedup._key_type_changed();
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

-- The rows 'skip' kept out of a table, for the table's owner (and the roles that
-- have its rights): to read them, and to delete them once dealt with. The
-- configuration rights read dedup.rejected itself. security_barrier: the filter
-- runs before any function of the caller's sees a row.
CREATE VIEW dedup.rejected_rows WITH (security_barrier) AS
SELECT r.id, r.tbl, r.row_data, r.original_key, r.verdict, r.score, r.rejected_at
FROM dedup.rejected r
WHERE pg_catalog.pg_has_role((SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid = r.tbl), 'USAGE');
COMMENT ON VIEW dedup.term_stats_by_name IS
    'Each collection''s term statistics by collection name: document frequency (df) and collection frequency (cf) of each term';
COMMENT ON VIEW dedup.rejected_rows IS 'The rows action ''skip'' kept out of the tables the caller owns: read them, DELETE them once dealt with';

-- Privileges: PUBLIC may use the schema (its types, and the functions it may
-- execute) and read its configuration, and nothing else of the extension's
-- tables; the trigger, and enable's registration, do their bookkeeping with the
-- extension owner's rights (src/pg/privilege.rs, src/pg/registration.rs).
GRANT USAGE ON SCHEMA dedup TO PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA dedup FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA dedup FROM PUBLIC;
-- What is enabled, and how: names of tables, columns and settings, as public as
-- pg_catalog's. Table owners' dedup.enable, disable and recompute read it; the
-- statistics, models, sources and rejected rows stay private.
GRANT SELECT ON dedup.enabled_tables, dedup.collections, dedup.collection_tables TO PUBLIC;
GRANT SELECT ON dedup.status TO PUBLIC;

-- The stored models a role may name (to enable, pairs, classify_pair, …): the
-- names, what they read and how well they did, not their weights (export_model
-- is the configuration roles'). security_barrier: the filter runs first.
CREATE VIEW dedup.available_models WITH (security_barrier) AS
SELECT m.name, m.collection, m.features, m.kernel, m.metrics, m.version, m.trained_at
FROM dedup.models m
WHERE m.name = 'default'
   OR pg_catalog.has_table_privilege('dedup.term_stats', 'SELECT')
   -- A model whose collection is gone is the configuration roles' (as using it is).
   OR (EXISTS (SELECT 1 FROM dedup.collections c WHERE c.name = m.collection)
       AND dedup._may_read_collection(m.collection));
COMMENT ON VIEW dedup.available_models IS
    'The stored models the caller may use: a model stored as default, those of a collection it may read, every one with the configuration rights (the built-in default and the threshold rule are not stored)';
GRANT SELECT ON dedup.available_models TO PUBLIC;
GRANT SELECT, DELETE ON dedup.rejected_rows TO PUBLIC;
-- Two internal functions change a collection's statistics (written at commit with
-- the owner's rights): only the SECURITY DEFINER triggers that call them may.
REVOKE EXECUTE ON FUNCTION dedup._forget(oid, dedup.document) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION dedup._check_trigger_name(text, text, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION dedup._count_partition(oid, oid, integer) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION dedup._recompute_truncated(text, oid) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION dedup._require_setup_in_snapshot(oid, text) FROM PUBLIC;
-- Nor may PUBLIC have rows of a partition it does not own re-checked as its owner.
REVOKE EXECUTE ON FUNCTION dedup._recheck_partition(oid, text) FROM PUBLIC;
-- This backend's candidate counts would tell a writer how many rows its text
-- resembles in a table it may not read: for the benchmarks' superuser.
REVOKE EXECUTE ON FUNCTION dedup._candidate_counts() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION dedup._leaves_searched() FROM PUBLIC;

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

-- A model an enabled table uses stays while it does: deleting or renaming it
-- would fail every insert into the table with 42704. (A stored 'default' may go:
-- the built-in model takes its place.)
CREATE FUNCTION dedup._models_in_use() RETURNS trigger
SET search_path = pg_catalog, pg_temp LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.name <> 'default' AND (TG_OP = 'DELETE' OR NEW.name IS DISTINCT FROM OLD.name)
       AND EXISTS (SELECT 1 FROM dedup.enabled_tables e WHERE e.model = OLD.name) THEN
        RAISE EXCEPTION 'model "%" is used by enabled table %', OLD.name,
            (SELECT string_agg(e.tbl::text, ', ' ORDER BY e.tbl::text) FROM dedup.enabled_tables e WHERE e.model = OLD.name)
            USING ERRCODE = 'object_in_use', HINT = 'disable those tables first, or enable them with another model';
    END IF;
    -- Rows may name it in a model_column, which is data: say which tables read
    -- one, since a row naming a model that is gone is refused (42704).
    IF OLD.name <> 'default' AND (TG_OP = 'DELETE' OR NEW.name IS DISTINCT FROM OLD.name)
       AND EXISTS (SELECT 1 FROM dedup.enabled_tables e WHERE e.model_column IS NOT NULL) THEN
        RAISE WARNING 'tables % pick a model per row (model_column): a row that names model "%" is refused from now on',
            (SELECT string_agg(e.tbl::text, ', ' ORDER BY e.tbl::text) FROM dedup.enabled_tables e WHERE e.model_column IS NOT NULL),
            OLD.name
            USING HINT = 'store the model again under that name, or have the rows name another (NULL takes the table''s model)';
    END IF;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $$;
COMMENT ON FUNCTION dedup._models_in_use() IS
    'Trigger on dedup.models: refuses to delete or rename a model an enabled table uses, and warns when tables pick models per row';
CREATE TRIGGER models_in_use BEFORE DELETE OR UPDATE OF name ON dedup.models
    FOR EACH ROW EXECUTE FUNCTION dedup._models_in_use();
-- TRUNCATE dedup.models goes past the row trigger above: refused the same way
-- while an enabled table uses a stored model (it failed every insert with 42704).
CREATE FUNCTION dedup._models_truncated() RETURNS trigger
SET search_path = pg_catalog, pg_temp SET citus.allow_nested_distributed_execution = on LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM dedup.enabled_tables e JOIN dedup.models m ON m.name = e.model WHERE m.name <> 'default') THEN
        RAISE EXCEPTION 'cannot truncate dedup.models: enabled tables use models %',
            (SELECT string_agg(DISTINCT quote_literal(m.name), ', ') FROM dedup.enabled_tables e JOIN dedup.models m ON m.name = e.model
             WHERE m.name <> 'default')
            USING ERRCODE = 'object_in_use', HINT = 'disable those tables first, or enable them with another model; DELETE the other models';
    END IF;
    IF EXISTS (SELECT 1 FROM dedup.enabled_tables e WHERE e.model_column IS NOT NULL) THEN
        RAISE WARNING 'tables % pick a model per row (model_column): a row that names a stored model is refused from now on',
            (SELECT string_agg(e.tbl::text, ', ' ORDER BY e.tbl::text) FROM dedup.enabled_tables e WHERE e.model_column IS NOT NULL)
            USING HINT = 'store the models again, or have the rows name another (NULL takes the table''s model)';
    END IF;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION dedup._models_truncated() IS
    'Trigger on dedup.models: refuses TRUNCATE while an enabled table uses a stored model, as dedup._models_in_use refuses DELETE';
CREATE TRIGGER models_truncated BEFORE TRUNCATE ON dedup.models
    FOR EACH STATEMENT EXECUTE FUNCTION dedup._models_truncated();
-- A changed model's version bumps, and a model in use stays, in a replica-role
-- session too (see config_changed).
ALTER TABLE dedup.models ENABLE ALWAYS TRIGGER models_version;
ALTER TABLE dedup.models ENABLE ALWAYS TRIGGER models_in_use;
ALTER TABLE dedup.models ENABLE ALWAYS TRIGGER models_truncated;
-- They fire in a session under session_replication_role = replica too (a DBA
-- who set it, a restore's): sessions already open kept the old configuration for
-- good otherwise (an audit: a time window, an action and a retrained model that
-- open sessions never saw). (A data-only pg_restore --disable-triggers of these
-- tables leaves them ENABLE, not ALWAYS, as before.)
ALTER TABLE dedup.enabled_tables ENABLE ALWAYS TRIGGER config_changed;
ALTER TABLE dedup.collections ENABLE ALWAYS TRIGGER config_changed;
ALTER TABLE dedup.sources ENABLE ALWAYS TRIGGER config_changed;
ALTER TABLE dedup.models ENABLE ALWAYS TRIGGER config_changed;
ALTER TABLE dedup.lock_secret ENABLE ALWAYS TRIGGER config_changed;

-- A comment for every public function (sql/comments.sql).
COMMENT ON FUNCTION dedup.add_document(text, dedup.document) IS
    'Adds a document to a collection''s statistics, written at once (for documents kept outside an enabled table)';
COMMENT ON FUNCTION dedup.remove_document(text, dedup.document) IS
    'Removes a document from a collection''s statistics, written at once (the inverse of add_document)';
COMMENT ON FUNCTION dedup.classify_pair(text, dedup.document, dedup.document) IS
    'The verdict of a model (''threshold'': the threshold rule, with no statistics) on a pair: distinct, a_duplicates_b, b_duplicates_a or mutual';
COMMENT ON FUNCTION dedup.compare(dedup.document, dedup.document, text) IS
    'The pair vector ρ(a, b) under a collection''s weights, in dedup.feature_names() order; NaN where a feature does not apply';
COMMENT ON FUNCTION dedup.create_collection(text, text, text, double precision, double precision, jsonb) IS
    'Creates a collection: language, weighting (bm25 or tf_ridf), BM25 k1 and b, options (signature scheme and what it enforces)';
COMMENT ON FUNCTION dedup.drop_collection(text) IS
    'Drops a collection and its statistics; refused while an enabled table or a stored model uses it';
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
    'Writes this transaction''s statistics changes of a collection and folds its pending batches (dedup.stats_batch) now; returns the pending rows folded, one per committed transaction';
COMMENT ON FUNCTION dedup.learn_authority(text, text) IS
    'Estimates each source''s authority (its share of originals) from labelled pairs and stores it; returns the sources written';
COMMENT ON FUNCTION dedup.numbers(dedup.document) IS
    'The numbers of a document, normalised, in text order';
COMMENT ON FUNCTION dedup.pair_score(text, dedup.document, dedup.document) IS
    'A model''s (or the threshold rule''s) decision value for "a adds nothing to b": positive means duplicate';
COMMENT ON FUNCTION dedup.shared_keys(dedup.signature, dedup.signature) IS
    'How many keys two signatures of one scheme share (0 for two schemes, which never match)';
COMMENT ON FUNCTION dedup.signature(dedup.document, text) IS
    'A document''s signature under a collection''s weights and signature options';
COMMENT ON FUNCTION dedup.similarity(dedup.signature, dedup.signature) IS
    'Shared keys over the smaller key count (0 when either is empty, or for two schemes)';
COMMENT ON FUNCTION dedup.staleness(text) IS
    'How far a collection''s statistics moved since its last recompute: documents added or removed since, over its documents now (0 = fresh)';
COMMENT ON FUNCTION dedup.summary(dedup.document) IS
    'A document''s sizes as jsonb: bytes, words, terms, numbers, sentences, paragraphs, images, links, source, published_at';
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
    'Each body term''s weight under a collection''s statistics (bm25 or tf_ridf)';

-- Functions that read the extension's tables through SPI are PARALLEL UNSAFE: in a
-- command that writes (CREATE TABLE AS, a materialized view) under a parallel plan
-- their reads would start a command, which PostgreSQL refuses in parallel mode.
ALTER FUNCTION dedup._evaluate(text, text) PARALLEL UNSAFE;
ALTER FUNCTION dedup.evaluate(text, text) PARALLEL UNSAFE;
ALTER FUNCTION dedup.classify_pair(text, dedup.document, dedup.document) PARALLEL UNSAFE;
ALTER FUNCTION dedup.compare(dedup.document, dedup.document, text) PARALLEL UNSAFE;
ALTER FUNCTION dedup.explain_pair(text, dedup.document, dedup.document) PARALLEL UNSAFE;
ALTER FUNCTION dedup.export_model(text) PARALLEL UNSAFE;
ALTER FUNCTION dedup.filter_quality(text) PARALLEL UNSAFE;
ALTER FUNCTION dedup.pair_score(text, dedup.document, dedup.document) PARALLEL UNSAFE;
COMMENT ON COLUMN dedup.enabled_tables.model IS 'The model that judges the table''s rows (dedup.enable''s model): default for the built-in one, NULL for the threshold rule';
-- The functions that run a caller's pairs query are VOLATILE: the query may call
-- functions that write.
ALTER FUNCTION dedup._evaluate(text, text) VOLATILE;
ALTER FUNCTION dedup.evaluate(text, text) VOLATILE;
ALTER FUNCTION dedup.filter_quality(text) VOLATILE;
ALTER FUNCTION dedup.signature(dedup.document, text) PARALLEL UNSAFE;
ALTER FUNCTION dedup.staleness(text) PARALLEL UNSAFE;
ALTER FUNCTION dedup.top_terms(dedup.document, text, integer) PARALLEL UNSAFE;
ALTER FUNCTION dedup.weights(dedup.document, text, text) PARALLEL UNSAFE;

-- Internal helpers (named with a leading _): not API, but commented like the rest,
-- so that \df+ and pg_description say what each is for and who calls it.
COMMENT ON SCHEMA dedup IS
    'pg_dedup: near-duplicate text detection (document models, signatures, GIN candidates, SVM pair classification)';
COMMENT ON OPERATOR FAMILY dedup.signature_ops USING gin IS
    'GIN operator family of dedup.signature: the signature keys, for the % match';
COMMENT ON OPERATOR CLASS dedup.signature_ops USING gin IS
    'Default GIN operator class of dedup.signature: indexes each key, serves a % b (enough shared keys)';
COMMENT ON SEQUENCE dedup.collections_id_seq IS 'Ids of dedup.collections';
COMMENT ON SEQUENCE dedup.rejected_id_seq IS 'Ids of dedup.rejected';
COMMENT ON FUNCTION dedup._document_in(cstring) IS 'Input function of dedup.document (its JSON text form)';
COMMENT ON FUNCTION dedup._document_out(dedup.document) IS 'Output function of dedup.document (its JSON text form)';
COMMENT ON FUNCTION dedup._document_recv(internal) IS 'Binary input function of dedup.document';
COMMENT ON FUNCTION dedup._document_send(dedup.document) IS 'Binary output function of dedup.document';
COMMENT ON FUNCTION dedup._signature_in(cstring) IS 'Input function of dedup.signature (scheme:{keys})';
COMMENT ON FUNCTION dedup._signature_out(dedup.signature) IS 'Output function of dedup.signature (scheme:{keys})';
COMMENT ON FUNCTION dedup._signature_recv(internal) IS 'Binary input function of dedup.signature';
COMMENT ON FUNCTION dedup._signature_send(dedup.signature) IS 'Binary output function of dedup.signature';
COMMENT ON FUNCTION dedup._document_eq(dedup.document, dedup.document) IS 'The = operator of dedup.document: the same stored bytes';
COMMENT ON FUNCTION dedup._document_hash(dedup.document) IS 'Hash support of dedup.document: a hash of its stored bytes';
COMMENT ON OPERATOR dedup.= (dedup.document, dedup.document) IS 'the same document: equal stored bytes';
COMMENT ON OPERATOR FAMILY dedup.document_hash_ops USING hash IS 'Hash operator family of dedup.document: equality of stored bytes';
COMMENT ON OPERATOR CLASS dedup.document_hash_ops USING hash IS
    'Default hash operator class of dedup.document: the equality a UNION, DISTINCT, row comparison or REPLICA IDENTITY FULL uses';
COMMENT ON FUNCTION dedup._signature_eq(dedup.signature, dedup.signature) IS 'The = operator of dedup.signature: the same stored bytes';
COMMENT ON FUNCTION dedup._signature_hash(dedup.signature) IS 'Hash support of dedup.signature: a hash of its stored bytes';
COMMENT ON OPERATOR dedup.= (dedup.signature, dedup.signature) IS 'the same signature: equal stored bytes';
COMMENT ON OPERATOR FAMILY dedup.signature_hash_ops USING hash IS 'Hash operator family of dedup.signature: equality of stored bytes';
COMMENT ON OPERATOR CLASS dedup.signature_hash_ops USING hash IS
    'Default hash operator class of dedup.signature: the equality a UNION, DISTINCT, row comparison or REPLICA IDENTITY FULL uses';
COMMENT ON FUNCTION dedup._document_ne(dedup.document, dedup.document) IS 'The <> operator of dedup.document: other stored bytes';
COMMENT ON OPERATOR dedup.<> (dedup.document, dedup.document) IS 'not the same document: other stored bytes';
COMMENT ON FUNCTION dedup._signature_ne(dedup.signature, dedup.signature) IS 'The <> operator of dedup.signature: other stored bytes';
COMMENT ON OPERATOR dedup.<> (dedup.signature, dedup.signature) IS 'not the same signature: other stored bytes';
COMMENT ON FUNCTION dedup._signature_match(dedup.signature, dedup.signature) IS
    'The % operator: whether two signatures share enough keys (the setting dedup.min_shared_keys, or dedup.similarity_threshold for the longest scheme; the trigger uses its collection''s)';
COMMENT ON FUNCTION dedup._gin_extract_value(dedup.signature, internal, internal) IS 'GIN support: the keys of an indexed signature';
COMMENT ON FUNCTION dedup._gin_extract_query(dedup.signature, internal, smallint, internal, internal, internal, internal) IS
    'GIN support: the keys of a queried signature';
COMMENT ON FUNCTION dedup._gin_consistent(internal, smallint, dedup.signature, integer, internal, internal, internal, internal) IS
    'GIN support: whether the keys found make a % match (rechecked)';
COMMENT ON FUNCTION dedup._gin_tri_consistent(internal, smallint, dedup.signature, integer, internal, internal, internal) IS
    'GIN support: ternary consistency of the keys found with a % match';
COMMENT ON FUNCTION dedup._term_stats_agg_trans(internal, dedup.document) IS 'dedup.term_stats_agg: adds a document to the state';
COMMENT ON FUNCTION dedup._term_stats_agg_combine(internal, internal) IS 'dedup.term_stats_agg: combines two partial states (parallel aggregation)';
COMMENT ON FUNCTION dedup._term_stats_agg_serial(internal) IS 'dedup.term_stats_agg: serialises a partial state';
COMMENT ON FUNCTION dedup._term_stats_agg_deserial(bytea, internal) IS 'dedup.term_stats_agg: deserialises a partial state';
COMMENT ON FUNCTION dedup._term_stats_agg_final(internal) IS 'dedup.term_stats_agg: the statistics as jsonb';
COMMENT ON FUNCTION dedup._candidate_counts() IS
    'This backend''s candidate counts (benchmarks and tests): examined, ruled out before weighing, weighed after all';
COMMENT ON FUNCTION dedup._leaves_searched() IS
    'How many tables (partitions) this backend''s candidate lookups searched since it started (benchmarks and tests)';
COMMENT ON FUNCTION dedup._candidates(oid, dedup.signature, integer) IS
    'dedup.candidates by table OID: the rows whose signature matches sig, through the signature index, best first';
COMMENT ON FUNCTION dedup._count_partition(oid, oid, integer) IS
    'Adds (1) or removes (-1) a partition''s documents in its enabled table''s collection statistics (attach, detach, drop)';
COMMENT ON FUNCTION dedup._evaluate(text, text) IS 'dedup.evaluate''s body: confusion counts of a model on labelled pairs';
ALTER FUNCTION dedup._models_version() SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION dedup._models_version() IS
    'Trigger on dedup.models: bumps the version of a changed model, so that every backend reloads it';
COMMENT ON FUNCTION dedup._find_original(oid, dedup.document) IS 'dedup.find_original by table OID';
COMMENT ON FUNCTION dedup._forget(oid, dedup.document) IS
    'Removes a deleted row''s document from its collection''s statistics (the delete trigger)';
COMMENT ON FUNCTION dedup._groups(oid, text) IS 'dedup.groups by table OID';
COMMENT ON FUNCTION dedup._is_duplicate(oid, text, text, timestamp with time zone, text) IS 'dedup.is_duplicate by table OID';
COMMENT ON FUNCTION dedup._table_document(oid, text, text, timestamp with time zone, text) IS
    'The document the trigger would store for a row of the table with this text (the collection''s language and limits): enable''s backfill';
-- The text form of a key that is stored (dedup.rejected.original_key), in one
-- style whatever the writer's session set (its DateStyle, TimeZone,
-- IntervalStyle, extra_float_digits), so that any session casts it back to the
-- same key.
CREATE FUNCTION dedup._key_text(anyelement) RETURNS text
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    SET DateStyle = 'ISO, YMD' SET TimeZone = 'UTC' SET IntervalStyle = 'postgres'
    SET extra_float_digits = 1 SET lc_monetary = 'C'
    AS 'SELECT $1::pg_catalog.text';

COMMENT ON FUNCTION dedup._key_text(anyelement) IS
    'A key''s text form as dedup.rejected.original_key stores it: ISO dates, UTC times, exact floats, money in the C locale, whatever the writer''s session set';
COMMENT ON FUNCTION dedup._published(anyelement) IS
    'A time column''s value as the trigger reads it (a timestamp or date as UTC; text that is not a time, and the infinities, as no time: NULL), for the window and order of the analyst queries and enable''s backfill';
COMMENT ON FUNCTION dedup._table_document_left_out() IS
    'How many rows dedup._table_document analysed without their title or source (over its limit) since the last call, for enable''s WARNING';
COMMENT ON FUNCTION dedup._marked_rows(oid) IS 'How many rows of an enabled table are marked (duplicate_of set), for dedup.status';
COMMENT ON FUNCTION dedup._counts_dropped_documents(oid) IS
    'Whether the collection of an enabled table the caller owns still counts the documents of a dropped table, for dedup.enable (false for a table the caller does not own)';
COMMENT ON FUNCTION dedup._duplicates(integer) IS 'How many rows of a collection''s enabled tables are marked, for dedup.status (NULL, with a WARNING, when an owner may not read its table)';
COMMENT ON FUNCTION dedup._matrix_quality(oid, text) IS 'dedup.matrix_quality by table OID';
COMMENT ON FUNCTION dedup._may_read_collection(text) IS
    'Whether the current role may read every table of a collection (SELECT, no row-level security), as the reading functions require';
COMMENT ON FUNCTION dedup._originals(oid, text) IS
    'Each row of an enabled table with the original it duplicates, as the trigger would mark it earliest first (enable''s backfill)';
COMMENT ON FUNCTION dedup._pairs(oid, text) IS 'dedup.pairs by table OID';
COMMENT ON FUNCTION dedup._detached_partitions() IS
    'The tables the ALTER TABLE ... DETACH PARTITION being run detached, found by name when it started (for the event trigger at its end)';
COMMENT ON FUNCTION dedup._recheck_partition(oid, text) IS
    'Checks the rows of a partition attached to an enabled table against the rest (ALTER TABLE ... ATTACH PARTITION)';
COMMENT ON FUNCTION dedup._recompute(text, oid, text) IS
    'dedup.recompute''s body: rebuilds a collection''s statistics and signatures from its tables';
COMMENT ON FUNCTION dedup._recompute_truncated(text, oid) IS
    'Recomputes a collection after a TRUNCATE of one of its tables, counting that table as empty (the truncate trigger)';
COMMENT ON FUNCTION dedup._require_setup_in_snapshot(oid, text) IS
    'Under REPEATABLE READ or SERIALIZABLE, refuses (40001) a trigger of the table that the transaction''s snapshot does not hold: the table was enabled after it (the TRUNCATE trigger)';
COMMENT ON FUNCTION dedup._register_table(oid, text, text, text, text, text, text, text, text, text, oid, interval) IS
    'dedup.enable''s registration of a table it prepared (written as the extension''s owner once the caller is found to own the table)';
COMMENT ON FUNCTION dedup._set_time_window(oid, interval) IS 'dedup.set_time_window''s body: stores a table''s time window';
COMMENT ON FUNCTION dedup._unregister_table(oid) IS 'dedup.disable''s removal of a table''s registration; returns its key type';
COMMENT ON FUNCTION dedup._validate_enable(text, text) IS 'dedup.enable''s check of its model and action';
COMMENT ON FUNCTION dedup._trigger() IS
    'The row trigger dedup.enable installs (BEFORE INSERT OR UPDATE): checks the row, sets its document, signature, verdict and duplicate_of, applies the action';
COMMENT ON FUNCTION dedup._config_changed() IS
    'Statement trigger on the configuration tables: every backend refreshes its cached table settings, collections, sources and models';
COMMENT ON FUNCTION dedup._delete_trigger() IS
    'The row trigger dedup.enable installs AFTER DELETE: the deleted rows'' documents leave the collection statistics';
COMMENT ON FUNCTION dedup._partitions_changed() IS
    'Event trigger: a partition created or attached under an enabled table gets its statement triggers and its rows are counted or checked; one that leaves takes its documents out';
COMMENT ON FUNCTION dedup._forget_dropped() IS
    'Event trigger: DROP TABLE of an enabled table (or of a column a collection reads) takes its registration, and a collection enable created, with it';

-- 0.2.0 refuses an enabled table with inheritance children or FORCE ROW LEVEL
-- SECURITY (dedup.enable and the event trigger dedup_unsupported_ddl); one enabled
-- under 0.1.0 is named here, to be changed by its owner.
DO $$
DECLARE
    t regclass;
BEGIN
    FOR t IN SELECT x.tbl FROM dedup.enabled_tables x
             WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_inherits i JOIN pg_catalog.pg_class p
                           ON p.oid = i.inhparent AND p.relkind = 'r' WHERE i.inhparent = x.tbl) LOOP
        RAISE WARNING 'table % is enabled for deduplication and has inheritance children, whose rows it reads unchecked', t
            USING HINT = 'move the children''s rows into the table or into partitions (declarative partitioning is followed), or dedup.disable the table';
    END LOOP;
    FOR t IN SELECT x.tbl FROM dedup.enabled_tables x
             WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_class c
                           WHERE c.relforcerowsecurity
                             AND (c.oid = x.tbl OR c.oid IN (SELECT p.relid FROM pg_catalog.pg_partition_tree(x.tbl) p))) LOOP
        RAISE WARNING 'table % is enabled for deduplication and has FORCE ROW LEVEL SECURITY, which hides rows from pg_dedup', t
            USING HINT = 'ALTER TABLE ... NO FORCE ROW LEVEL SECURITY (the policies still apply to every other role)';
    END LOOP;
END $$;

-- DDL runs in a session under session_replication_role = replica all the same (a
-- bulk loader's, a migration tool's): the event triggers keep the registrations in
-- step with the tables there too (a table dropped in such a session had left a
-- registration no function could remove).
ALTER EVENT TRIGGER dedup_partition_dropping ENABLE ALWAYS;
ALTER EVENT TRIGGER dedup_partitions_changed ENABLE ALWAYS;
ALTER EVENT TRIGGER dedup_unsupported_ddl ENABLE ALWAYS;
ALTER EVENT TRIGGER dedup_forget_dropped ENABLE ALWAYS;
ALTER EVENT TRIGGER dedup_columns_renamed ENABLE ALWAYS;
ALTER EVENT TRIGGER dedup_key_type_changed ENABLE ALWAYS;

-- What each event trigger is for (its function's comment says how).
COMMENT ON EVENT TRIGGER dedup_partition_dropping IS
    'pg_dedup: a partition of an enabled table that is dropped takes its documents out of the statistics first; partition DDL takes the statistics lock first';
COMMENT ON EVENT TRIGGER dedup_partitions_changed IS
    'pg_dedup: partitions created, attached or detached under an enabled table are counted, checked or taken out';
COMMENT ON EVENT TRIGGER dedup_unsupported_ddl IS
    'pg_dedup: refuses inheritance children of an enabled table and FORCE ROW LEVEL SECURITY on one';
COMMENT ON EVENT TRIGGER dedup_forget_dropped IS
    'pg_dedup: a dropped enabled table (or a column a collection reads) takes its registration with it';
COMMENT ON EVENT TRIGGER dedup_columns_renamed IS
    'pg_dedup: follows renamed columns of an enabled table, refuses a renamed key column';
COMMENT ON EVENT TRIGGER dedup_key_type_changed IS
    'pg_dedup: keeps duplicate_of and the key type of an enabled table in step with its key';

-- 0.2.0 reserves the collection name "default" for models of no collection (the
-- built-in model's export names it): one made under 0.1.0 stays, and a model of
-- no collection then weighs with its statistics and is readable by its readers.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM dedup.collections c WHERE c.name = 'default') THEN
        RAISE WARNING 'a collection is named "default", which 0.2.0 reserves for models of no collection'
            USING HINT = 'enable its tables into a collection of another name (dedup.disable, then dedup.enable with collection => ...), then dedup.drop_collection(''default'')';
    END IF;
END $$;

-- Rights on the extension's tables: 0.1.0 needed them for a table owner's
-- dedup.enable, and a DBA may have granted them to application roles. In 0.2.0
-- they are the configuration rights (every collection's words, every enabled
-- table's settings, the models' weights): say which roles hold them. (SELECT on
-- the three tables PUBLIC reads in 0.2.0 is no such right.)
DO $$
DECLARE
    holders text;
BEGIN
    SELECT pg_catalog.string_agg(DISTINCT e.grantee::pg_catalog.regrole::text, ', ') INTO holders
    FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) AS e
    WHERE c.relnamespace = 'dedup'::pg_catalog.regnamespace AND c.relkind IN ('r', 'p', 'S')
      AND e.grantee <> 0 AND e.grantee <> c.relowner
      AND NOT (e.privilege_type = 'SELECT'
               AND c.oid IN ('dedup.enabled_tables'::pg_catalog.regclass, 'dedup.collections'::pg_catalog.regclass,
                             'dedup.collection_tables'::pg_catalog.regclass));
    IF holders IS NOT NULL THEN
        RAISE WARNING 'roles % hold rights on pg_dedup''s tables, which 0.1.0''s dedup.enable needed: in 0.2.0 they are the configuration rights', holders
            USING HINT = 'revoke them from roles that only own, write or read tables (README, Upgrade): REVOKE ALL ON ALL TABLES IN SCHEMA dedup FROM role; REVOKE ALL ON ALL SEQUENCES IN SCHEMA dedup FROM role';
    END IF;
END $$;

-- A GRANT or REVOKE in an extension script records the object's whole access
-- list as the extension's initial privileges, the grants a DBA made before the
-- update included, and pg_dump leaves initial privileges out: a dump of the
-- database would lose them. The initial privileges keep what the extension
-- itself gives (its owner's, PUBLIC's), as a fresh install records them; an entry
-- left with nothing (a column's) goes. From PostgreSQL 17 each role named in
-- initial privileges is also a shared dependency ('i'): those of the roles
-- taken out go with them, or the roles could not be dropped.
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT ip.classoid, ip.objoid, ip.objsubid,
               ARRAY(SELECT a FROM pg_catalog.unnest(ip.initprivs) AS a
                     WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.aclexplode(ARRAY[a]) AS e
                                       WHERE e.grantee <> 0 AND e.grantee <> e.grantor)) AS kept,
               ARRAY(SELECT DISTINCT e.grantee FROM pg_catalog.aclexplode(ip.initprivs) AS e
                     WHERE e.grantee <> 0 AND e.grantee <> e.grantor) AS dropped
        FROM pg_catalog.pg_init_privs ip
        WHERE ip.privtype = 'e'
          AND (EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                       WHERE d.classid = ip.classoid AND d.objid = ip.objoid AND d.deptype = 'e'
                         AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
                         AND d.refobjid = (SELECT x.oid FROM pg_catalog.pg_extension x WHERE x.extname = 'pg_dedup'))
               -- The schema, which CREATE EXTENSION made and which is no member.
               OR (ip.classoid = 'pg_catalog.pg_namespace'::pg_catalog.regclass
                   AND ip.objoid = 'dedup'::pg_catalog.regnamespace))
          AND EXISTS (SELECT 1 FROM pg_catalog.aclexplode(ip.initprivs) AS e
                      WHERE e.grantee <> 0 AND e.grantee <> e.grantor)
    LOOP
        IF pg_catalog.cardinality(r.kept) > 0 THEN
            UPDATE pg_catalog.pg_init_privs ip SET initprivs = r.kept
            WHERE ip.classoid = r.classoid AND ip.objoid = r.objoid AND ip.objsubid = r.objsubid AND ip.privtype = 'e';
        ELSE
            DELETE FROM pg_catalog.pg_init_privs ip
            WHERE ip.classoid = r.classoid AND ip.objoid = r.objoid AND ip.objsubid = r.objsubid AND ip.privtype = 'e';
        END IF;
        IF pg_catalog.current_setting('server_version_num')::int >= 170000 THEN
            DELETE FROM pg_catalog.pg_shdepend d
            WHERE d.dbid = (SELECT b.oid FROM pg_catalog.pg_database b WHERE b.datname = pg_catalog.current_database())
              AND d.classid = r.classoid AND d.objid = r.objoid AND d.objsubid = r.objsubid
              AND d.refclassid = 'pg_catalog.pg_authid'::pg_catalog.regclass AND d.deptype = 'i'
              AND d.refobjid = ANY (r.dropped);
        END IF;
    END LOOP;
END $$;
