-- pg_dedup demo: real text in, document models out.
\pset pager off
DROP EXTENSION IF EXISTS pg_dedup CASCADE;
CREATE EXTENSION pg_dedup;

-- Real Russian text: Debian's fortunes-ru (aphorisms and jokes, %-separated).
-- Real English text: Debian's fortunes-min.
DROP TABLE IF EXISTS fortunes;
CREATE TABLE fortunes (id bigserial PRIMARY KEY, file text, body text);
INSERT INTO fortunes (file, body)
SELECT f, btrim(t, E' \n\t')
FROM (VALUES ('ru/2001.03'), ('ru/2001.04'), ('fortunes')) AS files(f),
     regexp_split_to_table(pg_read_file('/usr/share/games/fortunes/' || f), E'\n%\n') AS t
WHERE btrim(t, E' \n\t') <> '';

\echo
\echo '== texts loaded'
SELECT file, count(*) AS texts, sum(length(body)) AS chars FROM fortunes GROUP BY file ORDER BY file;

\echo
\echo '== stems of a Russian and an English sentence'
SELECT dedup.tokens('Книги и книгами, running runs') AS tokens;

\echo
\echo '== document model of the longest Russian and English texts (summary)'
(SELECT file, left(regexp_replace(body, '\s+', ' ', 'g'), 70) AS text, dedup.summary(dedup.to_document(body))
 FROM fortunes WHERE file LIKE 'ru/%' ORDER BY length(body) DESC LIMIT 3)
UNION ALL
(SELECT file, left(regexp_replace(body, '\s+', ' ', 'g'), 70), dedup.summary(dedup.to_document(body, lang => 'english'))
 FROM fortunes WHERE file = 'fortunes' ORDER BY length(body) DESC LIMIT 2);

\echo
\echo '== the terms of one text, with their frequencies'
SELECT t.* FROM (SELECT body FROM fortunes WHERE file LIKE 'ru/%' ORDER BY length(body) DESC LIMIT 1) f,
     dedup.terms(dedup.to_document(f.body)) t ORDER BY t.tf DESC, t.term LIMIT 10;

\echo
\echo '== a full document model, as its readable text form'
SELECT dedup.to_document(body, 'Пример', '2024-11-10 07:08:05+00', 'fortunes-ru')
FROM fortunes WHERE file LIKE 'ru/%' AND length(body) BETWEEN 120 AND 200 ORDER BY id LIMIT 1;

\echo
\echo '== exact duplicates across the files (same fingerprint)'
SELECT count(*) AS texts, count(DISTINCT dedup.fingerprint(body)) AS distinct_fingerprints FROM fortunes;
SELECT left(regexp_replace(min(body), '\s+', ' ', 'g'), 60) AS text, count(*) AS copies, array_agg(file ORDER BY id) AS files
FROM fortunes GROUP BY dedup.fingerprint(body) HAVING count(*) > 1 ORDER BY count(*) DESC LIMIT 5;
