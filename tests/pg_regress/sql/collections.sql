-- Collections, term statistics, weights and recompute.
BEGIN;

-- Bad parameters give 22023; an unknown collection gives 42704 with a hint.
SELECT err($$SELECT dedup.create_collection('c', k1 => -1)$$);
SELECT err($$SELECT dedup.create_collection('c', b => 1.5)$$);
SELECT err($$SELECT dedup.create_collection('c', weighting => 'tfidf')$$);
SELECT err($$SELECT dedup.create_collection('c', lang => 'klingon')$$);
SELECT err($$SELECT dedup.create_collection('')$$);
SELECT err($$SELECT dedup.create_collection('c', options => '[1]')$$);
SELECT err($$SELECT dedup.add_document('nope', dedup.to_document('x'))$$);
SELECT err($$SELECT dedup.drop_collection('nope')$$);
SELECT err($$SELECT dedup.recompute('nope')$$);

SELECT dedup.create_collection('news');
SELECT err($$SELECT dedup.create_collection('news')$$);
SELECT name, lang, weighting, k1, b, options FROM dedup.collections;

-- A small hand-checked corpus.
CREATE TEMP TABLE docs (id int PRIMARY KEY, doc dedup.document);
INSERT INTO docs VALUES
  (1, '{"v":1,"terms":{"cat":2,"dog":1}}'),
  (2, '{"v":1,"terms":{"cat":1,"fish":3}}'),
  (3, '{"v":1,"terms":{"bird":1,"dog":2,"fish":1}}');
SELECT dedup.add_document('news', doc) FROM docs ORDER BY id;
SELECT term, df, cf FROM dedup.term_stats_by_name WHERE collection = 'news' ORDER BY term;
SELECT n_docs, total_len FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id;

-- BM25 with Lucene's IDF ln(1 + (N - df + 0.5)/(df + 0.5)), N = 3, avgdl = 11/3:
-- for doc 1 (dl = 3), cat: tf 2, df 2; dog: tf 1, df 2.
WITH expected(term, w) AS (VALUES
  ('cat', ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) * 2 * 3.0 / (2 + 2.0 * (1 - 0.75 + 0.75 * 3 / (11 / 3.0)))),
  ('dog', ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) * 1 * 3.0 / (1 + 2.0 * (1 - 0.75 + 0.75 * 3 / (11 / 3.0)))))
SELECT e.term, abs(w.weight - e.w) < 1e-9 AS matches
FROM expected e JOIN dedup.weights((SELECT doc FROM docs WHERE id = 1), 'news') w USING (term)
ORDER BY 1;

-- TF-RIDF: (0.5 + 0.5 tf/tf_max) * RIDF, RIDF = -ln(df/N) + ln(1 - exp(-cf/N)) floored at 0.01;
-- doc 2: cat tf 1, fish tf 3 (the max). cat's RIDF is negative, so it gets the floor.
WITH expected(term, tf, ridf) AS (VALUES
  ('cat',  0.5 + 0.5 * 1 / 3.0, -ln(2 / 3.0) + ln(1 - exp(-3 / 3.0))),
  ('fish', 0.5 + 0.5 * 3 / 3.0, -ln(2 / 3.0) + ln(1 - exp(-4 / 3.0))))
SELECT e.term, round(e.ridf::numeric, 6) AS ridf, abs(w.weight - e.tf * greatest(e.ridf, 0.01)) < 1e-9 AS matches
FROM expected e JOIN dedup.weights((SELECT doc FROM docs WHERE id = 2), 'news', 'tf_ridf') w USING (term)
ORDER BY 1;

SELECT * FROM dedup.top_terms((SELECT doc FROM docs WHERE id = 3), 'news', 2);
SELECT count(*) FROM dedup.top_terms((SELECT doc FROM docs WHERE id = 3), 'news', 0);
SELECT err($$SELECT * FROM dedup.top_terms('{"v":1}', 'news', -1)$$);
SELECT err($$SELECT * FROM dedup.weights('{"v":1}', 'news', 'okapi')$$);

-- The aggregate gives the same statistics in one pass.
SELECT dedup.term_stats_agg(doc) FROM docs;
SELECT dedup.term_stats_agg(doc) FROM docs WHERE false;

-- Removing a document is the inverse of adding it; terms reaching df 0 disappear.
SELECT dedup.remove_document('news', doc) FROM docs WHERE id = 3;
SELECT term, df, cf FROM dedup.term_stats_by_name WHERE collection = 'news' ORDER BY term;
SELECT dedup.term_stats_agg(doc) FROM docs WHERE id <> 3;

-- recompute from the table gives back all three documents, with progress notices.
SELECT dedup.recompute('docs', 'doc', 'news');
SELECT term, df, cf FROM dedup.term_stats_by_name WHERE collection = 'news' ORDER BY term;
SELECT n_docs, total_len, last_recompute IS NOT NULL AS recomputed, changes_since_recompute
FROM dedup.collection_stats;
SELECT err($$SELECT dedup.recompute('docs', 'id', 'news')$$);
SELECT err($$SELECT dedup.recompute('docs', 'nope', 'news')$$);

-- An empty collection recomputes to 0 without error.
SELECT dedup.create_collection('empty', weighting => 'tf_ridf', k1 => 2, b => 0);
SELECT dedup.recompute('empty');
CREATE TEMP TABLE nodocs (doc dedup.document);
SELECT dedup.recompute('nodocs', 'doc', 'empty');
-- A table's one signature column is refreshed by the first collection that
-- registered it: a second collection of another document column leaves it alone.
CREATE TEMP TABLE twodocs (a dedup.document, b dedup.document, sig dedup.signature);
INSERT INTO twodocs SELECT doc, doc FROM docs;
SELECT dedup.recompute('twodocs', 'a', 'news') > 0 AS first;
SELECT dedup.recompute('twodocs', 'b', 'empty') > 0 AS second;
SELECT c.name, t.doc_column, t.sig_column FROM dedup.collection_tables t JOIN dedup.collections c ON c.id = t.collection_id
WHERE t.tbl = 'twodocs'::regclass ORDER BY 1;

SELECT dedup.drop_collection('empty');
SELECT count(*) FROM dedup.collections;
ROLLBACK;

-- Parallel aggregation: the plan has a Partial Aggregate and gives the same result.
BEGIN;
CREATE TABLE par AS
SELECT i, dedup.to_document('word' || (i % 97) || ' term' || (i % 13) || ' common text number ' || i) AS doc
FROM generate_series(1, 5000) i;
ANALYZE par;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT dedup.term_stats_agg(doc) FROM par;
CREATE TEMP TABLE par_result AS SELECT dedup.term_stats_agg(doc) AS s FROM par;
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT (SELECT s FROM par_result) = dedup.term_stats_agg(doc) AS parallel_equals_serial,
       (SELECT s->'n_docs' FROM par_result) AS n_docs
FROM par;
ROLLBACK;

-- Batched statistics: with a batch larger than 1, the term rows and N lag until a
-- fold (one pending row per committed change; add_document writes its own).
BEGIN;
SELECT dedup.create_collection('batched');
SET LOCAL dedup.stats_batch = 3;
SET LOCAL dedup.background_fold = off;
CREATE TEMP TABLE bd AS
SELECT i, dedup.to_document('кот пес рыба ' || repeat('птица ', i), lang => 'simple') AS doc FROM generate_series(1, 5) i;
SELECT count(dedup.add_document('batched', doc)) FROM bd;
SELECT n_docs, (SELECT count(*) FROM dedup.term_stats_pending p WHERE p.collection_id = c.id) AS pending_rows
FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id
WHERE c.name = 'batched';
SELECT term, df, cf FROM dedup.term_stats_by_name WHERE collection = 'batched' ORDER BY term;
SELECT dedup.flush_stats('batched') AS folded;
SELECT term, df, cf FROM dedup.term_stats_by_name WHERE collection = 'batched' ORDER BY term;
SELECT dedup.remove_document('batched', doc) FROM bd WHERE i = 5;
SELECT dedup.flush_stats('batched') AS folded;
SELECT (SELECT jsonb_object_agg(term, jsonb_build_array(df, cf)) FROM dedup.term_stats_by_name WHERE collection = 'batched')
     = (SELECT dedup.term_stats_agg(doc)->'terms' FROM bd WHERE i < 5) AS equals_aggregate;
SELECT err($$SET LOCAL dedup.stats_batch = -1$$);
-- A writer's session may fold more often than the automatic batch, not hold every
-- writer's changes back longer than its largest.
SELECT err($$SET LOCAL dedup.stats_batch = 100000$$);
ROLLBACK;

-- Background fold (the default): the transaction that fills a batch starts a
-- worker when it commits; the worker folds the committed pending documents.
SELECT dedup.create_collection('bg_fold');
SET dedup.stats_batch = 2;
SELECT dedup.add_document('bg_fold', dedup.to_document('кот пес рыба', lang => 'simple'));
SELECT dedup.add_document('bg_fold', dedup.to_document('кот пес', lang => 'simple'));
SELECT wait_folded('bg_fold');
SELECT n_docs, (SELECT count(*) FROM dedup.term_stats_pending p WHERE p.collection_id = c.id) AS pending_rows
FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id
WHERE c.name = 'bg_fold';
SELECT term, df, cf FROM dedup.term_stats_by_name WHERE collection = 'bg_fold' ORDER BY term;
SELECT count(*) AS pending_rows FROM dedup.term_stats_pending p JOIN dedup.collections c ON c.id = p.collection_id
WHERE c.name = 'bg_fold';
-- Inside one transaction the worker could not see the rows: at twice the batch
-- the insert folds them itself.
BEGIN;
SELECT count(dedup.add_document('bg_fold', dedup.to_document(t, lang => 'simple')))
FROM unnest(ARRAY['утка', 'утка гусь', 'гусь', 'утка лебедь']) t;
SELECT n_docs, (SELECT count(*) FROM dedup.term_stats_pending p WHERE p.collection_id = c.id) AS pending_rows
FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id
WHERE c.name = 'bg_fold';
SELECT term, df, cf FROM dedup.term_stats_by_name WHERE collection = 'bg_fold' ORDER BY term;
ROLLBACK;
RESET dedup.stats_batch;
SELECT dedup.drop_collection('bg_fold');
-- dedup.status counts the pending changes as the folds do: a removal is one more,
-- not one less (the net count showed -1 for these three). A collection of its
-- own, which no fold worker lingers on.
SELECT dedup.create_collection('pending_count');
SET dedup.stats_batch = 16;
SELECT dedup.add_document('pending_count', dedup.to_document('лиса', lang => 'simple'));
SELECT dedup.add_document('pending_count', dedup.to_document('кот пес', lang => 'simple'));
SELECT dedup.remove_document('pending_count', dedup.to_document('лиса', lang => 'simple'));
SELECT documents, pending_documents FROM dedup.status WHERE collection = 'pending_count';
RESET dedup.stats_batch;
SELECT dedup.drop_collection('pending_count');

-- Unknown options are refused (a typo would otherwise be ignored); a bad
-- min_shared_keys is named as itself.
SELECT err($$SELECT dedup.create_collection('typo', options => '{"min_shared_key": 1}')$$);
SELECT err($$SELECT dedup.create_collection('typo', options => '{"min_shared_keys": 300}')$$);
-- An extension's own table cannot be enabled.
SELECT err($$SELECT dedup.enable('dedup.models', 'name')$$);
-- "default" is the collection models of no collection name (the built-in
-- model's export): nobody may create it, directly or by enabling a table of that
-- name, which is enabled with a collection name of its own.
SELECT err($$SELECT dedup.create_collection('default')$$);
CREATE TABLE "default" (id int PRIMARY KEY, body text);
SELECT err($$SELECT dedup.enable('"default"', 'body')$$);
SELECT dedup.enable('"default"', 'body', collection => 'default_table');
-- A collection function given the table's name says which collection it has.
SELECT err($$SELECT dedup.recompute('default')$$);
SELECT dedup.disable('"default"');
DROP TABLE "default";
