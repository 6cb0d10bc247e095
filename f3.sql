SET ROLE owner1;
CREATE TABLE items (id int PRIMARY KEY, sku text NOT NULL, body text);
SELECT dedup.enable('items', 'body');
ALTER TABLE items DROP CONSTRAINT items_pkey;   -- not refused, not followed
ALTER TABLE items ADD PRIMARY KEY (sku);        -- id is now just a column
INSERT INTO items VALUES (0, 'a', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.');
INSERT INTO items VALUES (0, 'b', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.')
  RETURNING sku, duplicate_of, dedup_verdict;   -- exact copy: distinct, not marked
SELECT count(*) FROM dedup.pairs('items');      -- 0
SELECT dedup.is_duplicate('items', 'Курс доллара на Московской бирже вырос до 92 рублей. Аналитики связывают рост с решением ЦБ.');
SELECT key_column FROM dedup.enabled_tables WHERE tbl = 'items'::regclass;  -- still id
-- variant: drop the old key column after dropping the constraint
ALTER TABLE items DROP COLUMN id;
INSERT INTO items (sku, body) VALUES ('c', 'x y z');     -- 42703 column r.id does not exist
