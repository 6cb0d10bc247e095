-- Text analysis and the dedup.document type.
BEGIN;
SET LOCAL search_path = public;

-- Stems: Russian and English forms collapse, the stop word goes.
SELECT dedup.tokens('Книги и книгами, running runs');
SELECT dedup.tokens('Ёлка ёж ЕЛКА', 'russian');
SELECT dedup.tokens('The running dogs ran', 'english');
SELECT dedup.tokens('The running dogs ran', 'simple');
SET LOCAL dedup.min_word_length = 5;
SELECT dedup.tokens('кот котик котенок hello world');
RESET dedup.min_word_length;

-- A news text with a title, HTML markup, numbers, time and source.
CREATE TEMP TABLE d AS
SELECT dedup.to_document(
  '<p>Курс доллара вырос на 3,5% до 92,15 рубля.</p><p>Об этом сообщил А. С. Иванов из ЦБ 12.03.2024 в 09:45. <a href="https://x.ru">Подробнее</a></p><img src="a.png"><script>var x = 1;</script>',
  'Доллар вырос',
  '2024-03-12 09:50:00+00',
  'tass') AS doc;
SELECT dedup.summary(doc) FROM d;
SELECT * FROM dedup.terms((SELECT doc FROM d));
SELECT dedup.numbers(doc) FROM d;

-- The text form round-trips, and so does the binary form.
SELECT doc::text::dedup.document::text = doc::text AS text_round_trip FROM d;
SELECT '{"v":1,"terms":{"run":2,"книг":1},"numbers":["3.5"]}'::dedup.document;
SELECT dedup.summary('{"v":1}'::dedup.document);

-- English text.
SELECT dedup.summary(dedup.to_document(
  'The U.S. economy grew 2.1% in the second quarter. Mr. Smith said 1,000,000 jobs were added.

Analysts at J. P. Morgan expected less.', 'Economy grows', NULL, 'reuters', 'english'));

-- Fingerprint ignores case, punctuation, whitespace and markup.
SELECT dedup.fingerprint('Hello,   World!') = dedup.fingerprint('<b>hello</b> world') AS same,
       dedup.fingerprint('Hello World') = dedup.fingerprint('Hello Word') AS differs;

-- Bad and odd input: NULL in gives NULL out, empty gives an empty document.
SELECT dedup.to_document(NULL) IS NULL AS null_body, dedup.tokens(NULL) IS NULL AS null_tokens;
SELECT dedup.summary(dedup.to_document(''));
SELECT dedup.summary(dedup.to_document('!!! ... ??? ;;; 🙂🙂🙂'));
SELECT dedup.summary(dedup.to_document('<div><p>unclosed <b>tags <a href=x>link'));
SELECT dedup.summary(dedup.to_document(convert_from('\x48656c6c6f20c3a920efbfbd'::bytea, 'UTF8')));
SELECT length((dedup.numbers(dedup.to_document(repeat('7', 100000))))[1]::text) AS digits;
SELECT dedup.tokens('Москва moscow Μόσχα 東京 🙂');
SELECT err('SELECT dedup.to_document(''текст'', lang => ''klingon'')');
SELECT err('SELECT ''{"v":2}''::dedup.document');
SELECT err('SELECT ''not json''::dedup.document');
SELECT err('SELECT ''{"v":1,"terms":{"a":0}}''::dedup.document');
-- The trigram keys of the text form: one string of 4 hex digits a key per word, increasing.
SELECT '{"v":1,"trigrams":["0001ff00","0a0b"]}'::dedup.document::text::dedup.document::text AS trigrams_round_trip;
SELECT err('SELECT ''{"v":1,"trigrams":"0001"}''::dedup.document');
SELECT err('SELECT ''{"v":1,"trigrams":["00g1"]}''::dedup.document');
SELECT err('SELECT ''{"v":1,"trigrams":["000"]}''::dedup.document');
SELECT err('SELECT ''{"v":1,"trigrams":[""]}''::dedup.document');
SELECT err('SELECT ''{"v":1,"trigrams":["00020001"]}''::dedup.document');
-- The size limit: just under works, over gives 54000.
SET LOCAL dedup.max_document_bytes = '2kB';
SELECT (dedup.summary(dedup.to_document(repeat('a', 2048))))->'words' AS at_limit;
SELECT err('SELECT dedup.to_document(repeat(''a'', 2049))');
SELECT err('SET LOCAL dedup.max_document_bytes = 10');
ROLLBACK;
-- Equality is the same stored bytes (a hash operator class of each type): what a
-- UNION, a DISTINCT, a comparison of whole rows and a logical replication
-- subscriber's REPLICA IDENTITY FULL look up (they failed: "could not identify an
-- equality operator for type dedup.document"). No order: not sortable.
SELECT dedup.to_document('котик собака кошка') OPERATOR(dedup.=) dedup.to_document('котик собака кошка') AS same,
       dedup.to_document('котик собака') OPERATOR(dedup.=) dedup.to_document('котик собака кошка') AS other;
SELECT count(*) AS distinct_docs FROM (
  SELECT dedup.to_document(t) FROM (VALUES ('котик собака'), ('котик собака'), ('кошка мышка')) v(t)
  UNION SELECT dedup.to_document('кошка мышка')) u;
SELECT count(*) AS distinct_sigs FROM (SELECT DISTINCT s
  FROM unnest(ARRAY['imatch:{1,2}', 'imatch:{1,2}', 'imatch:{1,3}']::dedup.signature[]) s) u;
CREATE TEMP TABLE eq_rows (id int, d dedup.document, s dedup.signature);
INSERT INTO eq_rows VALUES (1, dedup.to_document('котик собака'), 'imatch:{1,2}'),
                           (1, dedup.to_document('котик собака'), 'imatch:{1,2}'),
                           (1, dedup.to_document('котик собака'), 'imatch:{1,3}');
SELECT count(*) FILTER (WHERE a IS DISTINCT FROM b) AS rows_differ, count(*) AS row_pairs
FROM eq_rows a, eq_rows b WHERE a.ctid < b.ctid;
SELECT dedup.to_document('котик собака') OPERATOR(dedup.<>) dedup.to_document('котик собака') AS ne_same,
       'imatch:{1,2}'::dedup.signature OPERATOR(dedup.<>) 'imatch:{1,3}'::dedup.signature AS ne_other;
-- Equality is of the stored document, metadata included: one text published at
-- two times is two documents.
SELECT dedup.to_document('котик собака', published_at => '2024-01-01')
       OPERATOR(dedup.=) dedup.to_document('котик собака', published_at => '2024-01-02') AS same_text_other_time;
-- NULL compares as NULL (the functions are STRICT); an empty text's documents are equal.
SELECT (NULL::dedup.document OPERATOR(dedup.=) dedup.to_document('котик')) IS NULL AS null_eq,
       (NULL::dedup.signature OPERATOR(dedup.<>) 'imatch:{1}'::dedup.signature) IS NULL AS null_ne,
       dedup.to_document('') OPERATOR(dedup.=) dedup.to_document('') AS empty_eq;
-- One visible text is one document, whatever bytes wrote it: decomposed letters
-- (NFD), direction marks and other invisible characters, full-width and
-- "fancy text" letters, Latin look-alikes in Cyrillic words and Cyrillic ones in
-- Latin words (a reposted ad that slips them in). Superscripts and № are kept.
SELECT v AS variant,
       dedup.fingerprint(t) = dedup.fingerprint('Мой новый Cybertruck за 92 тысячи рублей') AS same_fingerprint,
       dedup.tokens(t) AS tokens
FROM (VALUES ('nfd', U&'Мои\0306 новыи\0306 Cybertruck за 92 тысячи рублеи\0306'),
             ('invisible', U&'Мо\200Eй но\FE0Fвый Cyber\2063truck за 92 тысячи руб\034Fлей'),
             ('fancy', U&'Мой новый \+01D402\+01D432\+01D41B\+01D41E\+01D42B\+01D42D\+01D42B\+01D42E\+01D41C\+01D424 за \FF19\FF12 тысячи рублей'),
             ('homoglyphs', 'Мoй нoвый Сybertruck зa 92 тысячи pублeй')) AS v(v, t)
ORDER BY v;
SELECT dedup.tokens('Яndex м² № 5') AS kept_as_written;
