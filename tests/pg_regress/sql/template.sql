-- Texts that share a template (fewer than 16 distinct words, the same words in
-- each) share their signature keys, so every stored row is a candidate of every
-- insert. The trigger keeps the best 50 by shared keys (then key) as it scans,
-- without copying the others: a copy of a row far past the first 50 keys is
-- still found (and judged against), as is row 95 with one word changed, and the
-- rows that only share the template are no duplicates. The marks are those of the
-- build that sorted every match (0124b7d).
SET client_min_messages = warning;
CREATE TABLE tpl (id int PRIMARY KEY, body text);
SELECT dedup.enable('tpl', 'body');
INSERT INTO tpl SELECT r, 'Сообщение номер ' || r || ' о событиях дня: ' || md5(r::text) ||
                          ' в городе ' || (r % 977) || ' произошло ' || md5((r + 1)::text)
FROM generate_series(1, 120) AS r;
-- Every row shares the template's keys with row 1.
SELECT count(*) AS rows_sharing_4_keys_with_row_1
FROM tpl a, tpl b WHERE a.id = 1 AND b.id <> 1 AND dedup.shared_keys(a.dedup_sig, b.dedup_sig) >= 4;
-- A copy of row 90, and row 95 with one word changed.
INSERT INTO tpl VALUES (200, 'Сообщение номер 90 о событиях дня: ' || md5('90') || ' в городе 90 произошло ' || md5('91'));
INSERT INTO tpl VALUES (201, 'Сообщение номер 95 о событиях дня: ' || md5('95') || ' в городе 95 случилось ' || md5('96'));
SELECT id, duplicate_of, dedup_verdict FROM tpl WHERE id >= 200 ORDER BY id;
SELECT count(*) FILTER (WHERE duplicate_of IS NOT NULL) AS template_rows_marked FROM tpl WHERE id <= 120;
SELECT dedup.disable('tpl');
DROP TABLE tpl;
