-- The candidate operator % and the GIN operator class dedup.signature_ops.

-- STABLE, not IMMUTABLE: topwords reads dedup.min_shared_keys and longest reads
-- dedup.similarity_threshold, so a SET can change the answer.
CREATE FUNCTION dedup._signature_match(dedup.signature, dedup.signature) RETURNS boolean
    STABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'signature_match_wrapper';

CREATE OPERATOR dedup.% (
    LEFTARG = dedup.signature,
    RIGHTARG = dedup.signature,
    FUNCTION = dedup._signature_match,
    COMMUTATOR = OPERATOR(dedup.%),
    RESTRICT = contsel,
    JOIN = contjoinsel
);
COMMENT ON OPERATOR dedup.% (dedup.signature, dedup.signature) IS
    'candidate pair: imatch shares a key, topwords shares dedup.min_shared_keys keys, longest reaches dedup.similarity_threshold';

-- GIN support, written in Rust (src/pg/signature.rs). Keys are int4.
CREATE FUNCTION dedup._gin_extract_value(dedup.signature, internal, internal) RETURNS internal
    IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'dedup_gin_extract_value';
CREATE FUNCTION dedup._gin_extract_query(dedup.signature, internal, int2, internal, internal, internal, internal)
    RETURNS internal
    IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'dedup_gin_extract_query';
-- (tri)consistent read the GUC thresholds, hence STABLE.
CREATE FUNCTION dedup._gin_consistent(internal, int2, dedup.signature, int4, internal, internal, internal, internal)
    RETURNS boolean
    STABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'dedup_gin_consistent';
CREATE FUNCTION dedup._gin_tri_consistent(internal, int2, dedup.signature, int4, internal, internal, internal)
    RETURNS "char"
    STABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'dedup_gin_tri_consistent';

CREATE OPERATOR CLASS dedup.signature_ops DEFAULT FOR TYPE dedup.signature USING gin AS
    OPERATOR 1 dedup.% (dedup.signature, dedup.signature),
    FUNCTION 1 btint4cmp(int4, int4),
    FUNCTION 2 dedup._gin_extract_value(dedup.signature, internal, internal),
    FUNCTION 3 dedup._gin_extract_query(dedup.signature, internal, int2, internal, internal, internal, internal),
    FUNCTION 4 dedup._gin_consistent(internal, int2, dedup.signature, int4, internal, internal, internal, internal),
    FUNCTION 6 dedup._gin_tri_consistent(internal, int2, dedup.signature, int4, internal, internal, internal),
    STORAGE int4;

CREATE FUNCTION dedup.candidates(tbl regclass, sig dedup.signature, max int DEFAULT 100)
    RETURNS TABLE(ctid tid, key text, shared_keys int, similarity float8)
    STABLE STRICT LANGUAGE sql
    AS $$ SELECT * FROM dedup._candidates(tbl::oid, sig, max) $$;
COMMENT ON FUNCTION dedup.candidates(regclass, dedup.signature, int) IS
    'Rows of tbl whose signature is a candidate for sig, found through the GIN index, best first';
