-- Signatures, the % operator, the GIN operator class and candidate lookup.
BEGIN;

-- Text form, binary-safe round trip and errors.
SELECT 'imatch:{30,10,20,10}'::dedup.signature AS sorted_unique;
SELECT 'longest:{}'::dedup.signature;
SELECT err($$SELECT 'imatch:{x}'::dedup.signature$$);
SELECT err($$SELECT 'nope:{1}'::dedup.signature$$);
SELECT err($$SELECT 'imatch:{99999999999}'::dedup.signature$$);
SELECT dedup.shared_keys('imatch:{1,2,3}', 'imatch:{2,3,4}') AS shared,
       dedup.similarity('longest:{1,2,3}', 'longest:{2,3,4,5,6}') AS similarity;

-- The candidate rule of each scheme.
SELECT 'imatch:{1,2}'::dedup.signature OPERATOR(dedup.%) 'imatch:{2,9}' AS imatch_one_key,
       'imatch:{1,2}'::dedup.signature OPERATOR(dedup.%) 'imatch:{3,9}' AS imatch_none,
       'imatch:{1,2}'::dedup.signature OPERATOR(dedup.%) 'topwords:{1,2}' AS mixed_schemes,
       'imatch:{}'::dedup.signature OPERATOR(dedup.%) 'imatch:{}' AS empty;
SELECT 'topwords:{1,2,3,4,5,6,7}'::dedup.signature OPERATOR(dedup.%) 'topwords:{1,2,3,4,5,6,99}' AS six_of_seven,
       'topwords:{1,2,3,4,5,6,7}'::dedup.signature OPERATOR(dedup.%) 'topwords:{1,2,3,4,5,98,99}' AS five_of_seven;
SET LOCAL dedup.min_shared_keys = 5;
SELECT 'topwords:{1,2,3,4,5,6,7}'::dedup.signature OPERATOR(dedup.%) 'topwords:{1,2,3,4,5,98,99}' AS five_with_guc_5;
SELECT 'longest:{1,2,3,4,5}'::dedup.signature OPERATOR(dedup.%) 'longest:{1,2,3,4,9}' AS four_of_five,
       'longest:{1,2,3,4,5}'::dedup.signature OPERATOR(dedup.%) 'longest:{1,2,3,8,9}' AS three_of_five;
SET LOCAL dedup.similarity_threshold = 0.6;
SELECT 'longest:{1,2,3,4,5}'::dedup.signature OPERATOR(dedup.%) 'longest:{1,2,3,8,9}' AS three_with_guc_06;
SELECT err($$SET LOCAL dedup.similarity_threshold = 1.5$$);
RESET dedup.min_shared_keys;
RESET dedup.similarity_threshold;

-- Signature options are validated when the collection is created.
SELECT err($$SELECT dedup.create_collection('x', options => '{"signature_scheme": "minhash"}')$$);
SELECT err($$SELECT dedup.create_collection('x', options => '{"signature_words": 0}')$$);
SELECT dedup.create_collection('sig_imatch');
SELECT dedup.create_collection('sig_topwords', options => '{"signature_scheme": "topwords"}');
SELECT dedup.create_collection('sig_longest', options => '{"signature_scheme": "longest"}');

-- 10,000 synthetic documents over a 700-word vocabulary, and 2,000 reprints
-- (ids 10001..12000) that keep the first 30 words of documents 1..2000.
CREATE TABLE corpus AS
WITH base AS (
  SELECT i, (SELECT string_agg('слово' || ((i * 7919 + j * j * 31 + (i % 17) * j) % 700), ' ')
             FROM generate_series(1, 40 + i % 23) j) AS body
  FROM generate_series(1, 10000) i)
SELECT i, dedup.to_document(body, lang => 'simple') AS doc FROM base
UNION ALL
SELECT 10000 + i, dedup.to_document(
  (SELECT string_agg(w, ' ' ORDER BY n) FROM regexp_split_to_table(body, ' ') WITH ORDINALITY AS t(w, n) WHERE n <= 30),
  lang => 'simple')
FROM base WHERE i <= 2000;
SELECT dedup.recompute('corpus', 'doc', 'sig_imatch') > 0 AS stats_built;
SELECT dedup.recompute('corpus', 'doc', 'sig_topwords') > 0 AS stats_built;
SELECT dedup.recompute('corpus', 'doc', 'sig_longest') > 0 AS stats_built;
ALTER TABLE corpus ADD COLUMN s_imatch dedup.signature, ADD COLUMN s_topwords dedup.signature,
                   ADD COLUMN s_longest dedup.signature;
-- Indexes first: an index built after an UPDATE in the same transaction cannot
-- be used by that transaction (broken HOT chains set indcheckxmin).
CREATE INDEX ON corpus USING gin (s_imatch);
CREATE INDEX ON corpus USING gin (s_topwords);
CREATE INDEX ON corpus USING gin (s_longest);
UPDATE corpus SET s_imatch = dedup.signature(doc, 'sig_imatch'),
                  s_topwords = dedup.signature(doc, 'sig_topwords'),
                  s_longest = dedup.signature(doc, 'sig_longest');
ANALYZE corpus;

SET LOCAL enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT i FROM corpus WHERE s_imatch OPERATOR(dedup.%) 'imatch:{1,2}';

-- Index results equal seqscan results, for every scheme, over 100 probes each.
CREATE TEMP TABLE probes AS SELECT i AS probe, s_imatch, s_topwords, s_longest FROM corpus WHERE i % 120 = 1;
CREATE TEMP TABLE by_index AS
SELECT 'imatch' AS scheme, p.probe, c.i FROM probes p JOIN corpus c ON c.s_imatch OPERATOR(dedup.%) p.s_imatch
UNION ALL
SELECT 'topwords', p.probe, c.i FROM probes p JOIN corpus c ON c.s_topwords OPERATOR(dedup.%) p.s_topwords
UNION ALL
SELECT 'longest', p.probe, c.i FROM probes p JOIN corpus c ON c.s_longest OPERATOR(dedup.%) p.s_longest;
SET LOCAL enable_seqscan = on;
SET LOCAL enable_indexscan = off;
SET LOCAL enable_bitmapscan = off;
CREATE TEMP TABLE by_seqscan AS
SELECT 'imatch' AS scheme, p.probe, c.i FROM probes p JOIN corpus c ON c.s_imatch OPERATOR(dedup.%) p.s_imatch
UNION ALL
SELECT 'topwords', p.probe, c.i FROM probes p JOIN corpus c ON c.s_topwords OPERATOR(dedup.%) p.s_topwords
UNION ALL
SELECT 'longest', p.probe, c.i FROM probes p JOIN corpus c ON c.s_longest OPERATOR(dedup.%) p.s_longest;
SELECT scheme, count(*) AS matches, count(*) > count(DISTINCT probe) AS beyond_self
FROM by_index GROUP BY scheme ORDER BY scheme;
SELECT (SELECT count(*) FROM (TABLE by_index EXCEPT ALL TABLE by_seqscan) d) AS only_in_index,
       (SELECT count(*) FROM (TABLE by_seqscan EXCEPT ALL TABLE by_index) d) AS only_in_seqscan;
RESET enable_indexscan;
RESET enable_bitmapscan;

-- candidates() goes through the index; the probe itself comes first.
CREATE TABLE cand_t (id int PRIMARY KEY, doc dedup.document, sig dedup.signature);
CREATE INDEX ON cand_t USING gin (sig);
INSERT INTO cand_t SELECT i, doc, s_imatch FROM corpus WHERE i <= 2000;
SELECT key, shared_keys > 0 AS shares FROM dedup.candidates('cand_t', (SELECT sig FROM cand_t WHERE id = 7), 1);
SELECT count(*) <= 3 AS capped FROM dedup.candidates('cand_t', (SELECT sig FROM cand_t WHERE id = 7), 3);
SELECT count(*) FROM dedup.candidates('cand_t', 'imatch:{}');
SELECT err($$SELECT * FROM dedup.candidates('corpus', 'imatch:{1}', -1)$$);

-- Staleness grows with documents added since the last recompute; recompute
-- refreshes stored signatures through the temp table and UPDATE … FROM.
SELECT dedup.staleness('sig_imatch') AS fresh;
SELECT count(dedup.add_document('sig_imatch', doc)) FROM corpus WHERE i <= 3000;
SELECT round(dedup.staleness('sig_imatch')::numeric, 3) AS after_adds;
UPDATE cand_t SET sig = NULL;
SELECT dedup.recompute('cand_t', 'doc', 'sig_imatch');
SELECT count(*) FILTER (WHERE sig IS NULL) AS missing, dedup.staleness('sig_imatch') AS fresh_again FROM cand_t;

-- filter_quality: Andreev et al.'s Table 1 for labelled pairs.
SELECT * FROM dedup.filter_quality($$
  SELECT a.doc, b.doc, 'sig_imatch', b.i > 10000
  FROM corpus a JOIN corpus b ON b.i = a.i + 10000 OR b.i = a.i + 1
  WHERE a.i <= 200 $$);
SELECT err($$SELECT * FROM dedup.filter_quality('SELECT 1')$$);
-- It applies the collection's filter, not the session's min_shared_keys (the
-- `%` operator's): two collections that differ only there pass different pairs,
-- and a SET changes neither.
SELECT dedup.create_collection('fq_loose', options => '{"min_shared_keys": 1}');
SELECT dedup.create_collection('fq_strict', options => '{"min_shared_keys": 12}');
CREATE TEMP TABLE fq_pairs AS
  SELECT a.doc AS a, b.doc AS b, b.i > 10000 AS dup
  FROM corpus a JOIN corpus b ON b.i = a.i + 10000 OR b.i = a.i + 1 WHERE a.i <= 200;
SELECT c, f.passing > 0 AS some_pass FROM unnest(ARRAY['fq_loose', 'fq_strict']) c,
  dedup.filter_quality(format('SELECT a, b, %L, dup FROM fq_pairs', c)) f ORDER BY c;
CREATE TEMP TABLE fq_before AS SELECT c, f.passing FROM unnest(ARRAY['fq_loose', 'fq_strict']) c,
  dedup.filter_quality(format('SELECT a, b, %L, dup FROM fq_pairs', c)) f;
SELECT (SELECT passing FROM fq_before WHERE c = 'fq_loose') > (SELECT passing FROM fq_before WHERE c = 'fq_strict') AS loose_passes_more;
SET LOCAL dedup.min_shared_keys = 6;
SELECT count(*) AS changed_by_set FROM unnest(ARRAY['fq_loose', 'fq_strict']) AS u(c)
  CROSS JOIN LATERAL dedup.filter_quality(format('SELECT a, b, %L, dup FROM fq_pairs', u.c)) f
  JOIN fq_before b ON b.c = u.c WHERE f.passing <> b.passing;
ROLLBACK;

-- candidates breaks ties by key in its own order (1, 2, 3, not 1, 10, 11), as
-- the trigger's lookup does, not by the rows' places in the table (which CLUSTER
-- or VACUUM FULL change).
CREATE TABLE cand_ties (id int PRIMARY KEY, body text);
SELECT dedup.enable('cand_ties', 'body');
INSERT INTO cand_ties SELECT i, 'The harbour of the old town reopened after a winter of repairs to its stone piers and lighthouse.'
FROM generate_series(12, 1, -1) i;
SELECT key, shared_keys FROM dedup.candidates('cand_ties', (SELECT dedup_sig FROM cand_ties WHERE id = 3), 3);
SELECT dedup.disable('cand_ties');
DROP TABLE cand_ties;
