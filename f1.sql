-- as the table's owner (not a superuser), in a database it owns
SET ROLE owner1;
CREATE SCHEMA staging; CREATE SCHEMA prod;
CREATE TABLE staging.feed (id int, d date, body text, PRIMARY KEY (id, d));
SELECT dedup.enable('staging.feed', 'body');
INSERT INTO staging.feed VALUES (1, '2024-01-01', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.');
ALTER TABLE staging.feed SET SCHEMA prod;     -- feed_dedup_key stays in staging
DROP SCHEMA staging CASCADE;                  -- succeeds: drops the type and prod.feed.duplicate_of
INSERT INTO prod.feed VALUES (2, '2024-01-02', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.');
SELECT * FROM dedup.pairs('prod.feed');
SELECT dedup.disable('prod.feed');
DROP TABLE prod.feed;
