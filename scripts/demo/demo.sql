-- pg_dedup demo: real text in, document models and duplicates out.
\pset pager off
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
DROP TABLE IF EXISTS fortunes;
DROP EXTENSION IF EXISTS pg_dedup CASCADE;
CREATE EXTENSION pg_dedup;

-- Real Russian text: Debian's fortunes-ru (about 19.7k aphorisms and jokes in 196
-- %-separated files; the same quote often recurs in several files with small edits).
-- Real English text: Debian's fortunes-min.
CREATE TABLE fortunes (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, file text, body text);
INSERT INTO fortunes (file, body)
SELECT f, btrim(t, E' \r\n\t')
FROM (SELECT 'ru/' || name AS f FROM pg_ls_dir('/usr/share/games/fortunes/ru') AS name
      WHERE name NOT LIKE '%.dat' AND name NOT LIKE '%.u8'
      UNION ALL SELECT 'fortunes') AS files,
     -- Some files have CRLF line ends: split on either, or a whole file is one text.
     regexp_split_to_table(replace(pg_read_file('/usr/share/games/fortunes/' || f), E'\r\n', E'\n'), E'\n%\n') AS t
WHERE btrim(t, E' \r\n\t') <> ''
ORDER BY f;

\echo
\echo '== texts loaded'
SELECT CASE WHEN file LIKE 'ru/%' THEN 'fortunes-ru' ELSE 'fortunes-min (en)' END AS corpus,
       count(*) AS texts, pg_size_pretty(sum(octet_length(body))) AS size
FROM fortunes GROUP BY 1 ORDER BY 1;

\echo
\echo '== stems of a Russian and an English sentence'
SELECT dedup.tokens('Книги и книгами, running runs') AS tokens;

\echo
\echo '== document models of the longest Russian and English texts (summary)'
(SELECT file, left(regexp_replace(body, '\s+', ' ', 'g'), 60) AS text, dedup.summary(dedup.to_document(body))
 FROM fortunes WHERE file LIKE 'ru/%' ORDER BY length(body) DESC, id LIMIT 2)
UNION ALL
(SELECT file, left(regexp_replace(body, '\s+', ' ', 'g'), 60), dedup.summary(dedup.to_document(body, lang => 'english'))
 FROM fortunes WHERE file = 'fortunes' ORDER BY length(body) DESC, id LIMIT 1);

\echo
\echo '== a full document model, in its readable text form'
SELECT dedup.to_document(body, 'Пример', '2024-11-10 07:08:05+00', 'fortunes-ru')
FROM fortunes WHERE file LIKE 'ru/%' AND length(body) BETWEEN 120 AND 200 ORDER BY id LIMIT 1;

\echo
\echo '== deduplicating the whole corpus: dedup.enable backfills every row'
\timing on
SELECT dedup.enable('fortunes', 'body') AS rows_backfilled;
\timing off
SELECT count(*) AS texts, count(*) FILTER (WHERE duplicate_of IS NOT NULL) AS marked_duplicates,
       count(DISTINCT duplicate_of) AS originals_with_copies FROM fortunes;

\echo
\echo '== Russian near-duplicates that are not exact copies, as the built-in model reads them'
\echo '   mutual: each adds nothing to the other; b_duplicates_a: b adds nothing to a (a contains it)'
\echo '   (the model is trained on news reposts; among aphorisms its surest marks that are'
\echo '   lexically far apart can be different texts with the same words: 1 - cosine > 0.45 is left out)'
CREATE TEMP TABLE demo_pairs AS
SELECT p.a, p.b, p.verdict, p.score, (dedup.compare(x.dedup_doc, y.dedup_doc, 'fortunes'))[1] AS text_distance,
       left(regexp_replace(x.body, '\s+', ' ', 'g'), 50) AS a_text,
       left(regexp_replace(y.body, '\s+', ' ', 'g'), 50) AS b_text
FROM dedup.pairs('fortunes') p
JOIN fortunes x ON x.id = p.a::bigint JOIN fortunes y ON y.id = p.b::bigint
WHERE dedup.fingerprint(x.body) <> dedup.fingerprint(y.body) AND x.file LIKE 'ru/%' AND y.file LIKE 'ru/%';
(SELECT a, b, verdict, round(score::numeric, 2) AS score, a_text, b_text FROM demo_pairs
 WHERE verdict = 'mutual' AND text_distance <= 0.45 ORDER BY score DESC, a, b LIMIT 5)
UNION ALL
(SELECT a, b, verdict, round(score::numeric, 2), a_text, b_text FROM demo_pairs
 WHERE verdict <> 'mutual' AND text_distance <= 0.45 ORDER BY score DESC, a, b LIMIT 3);

\echo
\echo '== the same decision at insert time: a lightly edited reprint is marked'
INSERT INTO fortunes (file, body)
SELECT 'demo', replace(body, ',', '') || ' (с) перепечатка' FROM fortunes
WHERE file LIKE 'ru/%' AND duplicate_of IS NULL AND length(body) > 200 ORDER BY id LIMIT 1
RETURNING id, duplicate_of, dedup_verdict;
SELECT dedup.is_duplicate('fortunes', (SELECT body FROM fortunes WHERE file LIKE 'ru/%' ORDER BY id LIMIT 1)) AS reprint_is_duplicate,
       dedup.is_duplicate('fortunes', 'Совершенно новая мысль, которой нет ни в одном файле фортунок.') AS new_text_is_duplicate;

\echo
\echo '== collection status'
SELECT * FROM dedup.status;
