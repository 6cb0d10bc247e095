-- pg_dedup on a Citus cluster (run by tests/citus/citus.sh on the coordinator):
-- the same stream of single-row inserts into a hash-distributed table and into a
-- table of a plain database on one node gives the same verdicts, pairs, groups and
-- statistics; reprints whose original is on the other worker are caught.
SET client_min_messages = warning;
-- One node: database pg_dedup_single, without Citus. Its results are kept in psql
-- variables as digests.
\c pg_dedup_single
SET client_min_messages = warning;
CREATE EXTENSION pg_dedup;
CREATE FUNCTION story(s int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg('w' || (abs(hashtext(s || ':' || j)::int8) % 3000), ' ' ORDER BY j) || '. Итог ' || s || '.'
  FROM generate_series(1, 30) AS j $$;
-- The stream: reprints, cut and extended copies; one autocommit insert each.
CREATE TABLE stream AS
SELECT i AS id, timestamptz '2024-03-01 00:00+00' + i * interval '1 hour' AS published,
       CASE WHEN i % 5 = 0 THEN story(i / 5)
            WHEN i % 7 = 0 THEN story(i / 7) || ' Дополнение к заметке ' || i || '.'
            WHEN i % 11 = 0 THEN left(story(i / 11), 120)
            ELSE story(1000 + i) END AS body
FROM generate_series(1, 150) AS i;
-- Digests of a table's marks (original and verdict), signatures, pairs, groups and
-- statistics (the same on both sides).
CREATE FUNCTION digests(t regclass, OUT marks text, OUT sigs text, OUT pairs text, OUT groups text, OUT stats text)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('SELECT md5(string_agg(id || '':'' || coalesce(duplicate_of::text, ''-'') || '':'' || dedup_verdict, '
                   ''','' ORDER BY id)) FROM %s', t) INTO marks;
    EXECUTE format('SELECT md5(string_agg(id || '':'' || dedup_sig::text, '','' ORDER BY id)) FROM %s', t) INTO sigs;
    SELECT md5(string_agg(a || '/' || b || '/' || verdict, ',' ORDER BY a, b)) INTO pairs FROM dedup.pairs(t);
    SELECT md5(string_agg(key || '/' || group_id || '/' || is_original, ',' ORDER BY key)) INTO groups FROM dedup.groups(t);
    SELECT md5(s.n_docs || '/' || s.total_len || '/' ||
               (SELECT string_agg(term || ':' || df || ':' || cf, ',' ORDER BY term) FROM dedup.term_stats WHERE collection_id = s.collection_id))
    INTO stats FROM dedup.enabled_tables e JOIN dedup.collection_stats s ON s.collection_id = e.collection_id WHERE e.tbl = t;
END $$;
CREATE TABLE news (id bigint PRIMARY KEY, published timestamptz, body text);
SELECT dedup.enable('news', 'body', published_at => 'published');
SELECT format('INSERT INTO news VALUES (%s, %L, %L)', id, published, body) FROM stream ORDER BY id \gexec
SELECT count(duplicate_of) AS single_marked FROM news;
-- 60 copies of one text: each row is paired with its 50 best matches, not all 59.
CREATE TABLE copies (id bigint PRIMARY KEY, body text);
SELECT dedup.enable('copies', 'body');
INSERT INTO copies SELECT i, story(424242) FROM generate_series(1, 60) AS i;
SELECT dedup.recompute('copies') AS recomputed;
SELECT count(*) AS single_copy_pairs, md5(string_agg(a || '/' || b || '/' || verdict, ',' ORDER BY a, b)) AS single_copy_pairs_md5
FROM dedup.pairs('copies') \gset
SELECT marks AS single_marks, pairs AS single_pairs, groups AS single_groups, stats AS single_stats FROM digests('news') \gset
SELECT count(*) AS single_pairs_n FROM dedup.pairs('news') \gset
SELECT dedup.set_time_window('news', interval '2 days');
SELECT count(*) AS single_wpairs_n, md5(string_agg(a || '/' || b || '/' || verdict, ',' ORDER BY a, b)) AS single_wpairs
FROM dedup.pairs('news') \gset
SELECT dedup.set_time_window('news', NULL);
UPDATE news SET body = story(2) WHERE id = 3;
DELETE FROM news WHERE id = 4;
SELECT dedup.recompute('news') AS recomputed;
SELECT marks AS single_marks2, sigs AS single_sigs2, stats AS single_stats2 FROM digests('news') \gset

-- The cluster: database pg_dedup_citus, a coordinator and two workers.
\c pg_dedup_citus
SET client_min_messages = warning;
CREATE EXTENSION pg_dedup;
-- The extension is on every node (Citus creates it there, and the functions).
SELECT nodeport > 0 AS worker, result AS pg_dedup FROM run_command_on_workers(
    $$SELECT extversion FROM pg_extension WHERE extname = 'pg_dedup'$$) ORDER BY nodeport;
CREATE FUNCTION story(s int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg('w' || (abs(hashtext(s || ':' || j)::int8) % 3000), ' ' ORDER BY j) || '. Итог ' || s || '.'
  FROM generate_series(1, 30) AS j $$;
CREATE TABLE stream AS
SELECT i AS id, timestamptz '2024-03-01 00:00+00' + i * interval '1 hour' AS published,
       CASE WHEN i % 5 = 0 THEN story(i / 5)
            WHEN i % 7 = 0 THEN story(i / 7) || ' Дополнение к заметке ' || i || '.'
            WHEN i % 11 = 0 THEN left(story(i / 11), 120)
            ELSE story(1000 + i) END AS body
FROM generate_series(1, 150) AS i;
CREATE FUNCTION digests(t regclass, OUT marks text, OUT sigs text, OUT pairs text, OUT groups text, OUT stats text)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('SELECT md5(string_agg(id || '':'' || coalesce(duplicate_of::text, ''-'') || '':'' || dedup_verdict, '
                   ''','' ORDER BY id)) FROM %s', t) INTO marks;
    EXECUTE format('SELECT md5(string_agg(id || '':'' || dedup_sig::text, '','' ORDER BY id)) FROM %s', t) INTO sigs;
    SELECT md5(string_agg(a || '/' || b || '/' || verdict, ',' ORDER BY a, b)) INTO pairs FROM dedup.pairs(t);
    SELECT md5(string_agg(key || '/' || group_id || '/' || is_original, ',' ORDER BY key)) INTO groups FROM dedup.groups(t);
    SELECT md5(s.n_docs || '/' || s.total_len || '/' ||
               (SELECT string_agg(term || ':' || df || ':' || cf, ',' ORDER BY term) FROM dedup.term_stats WHERE collection_id = s.collection_id))
    INTO stats FROM dedup.enabled_tables e JOIN dedup.collection_stats s ON s.collection_id = e.collection_id WHERE e.tbl = t;
END $$;

-- A table enabled on the coordinator, then distributed with what pg_dedup stored
-- (the first distributed table: the extension's tables become reference tables).
CREATE TABLE later (id bigint PRIMARY KEY, body text);
INSERT INTO later SELECT i, story(CASE WHEN i % 4 = 0 THEN i - 1 ELSE i END) FROM generate_series(1, 40) AS i;
SELECT dedup.enable('later', 'body');
SELECT dedup.distribute('later', 'id');
SELECT count(*) AS rows, count(duplicate_of) AS marked FROM later;
INSERT INTO later VALUES (100, story(5));
SELECT duplicate_of, dedup_verdict FROM later WHERE id = 100;

-- A distributed table, hash-distributed by its key, enabled while empty.
CREATE TABLE news (id bigint PRIMARY KEY, published timestamptz, body text);
SELECT create_distributed_table('news', 'id');
SELECT dedup.enable('news', 'body', published_at => 'published');
-- Where each object lives: the extension's tables are reference tables (a copy on
-- every node), the enabled table is distributed with its documents and signatures.
SELECT logicalrelid, CASE partmethod WHEN 'n' THEN 'reference' WHEN 'h' THEN 'hash' END AS kind
FROM pg_dist_partition ORDER BY logicalrelid::text;
SELECT count(*) AS shards, count(DISTINCT nodeport) AS workers
FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid) JOIN pg_dist_node n USING (groupid)
WHERE s.logicalrelid = 'news'::regclass;
-- Every shard has the triggers (Citus copies them: citus.enable_unsafe_triggers).
SELECT DISTINCT result AS triggers_per_shard FROM run_command_on_shards('news',
    $$SELECT count(*) FROM pg_trigger WHERE tgrelid = '%s'::regclass AND tgname LIKE 'dedup%%'$$);
SELECT format('INSERT INTO news VALUES (%s, %L, %L)', id, published, body) FROM stream ORDER BY id \gexec
-- Same verdicts and originals, pairs, groups and statistics as one node. (The
-- signatures a worker computes may differ within the statistics cache's
-- tolerance, as two sessions' do on one node; a recompute makes them equal.)
SELECT count(duplicate_of) AS marked FROM news;
SELECT marks = :'single_marks' AS same_marks, pairs = :'single_pairs' AS same_pairs,
       groups = :'single_groups' AS same_groups, stats = :'single_stats' AS same_statistics
FROM digests('news');
-- Reprints caught whose original lives on the other worker.
CREATE TEMP TABLE marks AS SELECT id, duplicate_of FROM news;
ALTER TABLE marks ADD COLUMN port int;
UPDATE marks m SET port = (SELECT d.nodeport FROM pg_dist_placement p JOIN pg_dist_node d USING (groupid)
                           WHERE p.shardid = get_shard_id_for_distribution_column('news', m.id));
SELECT count(*) FILTER (WHERE c.port <> o.port) AS original_on_other_worker,
       count(*) FILTER (WHERE c.port = o.port) AS original_on_same_worker
FROM marks c JOIN marks o ON o.id = c.duplicate_of;
SELECT collection, documents, duplicates FROM dedup.status WHERE collection = 'news';
-- find_original and is_duplicate from the coordinator.
SELECT key, verdict FROM dedup.find_original('news', dedup.to_document(story(7), NULL, timestamptz '2024-03-02 00:00+00'));
SELECT dedup.is_duplicate('news', story(8)) AS reprint, dedup.is_duplicate('news', story(123456)) AS new_text;
-- Under a time window the workers read the times as the trigger does
-- (dedup._published): the same windowed pairs as one node, and a lookup that
-- sees the original within the window and not outside it.
SELECT dedup.set_time_window('news', interval '2 days');
SELECT count(*) = :single_wpairs_n AS same_windowed_count, count(*) < :single_pairs_n AS window_leaves_some_out,
       md5(string_agg(a || '/' || b || '/' || verdict, ',' ORDER BY a, b)) = :'single_wpairs' AS same_windowed_pairs
FROM dedup.pairs('news');
SELECT dedup.is_duplicate('news', story(8), NULL, timestamptz '2024-03-02 00:00+00') AS reprint_in_window,
       dedup.is_duplicate('news', story(8), NULL, timestamptz '2030-01-01 00:00+00') AS reprint_outside;
SELECT dedup.set_time_window('news', NULL);
-- UPDATE and DELETE through the coordinator; recompute reads every shard and
-- rewrites the signatures as one node does.
UPDATE news SET body = story(2) WHERE id = 3;
DELETE FROM news WHERE id = 4;
SELECT dedup.recompute('news') AS recomputed;
SELECT marks = :'single_marks2' AS same_marks_after_update_delete_recompute,
       sigs = :'single_sigs2' AS same_signatures_after_recompute,
       stats = :'single_stats2' AS same_statistics_after_update_delete_recompute
FROM digests('news');
-- TRUNCATE: the coordinator's trigger rebuilds the statistics without the
-- distributed table's rows (it fires before Citus truncates the shards, which it
-- leaves alone); a recompute afterwards finds the same.
TRUNCATE news;
SELECT s.n_docs, s.total_len, (SELECT count(*) FROM dedup.term_stats t WHERE t.collection_id = c.id) AS terms
FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'news';
SELECT dedup.recompute('news') AS recomputed_after_truncate;
-- 60 copies of one text: the coordinator keeps each row's 50 best matches of the
-- workers' as one node does (of the 1,770 matching pairs), so the same pairs.
CREATE TABLE copies (id bigint PRIMARY KEY, body text);
SELECT create_distributed_table('copies', 'id');
SELECT dedup.enable('copies', 'body');
\set ECHO none
\set QUIET on
SELECT format('INSERT INTO copies VALUES (%s, %L)', i, story(424242)) FROM generate_series(1, 60) AS i \gexec
\set QUIET off
\set ECHO all
-- (A worker signs with the statistics its session has cached, which may lag by
-- the cache's tolerance; a recompute signs every copy alike, as on one node.)
SELECT dedup.recompute('copies') AS recomputed;
SELECT count(*) AS copy_pairs, count(*) = :single_copy_pairs AS same_count,
       md5(string_agg(a || '/' || b || '/' || verdict, ',' ORDER BY a, b)) = :'single_copy_pairs_md5' AS same_copy_pairs
FROM dedup.pairs('copies');
-- A statement (or transaction) that writes rows on both workers is refused, cleanly:
-- each worker would write the statistics to every node while Citus prepares the
-- transaction on it. On one worker it works.
SET client_min_messages = error;   -- Citus also warns once per connection it had
\set VERBOSITY terse
\set ON_ERROR_STOP 0
INSERT INTO news SELECT 700000 + i, now(), story(70000 + i) FROM generate_series(1, 8) AS i;
\set ON_ERROR_STOP 1
\set VERBOSITY default
SET client_min_messages = warning;
-- Two rows of one shard in one statement: one worker, one connection.
SELECT min(i) AS k1, max(i) AS k2 FROM (SELECT i FROM generate_series(700200, 700400) AS i
    WHERE get_shard_id_for_distribution_column('news', i) = get_shard_id_for_distribution_column('news', 700200)
    ORDER BY i LIMIT 2) s \gset
INSERT INTO news VALUES (:k1, now(), story(70101)), (:k2, now(), story(70101));
SELECT count(*) AS same_shard_rows, count(duplicate_of) AS marked FROM news WHERE id IN (:k1, :k2);
SELECT count(*) AS rows_kept FROM news WHERE id BETWEEN 700001 AND 700008;
SELECT (SELECT s.n_docs FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'news')
       = (SELECT count(dedup_doc) FROM news) AS documents_counted_right;
-- 'skip' and 'error' on a distributed table.
CREATE TABLE cskip (id bigint PRIMARY KEY, body text);
SELECT create_distributed_table('cskip', 'id');
SELECT dedup.enable('cskip', 'body', action => 'skip');
INSERT INTO cskip VALUES (1, story(1));
INSERT INTO cskip VALUES (2, story(1));
SELECT (SELECT count(*) FROM cskip) AS kept, (SELECT original_key FROM dedup.rejected WHERE tbl = 'cskip'::regclass) AS rejected_for;
CREATE TABLE cerror (id bigint PRIMARY KEY, body text);
SELECT create_distributed_table('cerror', 'id');
SELECT dedup.enable('cerror', 'body', action => 'error');
INSERT INTO cerror VALUES (1, story(1));
\set VERBOSITY terse
\set ON_ERROR_STOP 0
INSERT INTO cerror VALUES (2, story(1));
-- A distributed table that already holds rows is refused; enable, then distribute.
CREATE TABLE full_dist (id bigint PRIMARY KEY, body text);
SELECT create_distributed_table('full_dist', 'id');
INSERT INTO full_dist VALUES (1, story(1));
SELECT dedup.enable('full_dist', 'body');
-- Enabling a table that is not distributed is refused now; disable removes
-- everything from a distributed table.
\set ON_ERROR_STOP 0
CREATE TABLE local_only (id bigint PRIMARY KEY, body text);
SELECT dedup.enable('local_only', 'body');
\set ON_ERROR_STOP 1
\set VERBOSITY default
SELECT dedup.disable('later');
SELECT count(*) AS dedup_columns_left FROM pg_attribute WHERE attrelid = 'later'::regclass AND attname LIKE 'dedup%' AND NOT attisdropped;
SELECT DISTINCT result AS triggers_left_per_shard FROM run_command_on_shards('later',
    $$SELECT count(*) FROM pg_trigger WHERE tgrelid = '%s'::regclass AND tgname LIKE 'dedup%%'$$);
-- Every node names the same enabled tables, after disable and DROP TABLE too.
CREATE TABLE dropped (id bigint PRIMARY KEY, body text);
SELECT create_distributed_table('dropped', 'id');
SELECT dedup.enable('dropped', 'body');
DROP TABLE dropped;
SELECT string_agg(tbl::text, ', ' ORDER BY tbl::text) AS coordinator FROM dedup.enabled_tables;
SELECT result AS worker FROM run_command_on_workers(
    $$SELECT string_agg(tbl::text, ', ' ORDER BY tbl::text) FROM dedup.enabled_tables$$) ORDER BY nodeport;
-- The coordinator holding shards too (as a single-node cluster does, or one with
-- shouldhaveshards): an insert into a shard of this node runs in the client's own
-- backend (Citus's local execution), where Citus hides shards from queries on
-- pg_class; and a long table name gets shard names cut with a hash. Every row is
-- still checked (an audit found them all left unchecked), and disable and DROP
-- TABLE work on the shards here.
SELECT nodeport AS coord_port FROM pg_dist_node WHERE groupid = 0 \gset
SELECT 1 AS set FROM citus_set_node_property('localhost', :coord_port, 'shouldhaveshards', true);
CREATE TABLE news_written_on_this_node_with_a_name_long_enough_to_be_cut (
    id bigint PRIMARY KEY, published timestamptz, body text);
SELECT create_distributed_table('news_written_on_this_node_with_a_name_long_enough_to_be_cut', 'id',
                                colocate_with => 'none');
SELECT dedup.enable('news_written_on_this_node_with_a_name_long_enough_to_be_cut', 'body', published_at => 'published');
SELECT count(*) FILTER (WHERE p.groupid = 0) > 0 AS shards_on_coordinator
FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid)
WHERE s.logicalrelid = 'news_written_on_this_node_with_a_name_long_enough_to_be_cut'::regclass;
SELECT format('INSERT INTO news_written_on_this_node_with_a_name_long_enough_to_be_cut VALUES (%s, %L, %L)',
              id, published, body) FROM stream ORDER BY id \gexec
SELECT count(dedup_doc) AS checked, count(duplicate_of) AS marked
FROM news_written_on_this_node_with_a_name_long_enough_to_be_cut;
SELECT marks = :'single_marks' AS same_marks
FROM digests('news_written_on_this_node_with_a_name_long_enough_to_be_cut');
CREATE TABLE here (id bigint PRIMARY KEY, body text);
SELECT create_distributed_table('here', 'id', colocate_with => 'none');
SELECT dedup.enable('here', 'body');
INSERT INTO here VALUES (1, story(1));
INSERT INTO here VALUES (2, story(1));
SELECT count(duplicate_of) AS here_marked FROM here;
SELECT dedup.disable('here');
SELECT count(*) AS dedup_columns_left FROM pg_attribute WHERE attrelid = 'here'::regclass AND attname LIKE 'dedup%' AND NOT attisdropped;
DROP TABLE here;
DROP TABLE news_written_on_this_node_with_a_name_long_enough_to_be_cut;
SELECT 1 AS set FROM citus_set_node_property('localhost', :coord_port, 'shouldhaveshards', false);
SELECT string_agg(tbl::text, ', ' ORDER BY tbl::text) AS coordinator FROM dedup.enabled_tables;
