SET ROLE owner1;
CREATE TABLE ck (id int, d date, body text, PRIMARY KEY (id, d));
SELECT dedup.enable('ck', 'body');
INSERT INTO ck VALUES (1, '2024-01-01', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ. Эксперты ожидают ослабления рубля.'),
                      (2, '2024-01-02', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.');
ALTER TYPE ck_dedup_key DROP ATTRIBUTE d CASCADE;    -- not refused
SELECT id, duplicate_of FROM ck;                      -- (1,) : the date is gone
INSERT INTO ck VALUES (3, '2024-01-03', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.');
