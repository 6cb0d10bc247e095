-- NULL in gives NULL (or nothing) out, never an error; empty input gives empty output.
BEGIN;
SELECT dedup.create_collection('n');
SELECT dedup.to_document(NULL) IS NULL AS to_document,
       dedup.tokens(NULL) IS NULL AS tokens,
       dedup.summary(NULL) IS NULL AS summary,
       dedup.numbers(NULL) IS NULL AS numbers,
       dedup.fingerprint(NULL) IS NULL AS fingerprint,
       dedup.signature(NULL, 'n') IS NULL AS signature,
       dedup.signature('{"v":1}', NULL) IS NULL AS signature_coll,
       dedup.shared_keys(NULL, 'imatch:{1}') IS NULL AS shared_keys,
       dedup.similarity('imatch:{1}', NULL) IS NULL AS similarity,
       dedup.compare(NULL, '{"v":1}', 'n') IS NULL AS compare,
       dedup.classify_pair(NULL, '{"v":1}', '{"v":1}') IS NULL AS classify_pair,
       dedup.pair_score('m', NULL, '{"v":1}') IS NULL AS pair_score,
       dedup.add_document('n', NULL) IS NULL AS add_document,
       dedup.remove_document(NULL, '{"v":1}') IS NULL AS remove_document,
       dedup.recompute(NULL::text) IS NULL AS recompute,
       dedup.staleness(NULL) IS NULL AS staleness,
       dedup.train('m', 'n', NULL) IS NULL AS train;
SELECT (SELECT count(*) FROM dedup.terms(NULL)) AS terms,
       (SELECT count(*) FROM dedup.weights(NULL, 'n')) AS weights,
       (SELECT count(*) FROM dedup.top_terms(NULL, 'n', 3)) AS top_terms,
       (SELECT count(*) FROM dedup.candidates(NULL, 'imatch:{1}')) AS candidates,
       (SELECT count(*) FROM dedup.explain_pair('m', NULL, NULL)) AS explain_pair;
SELECT dedup.term_stats_agg(NULL::dedup.document) AS agg_of_null;
-- Empty documents and signatures.
SELECT dedup.summary('{"v":1}')->>'terms' AS empty_terms,
       dedup.signature('{"v":1}', 'n') AS empty_signature,
       dedup.compare('{"v":1}', '{"v":1}', 'n') AS empty_pair;
ROLLBACK;
