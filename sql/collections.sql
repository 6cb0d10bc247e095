-- Collections and their term statistics.
-- A collection is a named set of documents sharing N, the total length, and df/cf
-- per term. All three tables are extension configuration: pg_dump keeps their rows.

CREATE TABLE dedup.collections (
    id          serial PRIMARY KEY,
    name        text NOT NULL UNIQUE CHECK (name <> ''),
    lang        text NOT NULL CHECK (lang IN ('auto', 'russian', 'english', 'simple')),
    weighting   text NOT NULL CHECK (weighting IN ('bm25', 'tf_ridf')),
    k1          float8 NOT NULL CHECK (k1 >= 0 AND k1 <= 10),
    b           float8 NOT NULL CHECK (b >= 0 AND b <= 1),
    options     jsonb NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE dedup.collections IS 'pg_dedup collections: documents that share term statistics';

-- One row per collection. add_document/remove_document update it last, after the
-- term rows, so every writer takes its locks in the same order.
CREATE TABLE dedup.collection_stats (
    collection_id        int PRIMARY KEY,
    n_docs               bigint NOT NULL DEFAULT 0,
    total_len            bigint NOT NULL DEFAULT 0,
    last_recompute       timestamptz,
    n_docs_at_recompute  bigint NOT NULL DEFAULT 0,
    changes_since_recompute bigint NOT NULL DEFAULT 0,
    -- A table the collection read was dropped since the last recompute, and its
    -- documents are still counted: only the configuration rights read the
    -- statistics then (src/pg/privilege.rs, may_read_collection).
    dropped_documents    boolean NOT NULL DEFAULT false
);
COMMENT ON TABLE dedup.collection_stats IS 'N and total length per collection, and what changed since the last recompute';

-- No foreign key here: an RI check per upserted term would double the cost of
-- add_document. drop_collection deletes the rows itself.
CREATE TABLE dedup.term_stats (
    collection_id  int NOT NULL,
    -- Default collation on purpose: lookups join against text parameters of the
    -- default collation, and a "C" column would keep the primary key out of them.
    term           text NOT NULL,
    df             bigint NOT NULL,
    cf             bigint NOT NULL,
    PRIMARY KEY (collection_id, term)
) WITH (fillfactor = 70);
COMMENT ON TABLE dedup.term_stats IS 'df (documents holding the term) and cf (occurrences) per term and collection';

-- Statistics changes not yet folded into term_stats and collection_stats (a batch
-- larger than 1: dedup.stats_batch, automatic by default). Written once per
-- committing transaction, so it carries nothing a row does not need: no key (the
-- fold takes every committed row of a collection) and no CHECK (only
-- src/pg/stats.rs writes it). A transaction's changes are one row: its documents'
-- terms with df changes in dfs and cf changes in tfs (sign 1), and its changes of
-- N, the total length and the change count (a row without dfs, written by 0.1.0,
-- is one document, +1 or -1, whose N was counted at once).
CREATE TABLE dedup.term_stats_pending (
    collection_id  int NOT NULL,
    terms          text[] NOT NULL,
    tfs            int8[] NOT NULL,
    sign           int2 NOT NULL,
    dfs            int8[],
    n_docs         bigint NOT NULL DEFAULT 0,
    total_len      bigint NOT NULL DEFAULT 0,
    changes        bigint NOT NULL DEFAULT 0
);
CREATE INDEX term_stats_pending_collection ON dedup.term_stats_pending (collection_id);
-- No key: the whole row identifies it, so that a publication FOR ALL TABLES (a
-- change-data-capture tool's) lets the fold, recompute, disable and TRUNCATE
-- delete pending rows (55000 "does not have a replica identity and publishes
-- deletes"). The old row is logged only under wal_level = logical.
ALTER TABLE dedup.term_stats_pending REPLICA IDENTITY FULL;
-- A pending row holds a whole document's terms: lz4 where the server has it.
DO $$
BEGIN
    ALTER TABLE dedup.term_stats_pending ALTER COLUMN terms SET COMPRESSION lz4,
                                         ALTER COLUMN tfs SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    NULL;
END $$;
COMMENT ON TABLE dedup.term_stats_pending IS
    'Committed statistics changes waiting to be folded into term_stats and collection_stats (dedup.stats_batch); dedup.flush_stats folds them now';

-- Tables whose documents make up a collection (recompute reads them).
CREATE TABLE dedup.collection_tables (
    collection_id  int NOT NULL,
    tbl            regclass NOT NULL,
    doc_column     name NOT NULL,
    sig_column     name,
    PRIMARY KEY (collection_id, tbl)
);
COMMENT ON TABLE dedup.collection_tables IS 'the tables and columns that recompute(collection) reads';

SELECT pg_catalog.pg_extension_config_dump('dedup.collections', '');
SELECT pg_catalog.pg_extension_config_dump('dedup.collections_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('dedup.collection_stats', '');
SELECT pg_catalog.pg_extension_config_dump('dedup.term_stats', '');
SELECT pg_catalog.pg_extension_config_dump('dedup.term_stats_pending', '');
SELECT pg_catalog.pg_extension_config_dump('dedup.collection_tables', '');

-- A readable view of the statistics.
CREATE VIEW dedup.term_stats_by_name AS
SELECT c.name AS collection, t.term, t.df, t.cf
FROM dedup.term_stats t JOIN dedup.collections c ON c.id = t.collection_id;
COMMENT ON VIEW dedup.term_stats_by_name IS
    'Each collection''s term statistics by collection name: document frequency (df) and collection frequency (cf) of each term';
