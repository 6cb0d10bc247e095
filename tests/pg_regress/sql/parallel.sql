-- Reading functions with parallel query forced on. The ones that read the
-- extension's tables are PARALLEL UNSAFE: run in a worker or in the leader while a
-- Gather runs, a lookup that asked for an xid failed with "cannot assign XIDs
-- during a parallel operation" (and would on a hot standby), and one in a command
-- that writes (CREATE TABLE AS) with "cannot start commands during a parallel
-- operation". The others (to_document, the signature operator) run in workers.
CREATE TABLE par_docs (id int PRIMARY KEY, body text);
SELECT dedup.enable('par_docs', 'body', collection => 'par');
INSERT INTO par_docs VALUES
  (1, 'Мэр открыл новый мост через реку после трёх лет строительства, движение запустят в понедельник утром.'),
  (2, 'Мэр открыл новый мост через реку после трёх лет строительства, движение запустят в понедельник утром!'),
  (3, 'В городском парке высадили двести лип, работы продолжатся до конца осени и охватят соседние скверы.'),
  (4, 'Футбольный клуб объявил о подписании контракта с молодым вратарём из академии на четыре сезона.'),
  (5, 'Футбольный клуб объявил о подписании контракта с молодым вратарём из академии на четыре сезона'),
  (6, 'Синоптики обещают в выходные тёплую погоду без осадков, ночью столбик термометра опустится до нуля.');
CREATE TABLE par_pairs AS
SELECT a.id AS a_id, b.id AS b_id, a.body AS a_body, a.dedup_doc AS a, b.dedup_doc AS b,
       (a.id, b.id) IN ((1, 2), (4, 5)) AS a_dup_b, (a.id, b.id) IN ((1, 2), (4, 5)) AS b_dup_a
FROM par_docs a, par_docs b WHERE a.id < b.id;
ANALYZE par_docs, par_pairs;
SELECT dedup.train('par_model', 'par', 'SELECT a, b, a_dup_b, b_dup_a FROM par_pairs',
                   '{"kernel": "linear", "folds": 0}') ->> 'pairs' AS trained_pairs;

SET force_parallel_mode = on;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
-- Helpers that read the extension's tables through SPI are PARALLEL UNSAFE: in a
-- parallel plan they failed ("cannot start commands during a parallel operation").
CREATE TABLE par_may AS SELECT dedup._may_read_collection(name) AS may FROM dedup.collections;
SELECT bool_and(may) AS may_read FROM par_may;
DROP TABLE par_may;
CREATE TABLE par_valid AS SELECT a_id FROM par_pairs WHERE dedup._validate_enable('par_model', 'mark')::text = '';
SELECT count(*) > 0 AS validated FROM par_valid;
DROP TABLE par_valid;

-- With parallel query forced on.
SELECT a_id, b_id,
       dedup.signature(a, 'par') IS NOT NULL AS signature,
       array_length(dedup.compare(a, b, 'par'), 1) AS features,
       dedup.pair_score('default', a, b) > 0 AS builtin_dup,
       dedup.pair_score('par_model', a, b) IS NOT NULL AS stored_model,
       dedup.classify_pair('par_model', a, b) IS NOT NULL AS classified,
       (SELECT count(*) FROM dedup.top_terms(a, 'par', 3)) AS top_terms,
       (SELECT count(*) FROM dedup.weights(a, 'par')) > 0 AS weights,
       (SELECT count(*) FROM dedup.explain_pair('par_model', a, b)) > 0 AS explained,
       dedup.staleness('par') IS NOT NULL AS staleness,
       (dedup.collection_limits('par')).min_shared_keys AS min_shared_keys,
       dedup.to_document(a_body) IS NOT NULL AS to_document,
       dedup.export_model('par_model') IS NOT NULL AS exported
FROM par_pairs ORDER BY 1, 2;
SELECT e.tp + e.fp + e.fn + e.tn AS evaluated, f.total_pairs AS filter_pairs
FROM (SELECT 1 FROM par_docs LIMIT 1) s,
     dedup.evaluate('par_model', 'SELECT a, b, a_dup_b, b_dup_a FROM par_pairs') e,
     dedup.filter_quality('SELECT a, b, ''par'', a_dup_b FROM par_pairs') f;
SELECT collection, documents FROM dedup.status WHERE collection = 'par';

-- Lookups in the plan of a query that could run in workers: none is planned.
EXPLAIN (COSTS OFF)
SELECT count(*) FROM (SELECT * FROM par_docs LIMIT 10) s, dedup.find_original('par_docs', s.dedup_doc) o;
SELECT s.id, o.key FROM (SELECT * FROM par_docs ORDER BY id LIMIT 10) s,
       dedup.find_original('par_docs', s.dedup_doc) o ORDER BY 1, 2;
SELECT s.id, dedup.is_duplicate('par_docs', s.body) FROM (SELECT * FROM par_docs ORDER BY id LIMIT 10) s ORDER BY 1;
SELECT s.id, (SELECT count(*) FROM dedup.candidates('par_docs', s.dedup_sig, 5)) AS candidates
FROM (SELECT * FROM par_docs ORDER BY id LIMIT 10) s ORDER BY 1;
-- candidates names rows by ctid: a view has none.
CREATE VIEW par_view AS SELECT * FROM par_docs;
SELECT err($$SELECT * FROM dedup.candidates('par_view', (SELECT dedup_sig FROM par_docs ORDER BY id LIMIT 1), 5)$$);
DROP VIEW par_view;
SELECT p.a, p.b, p.verdict, p.score > 0 AS positive FROM (SELECT 1 FROM par_docs LIMIT 1) s, dedup.pairs('par_docs') p ORDER BY 1, 2;
SELECT g.* FROM (SELECT 1 FROM par_docs LIMIT 1) s, dedup.groups('par_docs') g ORDER BY 1;
SELECT m.pairs FROM (SELECT 1 FROM par_docs LIMIT 1) s, dedup.matrix_quality('par_docs') m;

-- The same in a transaction that has written (its lookups then take a new
-- snapshot, as an update's would).
BEGIN;
INSERT INTO par_docs VALUES (7, 'Мэр открыл новый мост через реку после трёх лет строительства, движение запустят во вторник.');
SELECT count(*) AS rows, count(dedup.signature(dedup_doc, 'par')) AS signed,
       count(*) FILTER (WHERE dedup.pair_score('default', dedup_doc, dedup_doc) > 0) AS self_duplicates
FROM par_docs;
SELECT s.id, o.key FROM (SELECT * FROM par_docs ORDER BY id LIMIT 10) s,
       dedup.find_original('par_docs', s.dedup_doc) o WHERE s.id = 7;
SELECT collection, documents FROM dedup.status WHERE collection = 'par';
COMMIT;
SELECT collection, documents FROM dedup.status WHERE collection = 'par';

-- A command that writes under a parallel plan (CREATE TABLE AS, a materialized
-- view): the reading functions are PARALLEL UNSAFE, so it runs without workers.
-- (As PARALLEL SAFE or RESTRICTED, their lookups started a command in parallel
-- mode: XX000 "cannot start commands during a parallel operation".)
CREATE TEMP TABLE par_ctas AS
SELECT a_id, b_id, dedup.classify_pair('par_model', a, b) AS verdict, dedup.pair_score('par_model', a, b) > 0 AS dup,
       cardinality(dedup.compare(a, b, 'par')) AS features, dedup.signature(a, 'par') IS NOT NULL AS signed,
       dedup.staleness('par') IS NOT NULL AS stale_known,
       (SELECT count(*) FROM dedup.top_terms(a, 'par', 3)) AS top, (SELECT count(*) FROM dedup.weights(a, 'par')) > 0 AS weighed
FROM par_pairs;
SELECT verdict, dup, count(*) FROM par_ctas GROUP BY 1, 2 ORDER BY 1, 2;
CREATE TEMP TABLE par_ctas2 AS
SELECT id, dedup.is_duplicate('par_docs', body) AS dup, (SELECT count(*) FROM dedup.find_original('par_docs', dedup_doc)) AS originals,
       (SELECT count(*) FROM dedup.candidates('par_docs', dedup_sig)) AS candidates
FROM par_docs;
SELECT count(*) AS rows, count(*) FILTER (WHERE dup) AS duplicates FROM par_ctas2;
CREATE TEMP TABLE par_ctas3 AS SELECT * FROM dedup.pairs('par_docs');
CREATE TEMP TABLE par_ctas4 AS SELECT * FROM dedup.groups('par_docs');
SELECT (SELECT count(*) FROM par_ctas3) AS pairs, (SELECT count(*) FROM par_ctas4) AS grouped;
CREATE MATERIALIZED VIEW par_mv AS SELECT a_id, b_id, dedup.pair_score('par_model', a, b) > 0 AS dup FROM par_pairs;
REFRESH MATERIALIZED VIEW par_mv;
SELECT count(*) FILTER (WHERE dup) AS mv_duplicates FROM par_mv;
DROP MATERIALIZED VIEW par_mv;

RESET force_parallel_mode;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
SELECT dedup.disable('par_docs');
DROP TABLE par_docs, par_pairs;
DELETE FROM dedup.models WHERE name = 'par_model';
