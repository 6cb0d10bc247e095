SET ROLE owner1;
CREATE TABLE g (x int, id int GENERATED ALWAYS AS (x * 10) STORED PRIMARY KEY, body text);
SELECT dedup.enable('g', 'body', action => 'skip');
INSERT INTO g (x, body) VALUES (1, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ. Эксперты ожидают ослабления рубля.'),
                               (2, 'Сборная России по хоккею обыграла команду Финляндии со счетом 4:2 в товарищеском матче в Москве.');
INSERT INTO g (x, body) VALUES (2, 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.')
  ON CONFLICT (id) DO UPDATE SET body = excluded.body RETURNING id, duplicate_of;   -- INSERT 0 0: row 20 not updated
SELECT id, left(body, 20) FROM g ORDER BY id;
SELECT tbl, original_key FROM dedup.rejected_rows;
