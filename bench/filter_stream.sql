-- Candidate-filter recall and efficiency on the whole Telegram stream (all pairs of
-- ~14.6k posts), per signature configuration. Run by bench/filter_stream.sh.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
DROP TABLE IF EXISTS fs_stream, fs_pairs, fs_sigs;
CREATE TABLE fs_stream (id text PRIMARY KEY, body text);
CREATE TABLE fs_pairs (ida text, idb text, label text);
\copy fs_stream FROM '/tmp/pg_dedup_filter/stream.tsv'
\copy fs_pairs FROM '/tmp/pg_dedup_filter/pairs.tsv'
ALTER TABLE fs_stream ADD COLUMN doc dedup.document;
UPDATE fs_stream SET doc = dedup.to_document(body);
CREATE FUNCTION pg_temp.fq(cfg text, opts jsonb, min_shared int)
RETURNS TABLE(config text, recall float8, passing bigint, total bigint, efficiency float8) LANGUAGE plpgsql AS $$
BEGIN
  PERFORM dedup.drop_collection(name) FROM dedup.collections WHERE name = 'fs';
  PERFORM dedup.create_collection('fs', options => opts);
  PERFORM dedup.recompute('fs_stream', 'doc', 'fs');
  DROP TABLE IF EXISTS fs_sigs;
  CREATE TABLE fs_sigs AS SELECT id, dedup.signature(doc, 'fs') AS sig FROM fs_stream;
  CREATE INDEX ON fs_sigs USING gin (sig);
  ANALYZE fs_sigs;
  PERFORM set_config('dedup.min_shared_keys', min_shared::text, true);
  RETURN QUERY
  WITH p AS (SELECT count(*) AS n FROM fs_sigs a JOIN fs_sigs b ON b.sig OPERATOR(dedup.%) a.sig AND a.id < b.id),
       t AS (SELECT count(*) * (count(*) - 1) / 2 AS n FROM fs_sigs)
  SELECT cfg,
         (SELECT avg((sa.sig OPERATOR(dedup.%) sb.sig)::int) FROM fs_pairs l
          JOIN fs_sigs sa ON sa.id = l.ida JOIN fs_sigs sb ON sb.id = l.idb
          WHERE l.label IN ('mutual', 'a_in_b', 'b_in_a'))::float8,
         p.n, t.n, 1 - p.n::float8 / t.n
  FROM p, t;
END $$;
\pset format aligned
SELECT * FROM pg_temp.fq('imatch (default)', '{}', 6)
UNION ALL SELECT * FROM pg_temp.fq('topwords 12, m 6 (Lande)', '{"signature_scheme": "topwords"}', 6)
UNION ALL SELECT * FROM pg_temp.fq('topwords 12, m 4', '{"signature_scheme": "topwords"}', 4)
UNION ALL SELECT * FROM pg_temp.fq('topwords 16, m 4', '{"signature_scheme": "topwords", "signature_topwords": 16}', 4);
