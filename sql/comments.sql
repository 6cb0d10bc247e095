-- A comment for every public function defined in Rust (src/pg); the functions
-- defined in the other files carry theirs there. The golden test 00_setup lists any
-- public function of schema dedup without one.
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
COMMENT ON FUNCTION dedup._models_version() IS
    'Trigger on dedup.models: bumps the version of a changed model, so that every backend reloads it';
COMMENT ON FUNCTION dedup._find_original(oid, dedup.document) IS 'dedup.find_original by table OID';
COMMENT ON FUNCTION dedup._forget(oid, dedup.document) IS
    'Removes a deleted row''s document from its collection''s statistics (the delete trigger)';
COMMENT ON FUNCTION dedup._groups(oid, text) IS 'dedup.groups by table OID';
COMMENT ON FUNCTION dedup._is_duplicate(oid, text, text, timestamp with time zone, text) IS 'dedup.is_duplicate by table OID';
COMMENT ON FUNCTION dedup._table_document(oid, text, text, timestamp with time zone, text) IS
    'The document the trigger would store for a row of the table with this text (the collection''s language and limits): enable''s backfill';
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
