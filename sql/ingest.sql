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
    enabled_at           timestamptz NOT NULL DEFAULT now(),
    -- A primary key of several columns: the composite type of its columns, which
    -- duplicate_of has (NULL: one column, and duplicate_of has its type).
    key_type             regtype,
    -- Candidates of a row are the rows published within this of it (NULL: all).
    time_window          interval CHECK (time_window > interval '0')
);
COMMENT ON TABLE dedup.enabled_tables IS 'Tables deduplicated on insert, and how (see dedup.enable)';
COMMENT ON COLUMN dedup.enabled_tables.model IS 'The model that judges the table''s rows (dedup.enable''s model): default for the built-in one, NULL for the threshold rule';

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
-- A dropped table's rows go with it (dedup._forget_dropped, on every DROP in the
-- database): without it each dropped table, a temporary one too, read them all.
CREATE INDEX rejected_tbl ON dedup.rejected (tbl);

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

-- The key of the trigger's signature-key lock tags (src/pg/keylocks.rs): pg_locks,
-- which every role may read, shows a keyed hash of each key, not the key (a word's
-- hash, which a word list inverts). Private to the extension's owner; not dumped
-- (a restored database makes its own).
CREATE TABLE dedup.lock_secret (
    only_row  boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    secret    uuid NOT NULL DEFAULT pg_catalog.gen_random_uuid()
);
COMMENT ON TABLE dedup.lock_secret IS 'The key that hides signature keys in the trigger''s advisory lock tags; private to the extension''s owner';
INSERT INTO dedup.lock_secret DEFAULT VALUES;

SELECT pg_catalog.pg_extension_config_dump('dedup.enabled_tables', '');
SELECT pg_catalog.pg_extension_config_dump('dedup.rejected', '');
SELECT pg_catalog.pg_extension_config_dump('dedup.rejected_id_seq', '');

-- The row trigger dedup._trigger() is written in Rust (src/pg/trigger.rs): BEFORE
-- INSERT, and BEFORE UPDATE OF the text columns. Its C entry points, and the other
-- trigger functions', refuse a direct call (0A000) and a trigger fired otherwise
-- than enable installs it (39P01).
CREATE FUNCTION dedup._trigger() RETURNS trigger
    LANGUAGE c AS 'MODULE_PATHNAME', '_trigger_wrapper';
CREATE FUNCTION dedup._statement_start() RETURNS trigger
    LANGUAGE c AS 'MODULE_PATHNAME', '_statement_start_wrapper';
CREATE FUNCTION dedup._row_stored() RETURNS trigger
    LANGUAGE c AS 'MODULE_PATHNAME', '_row_stored_wrapper';
CREATE FUNCTION dedup._statement_end() RETURNS trigger
    LANGUAGE c AS 'MODULE_PATHNAME', '_statement_end_wrapper';
CREATE FUNCTION dedup._config_changed() RETURNS trigger
    LANGUAGE c SET search_path = pg_catalog, pg_temp AS 'MODULE_PATHNAME', '_config_changed_wrapper';

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
CREATE TRIGGER config_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON dedup.lock_secret
    FOR EACH STATEMENT EXECUTE FUNCTION dedup._config_changed();
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

-- Raises 39P01 unless a trigger function fires under the name dedup.enable gives
-- its trigger (src/pg/trigger_entry.rs: the check of the C trigger functions).
CREATE FUNCTION dedup._check_trigger_name(function text, tg_name text, expected text) RETURNS void
    STRICT STABLE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'dedup_check_trigger_name';
COMMENT ON FUNCTION dedup._check_trigger_name(text, text, text) IS
    'Raises 39P01 unless tg_name is expected (or, where Citus is installed, expected_<shard id>): the trigger name check of dedup''s trigger functions';

-- Keeps the collection statistics right when rows go away.
-- SECURITY DEFINER with a pinned search_path: a role that may delete from an
-- enabled table needs no rights on the extension's tables.
CREATE FUNCTION dedup._delete_trigger() RETURNS trigger
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

-- TRUNCATE of an enabled table, or of a partition of one: its collection's
-- statistics are rebuilt from the tables it reads (the truncated one now empty). A
-- recompute reads every other table of a shared collection too.
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

CREATE FUNCTION dedup.disable(tbl regclass) RETURNS void
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

-- DROP TABLE (or DROP SCHEMA ... CASCADE) of a registered table, or DROP COLUMN of
-- a column a collection reads, takes its registration with it: otherwise
-- dedup.status, dedup.recompute and a later dedup.enable of a table with the same
-- name would all fail on the dropped relation. A collection that dedup.enable
-- created goes too once nothing reads it; a shared one keeps counting the dropped
-- documents until dedup.recompute, and a NOTICE says so. SECURITY DEFINER: the
-- owner of a table may drop it without rights on the dedup schema's tables.
CREATE FUNCTION dedup._forget_dropped() RETURNS event_trigger
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
CREATE EVENT TRIGGER dedup_forget_dropped ON sql_drop EXECUTE FUNCTION dedup._forget_dropped();

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

CREATE FUNCTION dedup.is_duplicate(tbl regclass, body text, title text DEFAULT NULL,
                                   published_at timestamptz DEFAULT NULL, source text DEFAULT NULL)
    RETURNS boolean STABLE LANGUAGE sql
    AS $$ SELECT dedup._is_duplicate(tbl::oid, body, title, published_at, source) $$;
COMMENT ON FUNCTION dedup.is_duplicate(regclass, text, text, timestamptz, text) IS
    'The trigger''s decision for a text, without inserting it: true when it duplicates a row of tbl';

CREATE FUNCTION dedup.find_original(tbl regclass, doc dedup.document)
    RETURNS TABLE(key text, verdict dedup.verdict, score float8) STABLE STRICT LANGUAGE sql
    AS $$ SELECT * FROM dedup._find_original(tbl::oid, doc) $$;
COMMENT ON FUNCTION dedup.find_original(regclass, dedup.document) IS
    'The originals (first of each chain) that doc duplicates in tbl, best first';

CREATE FUNCTION dedup.pairs(tbl regclass, model text DEFAULT NULL)
    RETURNS TABLE(a text, b text, verdict dedup.verdict, score float8) STABLE LANGUAGE sql
    AS $$ SELECT * FROM dedup._pairs(tbl::oid, model) $$;
COMMENT ON FUNCTION dedup.pairs(regclass, text) IS
    'The duplicate pairs of tbl (a < b by key): each row with its 50 best candidates found through the signature index';

CREATE FUNCTION dedup.groups(tbl regclass, model text DEFAULT NULL)
    RETURNS TABLE(key text, group_id bigint, is_original boolean) STABLE LANGUAGE sql
    AS $$ SELECT * FROM dedup._groups(tbl::oid, model) $$;
COMMENT ON FUNCTION dedup.groups(regclass, text) IS
    'Connected groups of duplicates; the original is the earliest document, then the most authoritative';

CREATE FUNCTION dedup.matrix_quality(tbl regclass, model text DEFAULT NULL)
    RETURNS TABLE(pairs bigint, symmetry float8, transitivity float8) STABLE LANGUAGE sql
    AS $$ SELECT * FROM dedup._matrix_quality(tbl::oid, model) $$;
COMMENT ON FUNCTION dedup.matrix_quality(regclass, text) IS
    'Lande et al.''s symmetry S and transitivity T of the duplicate relation of tbl';

-- Per collection: documents, duplicates, rejected rows, last recompute, staleness.
CREATE FUNCTION dedup._duplicates(collection_id int) RETURNS bigint
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

-- Every role may look; it sees the collections whose tables it may read (or all,
-- with the configuration rights). security_barrier: the filter runs before any
-- function of the caller's sees a row.
CREATE VIEW dedup.status WITH (security_barrier) AS
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

-- The rows 'skip' kept out of a table, for the table's owner (and the roles that
-- have its rights): to read them, and to delete them once dealt with. The
-- configuration rights read dedup.rejected itself. security_barrier: the filter
-- runs before any function of the caller's sees a row.
CREATE VIEW dedup.rejected_rows WITH (security_barrier) AS
SELECT r.id, r.tbl, r.row_data, r.original_key, r.verdict, r.score, r.rejected_at
FROM dedup.rejected r
WHERE pg_catalog.pg_has_role((SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid = r.tbl), 'USAGE');
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
