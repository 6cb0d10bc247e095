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
    'Each body term''s weight under a collection''s statistics (bm25 or tf_ridf)';
