-- pg_dedup bootstrap: the extension's own types, declared before anything uses them.
-- The I/O functions are Rust (`#[pg_extern(sql = false)]` in src/pg/document.rs);
-- pgrx names their C symbols `<function>_wrapper`.

-- Text analysis reads UTF-8: refuse any other database encoding at once.
DO $$
BEGIN
    IF pg_catalog.getdatabaseencoding() <> 'UTF8' THEN
        RAISE EXCEPTION 'pg_dedup needs a UTF8 database; this one is %', pg_catalog.getdatabaseencoding()
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'create the database WITH ENCODING ''UTF8'' (and a UTF-8 locale)';
    END IF;
END $$;

-- ---------------------------------------------------------------------------
-- dedup.document
-- ---------------------------------------------------------------------------
CREATE TYPE dedup.document;

CREATE FUNCTION dedup._document_in(cstring) RETURNS dedup.document
    IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'document_in_wrapper';
CREATE FUNCTION dedup._document_out(dedup.document) RETURNS cstring
    IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'document_out_wrapper';
CREATE FUNCTION dedup._document_recv(internal) RETURNS dedup.document
    IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'document_recv_wrapper';
CREATE FUNCTION dedup._document_send(dedup.document) RETURNS bytea
    IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'document_send_wrapper';

CREATE TYPE dedup.document (
    INPUT = dedup._document_in,
    OUTPUT = dedup._document_out,
    RECEIVE = dedup._document_recv,
    SEND = dedup._document_send,
    INTERNALLENGTH = VARIABLE,
    STORAGE = extended
);
COMMENT ON TYPE dedup.document IS
    'Document model of a text: stemmed body and title terms, numbers, sentences, paragraphs, counts and metadata';

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

-- ---------------------------------------------------------------------------
-- dedup.signature: a scheme tag and a small sorted set of 32-bit keys
-- ---------------------------------------------------------------------------
CREATE TYPE dedup.signature;

CREATE FUNCTION dedup._signature_in(cstring) RETURNS dedup.signature
    IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'signature_in_wrapper';
CREATE FUNCTION dedup._signature_out(dedup.signature) RETURNS cstring
    IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'signature_out_wrapper';
CREATE FUNCTION dedup._signature_recv(internal) RETURNS dedup.signature
    IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'signature_recv_wrapper';
CREATE FUNCTION dedup._signature_send(dedup.signature) RETURNS bytea
    IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'signature_send_wrapper';

CREATE TYPE dedup.signature (
    INPUT = dedup._signature_in,
    OUTPUT = dedup._signature_out,
    RECEIVE = dedup._signature_recv,
    SEND = dedup._signature_send,
    INTERNALLENGTH = VARIABLE,
    STORAGE = extended
);
COMMENT ON TYPE dedup.signature IS
    'Candidate signature: a scheme (imatch, topwords, longest) and a sorted set of 32-bit keys, e.g. imatch:{12,345}';

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

-- ---------------------------------------------------------------------------
-- dedup.verdict: the four outcomes of comparing a pair in both directions
-- ---------------------------------------------------------------------------
CREATE TYPE dedup.verdict AS ENUM ('distinct', 'a_duplicates_b', 'b_duplicates_a', 'mutual');
COMMENT ON TYPE dedup.verdict IS
    'distinct, a_duplicates_b (a adds nothing to b), b_duplicates_a, or mutual';
