-- dedup.term_stats_agg(dedup.document) → jsonb
--   {"n_docs": N, "total_len": L, "terms": {"<term>": [df, cf], …}}
-- The state is `internal` (a Rust StatsAccumulator) with explicit combine, serial and
-- deserial functions, declared here by hand: pgrx's generated DESERIALFUNC for an
-- internal state is wrong (pgrx #2351). PARALLEL SAFE: regress shows a Partial Aggregate.

CREATE FUNCTION dedup._term_stats_agg_trans(internal, dedup.document) RETURNS internal
    IMMUTABLE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'term_stats_agg_trans_wrapper';
CREATE FUNCTION dedup._term_stats_agg_combine(internal, internal) RETURNS internal
    IMMUTABLE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'term_stats_agg_combine_wrapper';
CREATE FUNCTION dedup._term_stats_agg_serial(internal) RETURNS bytea
    IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'term_stats_agg_serial_wrapper';
CREATE FUNCTION dedup._term_stats_agg_deserial(bytea, internal) RETURNS internal
    IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'term_stats_agg_deserial_wrapper';
CREATE FUNCTION dedup._term_stats_agg_final(internal) RETURNS jsonb
    IMMUTABLE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'term_stats_agg_final_wrapper';

CREATE AGGREGATE dedup.term_stats_agg(dedup.document) (
    SFUNC = dedup._term_stats_agg_trans,
    STYPE = internal,
    COMBINEFUNC = dedup._term_stats_agg_combine,
    SERIALFUNC = dedup._term_stats_agg_serial,
    DESERIALFUNC = dedup._term_stats_agg_deserial,
    FINALFUNC = dedup._term_stats_agg_final,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE dedup.term_stats_agg(dedup.document) IS
    'N, total length, and df/cf per term over a set of documents, as jsonb {"n_docs","total_len","terms":{term:[df,cf]}}';

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

-- Ownership, as ALTER TABLE checks it: enable, disable and recompute(tbl, ...)
-- change a table (its columns, triggers, stored values), and joining a collection
-- makes its other tables' writers run work on behalf of the new one.
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

-- Every table a collection reads, when the collection exists: joining it takes
-- owning them all.
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

-- recompute: SQL wrappers give the public signatures their regclass/name types.
CREATE FUNCTION dedup.recompute(collection text) RETURNS bigint
    VOLATILE STRICT PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp LANGUAGE sql
    AS $$ SELECT dedup._recompute(collection, NULL, NULL) $$;
COMMENT ON FUNCTION dedup.recompute(text) IS
    'Rebuilds a collection''s statistics from its registered tables and refreshes stored derived values; returns the rows processed';
CREATE FUNCTION dedup.recompute(tbl regclass, doc_column name, collection text) RETURNS bigint
    VOLATILE STRICT PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM dedup._require_owner(tbl);
    PERFORM dedup._require_collection_owner(collection);
    RETURN dedup._recompute(collection, tbl::oid, doc_column::text);
END $$;
COMMENT ON FUNCTION dedup.recompute(regclass, name, text) IS
    'Registers tbl.doc_column as documents of the collection, then recomputes the collection';
