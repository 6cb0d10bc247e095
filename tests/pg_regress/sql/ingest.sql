-- Deduplication inside INSERT: enable, the trigger, actions, analyst queries.
BEGIN;
CREATE TABLE news (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  title text, body text, published timestamptz, src text);
INSERT INTO news (title, body, published, src) VALUES
 ('Курс доллара вырос', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке. Эксперты ожидают дальнейшего ослабления рубля.', '2024-03-12 09:00+00', 'tass'),
 ('Погода в Москве', 'В Москве ожидается снег и гололед. Синоптики предупреждают о сильном ветре до 15 метров в секунду.', '2024-03-12 10:00+00', 'ria');

-- Bad setups fail cleanly and leave nothing behind.
CREATE TABLE nokey (body text);
SELECT err($$SELECT dedup.enable('nokey', 'body')$$);
SELECT err($$SELECT dedup.enable('news', 'text')$$);
SELECT err($$SELECT dedup.enable('news', 'body', model => 'nope')$$);
SELECT err($$SELECT dedup.enable('news', 'body', action => 'drop')$$);
SELECT count(*) AS extra_columns FROM pg_attribute WHERE attrelid = 'news'::regclass AND attname LIKE 'dedup%';
SELECT count(*) AS collections FROM dedup.collections;

-- Enable backfills the existing rows.
SELECT dedup.enable('news', 'body', title => 'title', published_at => 'published', source => 'src');
SELECT err($$SELECT dedup.enable('news', 'body')$$);
SELECT attname, format_type(atttypid, atttypmod), attstorage FROM pg_attribute
WHERE attrelid = 'news'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum;
SELECT indexdef FROM pg_indexes WHERE tablename = 'news' AND indexname LIKE '%dedup%';

-- A cut reprint is marked, a distinct text is not, a NULL body is stored and never matches.
INSERT INTO news (title, body, published, src) VALUES
 ('Доллар подорожал', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке.', '2024-03-12 09:30+00', 'lenta'),
 ('Спорт', 'Футбольный клуб Спартак выиграл у Зенита со счетом 2:1 в центральном матче тура.', '2024-03-12 11:00+00', 'sport'),
 ('Пусто', NULL, NULL, NULL);
-- A reprint of the reprint points at the first original.
INSERT INTO news (title, body) VALUES
 ('Снова доллар', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке.');
-- The same template with other numbers is not a duplicate.
INSERT INTO news (title, body) VALUES
 ('Курс', 'Курс доллара на Московской бирже вырос до 97 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке. Эксперты ожидают дальнейшего ослабления рубля.');
SELECT id, title, duplicate_of, dedup_verdict, dedup_doc IS NULL AS no_doc FROM news ORDER BY id;

-- is_duplicate makes the same decision without inserting.
SELECT dedup.is_duplicate('news', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке.') AS reprint,
       dedup.is_duplicate('news', 'Совсем другая новость о погоде на Луне.') AS other,
       dedup.is_duplicate('news', NULL) AS null_body;
SELECT key, verdict, round(score::numeric, 3) AS score FROM dedup.find_original('news', dedup.to_document('Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке.'));
SELECT err($$SELECT dedup.is_duplicate('nokey', 'x')$$);

-- Analyst queries.
SELECT a, b, verdict FROM dedup.pairs('news') ORDER BY a::int, b::int;
SELECT * FROM dedup.groups('news') ORDER BY group_id, key::int;
SELECT pairs, round(symmetry::numeric, 3) AS s, round(transitivity::numeric, 3) AS t FROM dedup.matrix_quality('news');
SELECT collection, documents, duplicates, rejected, last_recompute IS NOT NULL AS recomputed FROM dedup.status;

-- Over the size limit: stored unchecked, with a WARNING.
SET LOCAL dedup.max_document_bytes = '1kB';
INSERT INTO news (title, body) VALUES ('Длинный', repeat('длинный текст ', 100));
RESET dedup.max_document_bytes;
SELECT dedup_doc IS NULL AS unchecked FROM news WHERE title = 'Длинный';

-- UPDATE of a text column re-checks the row; DELETE keeps the statistics right.
UPDATE news SET body = 'Футбольный клуб Спартак выиграл у Зенита со счетом 2:1 в центральном матче тура.' WHERE title = 'Погода в Москве';
SELECT title, duplicate_of FROM news WHERE title = 'Погода в Москве';
DELETE FROM news WHERE title = 'Погода в Москве';
SELECT n_docs FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'news';
SELECT (SELECT dedup.term_stats_agg(dedup_doc) FROM news)->'n_docs' AS recomputed_n_docs;

-- Action 'skip' keeps the duplicate out and records it; 'error' raises class 23.
SELECT dedup.disable('news');
SELECT count(*) AS collections_left FROM dedup.collections;
SELECT dedup.enable('news', 'body', action => 'skip', collection => 'feed');
INSERT INTO news (title, body) VALUES ('Копия', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке.');
SELECT count(*) FILTER (WHERE title = 'Копия') AS inserted FROM news;
SELECT r.tbl, r.row_data->>'title' AS title, r.original_key, r.verdict FROM dedup.rejected r;
SELECT dedup.disable('news');
SELECT dedup.enable('news', 'body', action => 'error');
SELECT err($$INSERT INTO news (title, body) VALUES ('Копия', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ о ключевой ставке.')$$);
SELECT dedup.disable('news');
SELECT err($$SELECT dedup.disable('news')$$);
SELECT count(*) AS dedup_columns_left FROM pg_attribute WHERE attrelid = 'news'::regclass AND attname LIKE 'dedup%' AND NOT attisdropped;
ROLLBACK;
