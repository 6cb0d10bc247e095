-- Partitioned tables: range, list and hash partitioning, two levels, keys of
-- several columns, partitions created, attached, detached and dropped later,
-- index lookups equal to a sequential scan, the statistics after a random mix of
-- writes, security and the actions. The time window: window.sql.
SET client_min_messages = warning;
CREATE FUNCTION story(s int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg('w' || (abs(hashtext(s || ':' || j)::int8) % 3000), ' ' ORDER BY j) || '. Итог ' || s || '.'
  FROM generate_series(1, 30) AS j $$;
-- Whether a collection's statistics equal the aggregate of its table's documents.
CREATE FUNCTION stats_right(tbl regclass) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    agg jsonb;
    coll int := (SELECT collection_id FROM dedup.enabled_tables WHERE enabled_tables.tbl = stats_right.tbl);
    ok boolean;
BEGIN
    EXECUTE format('SELECT coalesce(dedup.term_stats_agg(dedup_doc), ''{"n_docs":0,"total_len":0,"terms":{}}'') FROM %s', tbl)
        INTO agg;
    SELECT s.n_docs = (agg->>'n_docs')::bigint AND s.total_len = (agg->>'total_len')::bigint
    INTO ok FROM dedup.collection_stats s WHERE s.collection_id = coll;
    RETURN ok AND NOT EXISTS (
        (SELECT term, df, cf FROM dedup.term_stats WHERE collection_id = coll AND df <> 0
         EXCEPT
         SELECT key, (value->>0)::bigint, (value->>1)::bigint FROM jsonb_each(agg->'terms'))
        UNION ALL
        (SELECT key, (value->>0)::bigint, (value->>1)::bigint FROM jsonb_each(agg->'terms')
         EXCEPT
         SELECT term, df, cf FROM dedup.term_stats WHERE collection_id = coll AND df <> 0));
END $$;

-- 1. One partition a month, the key (id, published): it must hold the partition
-- column. duplicate_of is of a composite type of the key columns.
CREATE TABLE pnews (id bigint, published date NOT NULL, body text, PRIMARY KEY (id, published))
    PARTITION BY RANGE (published);
CREATE TABLE pnews_2024_01 PARTITION OF pnews FOR VALUES FROM ('2024-01-01') TO ('2024-02-01');
CREATE TABLE pnews_2024_02 PARTITION OF pnews FOR VALUES FROM ('2024-02-01') TO ('2024-03-01');
INSERT INTO pnews SELECT i, date '2024-01-01' + 2 * i, story(i) FROM generate_series(1, 20) AS i;
INSERT INTO pnews VALUES (21, '2024-02-25', story(4));
SELECT dedup.enable('pnews', 'body', published_at => 'published') AS backfilled;
SELECT format_type(atttypid, atttypmod) AS duplicate_of_type FROM pg_attribute
WHERE attrelid = 'pnews'::regclass AND attname = 'duplicate_of';
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'pnews_dedup_key'::regclass AND attnum > 0 ORDER BY attnum;
SELECT tableoid::regclass AS part, id, published, duplicate_of, dedup_verdict FROM pnews
WHERE duplicate_of IS NOT NULL ORDER BY id;
-- A reprint is found whichever partition holds its original.
INSERT INTO pnews VALUES (101, '2024-02-20', story(1)), (102, '2024-01-30', story(19)), (103, '2024-02-21', story(500));
SELECT tableoid::regclass AS part, id, published, duplicate_of, dedup_verdict FROM pnews WHERE id > 100 ORDER BY id;
-- Analysts join on the key's fields.
SELECT n.id, n.published, o.id AS original_id, o.published AS original_published
FROM pnews n JOIN pnews o ON (o.id, o.published) = ((n.duplicate_of).id, (n.duplicate_of).published)
ORDER BY n.id;
-- find_original, pairs and groups give a key as duplicate_of's text form, which
-- casts back to the key type.
SELECT key, verdict, key::pnews_dedup_key = ROW(19, '2024-02-08')::pnews_dedup_key AS same_key
FROM dedup.find_original('pnews', dedup.to_document(story(19)));
SELECT a, b, verdict FROM dedup.pairs('pnews') ORDER BY a, b;
SELECT key, group_id, is_original FROM dedup.groups('pnews') ORDER BY group_id, key;
SELECT count(*) AS pairs, bool_and(p.a::pnews_dedup_key = n.duplicate_of) AS pairs_match_duplicate_of
FROM dedup.pairs('pnews') p JOIN pnews n ON ROW(n.id, n.published)::pnews_dedup_key = p.b::pnews_dedup_key;
SELECT stats_right('pnews');
-- Each partition has the triggers PostgreSQL clones and the statement triggers it
-- does not.
SELECT tgrelid::regclass AS rel, string_agg(tgname, ', ' ORDER BY tgname) AS triggers
FROM pg_trigger WHERE tgrelid IN (SELECT relid FROM pg_partition_tree('pnews')) AND NOT tgisinternal
GROUP BY 1 ORDER BY 1;

-- A partition created later is searched, and gets the statement triggers.
CREATE TABLE pnews_2024_03 PARTITION OF pnews FOR VALUES FROM ('2024-03-01') TO ('2024-04-01');
INSERT INTO pnews VALUES (104, '2024-03-02', story(2)), (105, '2024-03-03', story(104000));
INSERT INTO pnews VALUES (106, '2024-01-03', story(105000));
SELECT id, duplicate_of, dedup_verdict FROM pnews WHERE id > 103 ORDER BY id;
SELECT count(*) AS statement_triggers FROM pg_trigger
WHERE tgrelid = 'pnews_2024_03'::regclass AND tgname IN ('dedup_statement_start', 'dedup_statement_end', 'dedup_truncate_trigger');
-- Straight into a partition: the statement is followed there too.
INSERT INTO pnews_2024_03 VALUES (107, '2024-03-04', story(3)) ON CONFLICT DO NOTHING;
SELECT id, duplicate_of, dedup_verdict FROM pnews WHERE id = 107;
SELECT stats_right('pnews');
-- A table attached later: rows that come with their documents are counted, the
-- others are checked one at a time, as if inserted.
CREATE TABLE pnews_2023_12 (LIKE pnews INCLUDING DEFAULTS);
INSERT INTO pnews_2023_12 (id, published, body) VALUES (201, '2023-12-30', story(5)), (202, '2023-12-31', story(700));
INSERT INTO pnews_2023_12 SELECT 203, '2023-12-29', body, dedup_doc, dedup_sig, NULL, 'distinct' FROM pnews WHERE id = 6;
ALTER TABLE pnews ATTACH PARTITION pnews_2023_12 FOR VALUES FROM ('2023-12-01') TO ('2024-01-01');
SELECT id, duplicate_of, dedup_verdict FROM pnews WHERE id > 200 ORDER BY id;
SELECT stats_right('pnews');
-- Detached, a partition's documents leave the statistics, and so do its triggers.
ALTER TABLE pnews DETACH PARTITION pnews_2023_12;
SELECT stats_right('pnews');
SELECT count(*) AS triggers_left FROM pg_trigger WHERE tgrelid = 'pnews_2023_12'::regclass AND NOT tgisinternal;
DROP TABLE pnews_2023_12;
-- Dropped, likewise (the documents are taken out before the drop).
DROP TABLE pnews_2024_03;
SELECT stats_right('pnews');
-- A row moved to another partition by an UPDATE of its time is counted once.
UPDATE pnews SET published = '2024-02-28' WHERE id = 102;
SELECT tableoid::regclass AS part, id, published, duplicate_of, dedup_verdict FROM pnews WHERE id = 102;
SELECT stats_right('pnews');
-- TRUNCATE of one partition.
TRUNCATE pnews_2024_02;
SELECT stats_right('pnews'), (SELECT count(*) FROM pnews) AS rows_left;
SELECT dedup.recompute('pnews') AS recomputed;
SELECT collection, documents, duplicates FROM dedup.status WHERE collection = 'pnews';

-- 2. Index lookups equal the SQL form's sequential scan: every stored row's
-- originals, through each partition's signature index, then with the index gone.
INSERT INTO pnews SELECT 300 + i, date '2024-01-01' + (i % 55), story(i % 17) FROM generate_series(1, 60) AS i;
CREATE TEMP TABLE via_index AS
SELECT id, published, (SELECT string_agg(f.key || ' ' || f.verdict, '; ' ORDER BY f.key)
                       FROM dedup.find_original('pnews', p.dedup_doc) f) AS originals
FROM pnews p;
DROP INDEX pnews_dedup_sig_idx;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE via_seqscan AS
SELECT id, published, (SELECT string_agg(f.key || ' ' || f.verdict, '; ' ORDER BY f.key)
                       FROM dedup.find_original('pnews', p.dedup_doc) f) AS originals
FROM pnews p;
RESET enable_indexscan;
RESET enable_bitmapscan;
SELECT count(*) AS rows, count(i.originals) AS with_originals,
       count(*) FILTER (WHERE i.originals IS DISTINCT FROM s.originals) AS differ
FROM via_index i JOIN via_seqscan s USING (id, published);
CREATE INDEX pnews_dedup_sig_idx ON pnews USING gin (dedup_sig dedup.signature_ops) WITH (fastupdate = off);
DROP TABLE via_index, via_seqscan;

-- 3. The same stream on a plain table, a hash-partitioned and a two-level
-- list/hash-partitioned one gives the same verdicts; the single-column key stays
-- as it is (duplicate_of bigint).
CREATE TABLE flat (id bigint PRIMARY KEY, grp int NOT NULL, body text);
CREATE TABLE hnews (id bigint PRIMARY KEY, grp int NOT NULL, body text) PARTITION BY HASH (id);
CREATE TABLE hnews_0 PARTITION OF hnews FOR VALUES WITH (MODULUS 3, REMAINDER 0);
CREATE TABLE hnews_1 PARTITION OF hnews FOR VALUES WITH (MODULUS 3, REMAINDER 1);
CREATE TABLE hnews_2 PARTITION OF hnews FOR VALUES WITH (MODULUS 3, REMAINDER 2);
CREATE TABLE lnews (id bigint, grp int NOT NULL, body text, PRIMARY KEY (id, grp)) PARTITION BY LIST (grp);
CREATE TABLE lnews_a PARTITION OF lnews FOR VALUES IN (0, 1);
CREATE TABLE lnews_b PARTITION OF lnews FOR VALUES IN (2) PARTITION BY HASH (id);
CREATE TABLE lnews_b0 PARTITION OF lnews_b FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE lnews_b1 PARTITION OF lnews_b FOR VALUES WITH (MODULUS 2, REMAINDER 1);
SELECT dedup.enable('flat', 'body'), dedup.enable('hnews', 'body'), dedup.enable('lnews', 'body');
SELECT format_type(atttypid, atttypmod) AS hnews_duplicate_of FROM pg_attribute
WHERE attrelid = 'hnews'::regclass AND attname = 'duplicate_of';
-- A stream with reprints, cut copies and extended copies, one row at a time.
CREATE TEMP TABLE stream AS
SELECT i AS id, i % 3 AS grp,
       CASE WHEN i % 5 = 0 THEN story(i / 5)
            WHEN i % 7 = 0 THEN story(i / 7) || ' Дополнение к заметке ' || i || '.'
            WHEN i % 11 = 0 THEN left(story(i / 11), 120)
            ELSE story(1000 + i) END AS body
FROM generate_series(1, 120) AS i;
DO $$
DECLARE r record;
BEGIN
    FOR r IN SELECT * FROM stream ORDER BY id LOOP
        INSERT INTO flat VALUES (r.id, r.grp, r.body);
        INSERT INTO hnews VALUES (r.id, r.grp, r.body);
        INSERT INTO lnews VALUES (r.id, r.grp, r.body);
    END LOOP;
END $$;
SELECT count(*) AS rows, count(f.duplicate_of) AS marked,
       count(*) FILTER (WHERE f.duplicate_of IS DISTINCT FROM h.duplicate_of OR f.dedup_verdict IS DISTINCT FROM h.dedup_verdict) AS hash_differs,
       count(*) FILTER (WHERE f.duplicate_of IS DISTINCT FROM (l.duplicate_of).id OR f.dedup_verdict IS DISTINCT FROM l.dedup_verdict) AS list_differs
FROM flat f JOIN hnews h USING (id) JOIN lnews l USING (id);
SELECT (SELECT count(*) FROM dedup.pairs('flat')) AS flat_pairs,
       (SELECT count(*) FROM dedup.pairs('flat') f FULL JOIN dedup.pairs('hnews') h USING (a, b, verdict) WHERE f.a IS NULL OR h.a IS NULL) AS hash_pairs_differ,
       (SELECT count(*) FROM dedup.groups('flat') f FULL JOIN dedup.groups('hnews') h USING (key, group_id, is_original) WHERE f.key IS NULL OR h.key IS NULL) AS hash_groups_differ;
SELECT stats_right('flat') AND stats_right('hnews') AND stats_right('lnews') AS stats_right;
-- A partition is enabled with its partitioned table, not alone; an enabled table
-- is not attached to an enabled one (PostgreSQL refuses: their triggers clash).
SELECT err($$SELECT dedup.enable('hnews_1', 'body')$$);
CREATE TABLE parent_of (id bigint PRIMARY KEY, body text) PARTITION BY RANGE (id);
CREATE TABLE child_of PARTITION OF parent_of FOR VALUES FROM (0) TO (100);
SELECT err($$SELECT dedup.enable('child_of', 'body')$$);
SELECT dedup.enable('parent_of', 'body');
CREATE TABLE loose (id bigint PRIMARY KEY, body text);
SELECT dedup.enable('loose', 'body');
SELECT err($$ALTER TABLE parent_of ATTACH PARTITION loose FOR VALUES FROM (100) TO (200)$$);
DROP TABLE parent_of, loose;

-- 4. Security and the actions on a partitioned table: the writer needs rights on
-- the table only; under row-level security duplicate_of stays NULL; 'skip' and
-- 'error' work through the parent and straight into a partition.
CREATE ROLE regress_dedup_pwriter LOGIN;
CREATE TABLE psec (id int, grp int, body text, PRIMARY KEY (id, grp)) PARTITION BY LIST (grp);
CREATE TABLE psec_0 PARTITION OF psec FOR VALUES IN (0);
CREATE TABLE psec_1 PARTITION OF psec FOR VALUES IN (1);
CREATE TABLE pskip (LIKE psec INCLUDING ALL) PARTITION BY LIST (grp);
CREATE TABLE pskip_0 PARTITION OF pskip FOR VALUES IN (0);
CREATE TABLE pskip_1 PARTITION OF pskip FOR VALUES IN (1);
CREATE TABLE perror (LIKE psec INCLUDING ALL) PARTITION BY LIST (grp);
CREATE TABLE perror_0 PARTITION OF perror FOR VALUES IN (0);
CREATE TABLE perror_1 PARTITION OF perror FOR VALUES IN (1);
SELECT dedup.enable('psec', 'body'), dedup.enable('pskip', 'body', action => 'skip'),
       dedup.enable('perror', 'body', action => 'error');
GRANT SELECT, INSERT, UPDATE, DELETE ON psec TO regress_dedup_pwriter;
GRANT INSERT ON pskip, perror, pskip_1, perror_1 TO regress_dedup_pwriter;
SET ROLE regress_dedup_pwriter;
INSERT INTO psec VALUES (1, 0, story(1)), (2, 1, story(1));
INSERT INTO pskip VALUES (1, 0, story(2));
INSERT INTO pskip VALUES (2, 1, story(2));
INSERT INTO pskip_1 VALUES (3, 1, story(2));
INSERT INTO perror VALUES (1, 0, story(3));
SELECT err($$INSERT INTO perror VALUES (2, 1, story(3))$$);
SELECT err($$INSERT INTO perror_1 VALUES (3, 1, story(3))$$);
-- A partition's refusal names the partition, as a unique violation does.
SELECT err_fields($$INSERT INTO perror VALUES (2, 1, story(3))$$);
UPDATE psec SET grp = 0 WHERE id = 2;
SELECT id, grp, duplicate_of, dedup_verdict FROM psec ORDER BY id;
RESET ROLE;
SELECT tbl, row_data->>'id' AS id, original_key, verdict FROM dedup.rejected WHERE tbl = 'pskip'::regclass ORDER BY id;
SELECT stats_right('psec') AND stats_right('pskip') AND stats_right('perror') AS stats_right;
-- Under row-level security applying to the writer, the original is not revealed.
ALTER TABLE psec ENABLE ROW LEVEL SECURITY;
CREATE POLICY psec_own ON psec USING (grp = 1) WITH CHECK (true);
SET ROLE regress_dedup_pwriter;
INSERT INTO psec VALUES (3, 1, story(1));
SELECT id, grp, duplicate_of, dedup_verdict FROM psec WHERE id = 3;
SELECT err($$SELECT * FROM dedup.pairs('psec')$$);
RESET ROLE;
SELECT id, grp, duplicate_of, dedup_verdict FROM psec ORDER BY id;

-- 5. The statistics after a seeded random mix of writes on a two-level
-- partitioned table: inserts through the parent and straight into partitions,
-- upserts, rows a later trigger drops, updates of the text and of the partition
-- key (rows move between partitions), deletes, truncates, savepoints, rollbacks,
-- partitions detached and attached, dropped and created again.
CREATE TABLE pmix (id int, grp int, body text, PRIMARY KEY (id, grp)) PARTITION BY LIST (grp);
CREATE TABLE pmix_0 PARTITION OF pmix FOR VALUES IN (0);
CREATE TABLE pmix_1 PARTITION OF pmix FOR VALUES IN (1) PARTITION BY HASH (id);
CREATE TABLE pmix_1a PARTITION OF pmix_1 FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE pmix_1b PARTITION OF pmix_1 FOR VALUES WITH (MODULUS 2, REMAINDER 1);
SELECT dedup.enable('pmix', 'body') AS backfilled;
CREATE TABLE pmix_2 PARTITION OF pmix FOR VALUES IN (2);
CREATE FUNCTION drop_some() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.body LIKE '%выброс%' THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER zz_drop_some BEFORE INSERT OR UPDATE ON pmix FOR EACH ROW EXECUTE FUNCTION drop_some();
CREATE FUNCTION rnd_text() RETURNS text LANGUAGE sql AS $$
    SELECT string_agg((ARRAY['рубль','доллар','биржа','нефть','ставка','банк','рост','падение',
                             'торги','акции','индекс','инфляция','бюджет','налог','экспорт',
                             'импорт','курс','спрос','цена','рынок'])[1 + floor(random() * 20)::int], ' ')
           || CASE WHEN random() < 0.1 THEN ' выброс' ELSE '' END
    FROM generate_series(1, 4 + floor(random() * 9)::int)
$$;
CREATE TABLE pmix_log (step int, op text, stats_right boolean);
CREATE PROCEDURE run_pmix(steps int) LANGUAGE plpgsql AS $$
DECLARE
    op int;
    k int;
    g int;
BEGIN
    FOR i IN 1..steps LOOP
        op := floor(random() * 15)::int;
        k := 1 + floor(random() * 40)::int;
        g := floor(random() * 3)::int;
        CASE op
        WHEN 0, 1 THEN
            INSERT INTO pmix VALUES (k, g, rnd_text()) ON CONFLICT DO NOTHING;
        WHEN 2 THEN
            INSERT INTO pmix SELECT x, x % 3, rnd_text() FROM generate_series(k, k + 5) x ON CONFLICT DO NOTHING;
        WHEN 3 THEN
            INSERT INTO pmix VALUES (k, g, rnd_text()) ON CONFLICT (id, grp) DO UPDATE SET body = excluded.body;
        WHEN 4 THEN
            INSERT INTO pmix_0 VALUES (k, 0, rnd_text()) ON CONFLICT DO NOTHING;
        WHEN 5 THEN
            UPDATE pmix SET body = rnd_text() WHERE id BETWEEN k AND k + 2;
        WHEN 6 THEN
            UPDATE pmix SET grp = (grp + 1) % 3 WHERE id BETWEEN k AND k + 2
              AND NOT EXISTS (SELECT 1 FROM pmix o WHERE o.id = pmix.id AND o.grp = (pmix.grp + 1) % 3);
        WHEN 7 THEN
            DELETE FROM pmix WHERE id BETWEEN k AND k + 1;
        WHEN 8 THEN
            BEGIN
                INSERT INTO pmix SELECT x, x % 3, rnd_text() FROM generate_series(k + 100, k + 102) x ON CONFLICT DO NOTHING;
                UPDATE pmix SET grp = (grp + 1) % 3, body = rnd_text() WHERE id = k
                  AND NOT EXISTS (SELECT 1 FROM pmix o WHERE o.id = pmix.id AND o.grp = (pmix.grp + 1) % 3);
                RAISE EXCEPTION 'roll the savepoint back';
            EXCEPTION WHEN raise_exception THEN
                NULL;
            END;
        WHEN 9 THEN
            INSERT INTO pmix VALUES (k + 200, g, rnd_text()) ON CONFLICT DO NOTHING;
            ROLLBACK;
            CONTINUE;
        WHEN 10 THEN
            IF random() < 0.3 THEN
                TRUNCATE pmix_2;
            END IF;
        WHEN 11 THEN
            UPDATE pmix_1 SET body = rnd_text() WHERE id = k;
        WHEN 12 THEN
            IF random() < 0.3 THEN
                ALTER TABLE pmix DETACH PARTITION pmix_2;
                COMMIT;
                INSERT INTO pmix_log VALUES (i, 'detach', stats_right('pmix'));
                INSERT INTO pmix_2 VALUES (k + 300, 2, rnd_text()) ON CONFLICT DO NOTHING;
                ALTER TABLE pmix ATTACH PARTITION pmix_2 FOR VALUES IN (2);
                COMMIT;
            ELSE
                UPDATE pmix SET grp = (grp + 1) % 3, body = rnd_text() WHERE id = k
                  AND NOT EXISTS (SELECT 1 FROM pmix o WHERE o.id = pmix.id AND o.grp = (pmix.grp + 1) % 3);
            END IF;
        WHEN 13 THEN
            DELETE FROM pmix_1b WHERE id = k;
            IF random() < 0.2 THEN
                DROP TABLE pmix_2;
                COMMIT;
                INSERT INTO pmix_log VALUES (i, 'drop', stats_right('pmix'));
                CREATE TABLE pmix_2 PARTITION OF pmix FOR VALUES IN (2);
                COMMIT;
            END IF;
        ELSE
            INSERT INTO pmix VALUES (k, g, rnd_text()) ON CONFLICT (id, grp) DO UPDATE SET id = excluded.id;
        END CASE;
        IF i % 5 = 0 THEN
            COMMIT;
            INSERT INTO pmix_log VALUES (i, op::text, stats_right('pmix'));
            COMMIT;
        END IF;
    END LOOP;
    COMMIT;
END $$;
SELECT setseed(0.44);
CALL run_pmix(300);
SELECT count(*) AS checks, count(*) FILTER (WHERE NOT stats_right) AS wrong,
       count(*) FILTER (WHERE op IN ('6', '12')) AS after_moves,
       count(*) FILTER (WHERE op = 'detach') AS after_detach, count(*) FILTER (WHERE op = 'drop') AS after_drop
FROM pmix_log;
SELECT stats_right('pmix') AS pmix_right;

-- 6. disable removes everything enable added, the key type and the partitions'
-- triggers too; DROP TABLE takes the registration and the key type with it.
SELECT dedup.disable('pnews');
SELECT to_regtype('pnews_dedup_key') AS key_type,
       (SELECT count(*) FROM pg_trigger WHERE tgrelid IN (SELECT relid FROM pg_partition_tree('pnews')) AND NOT tgisinternal) AS triggers,
       (SELECT count(*) FROM pg_attribute WHERE attrelid = 'pnews_2024_01'::regclass AND attname LIKE 'dedup%' AND NOT attisdropped) AS columns;
DROP TABLE lnews;
SELECT to_regtype('lnews_dedup_key') AS key_type, (SELECT count(*) FROM dedup.enabled_tables WHERE tbl::text = 'lnews') AS registered;
DROP PROCEDURE run_pmix(int);
DROP TABLE pnews, flat, hnews, psec, pskip, perror, pmix, pmix_log, stream;
DROP FUNCTION drop_some(), rnd_text(), story(int), stats_right(regclass);
DROP ROLE regress_dedup_pwriter;

-- A partitioned table without partitions is enabled (and disabled) like any other.
CREATE TABLE p_empty (id int PRIMARY KEY, body text) PARTITION BY RANGE (id);
SELECT dedup.enable('p_empty', 'body');
SELECT dedup.disable('p_empty');
DROP TABLE p_empty;
-- A tree partitioned by an expression is not read (building its key would run the
-- expression with the rights of whoever reads the table first).
CREATE TABLE p_expr (id int, dedup_doc dedup.document) PARTITION BY RANGE ((id + 0));
SELECT dedup.create_collection('p_expr');
SELECT err($$SELECT dedup.recompute('p_expr', 'dedup_doc', 'p_expr')$$);
SELECT dedup.drop_collection('p_expr');
DROP TABLE p_expr;
-- A generated column is not given to enable (the trigger runs before it is computed).
CREATE TABLE p_gen (id int PRIMARY KEY, raw text, body text GENERATED ALWAYS AS (lower(raw)) STORED);
SELECT err($$SELECT dedup.enable('p_gen', 'body')$$);
DROP TABLE p_gen;

-- A partition detached from an enabled table keeps its duplicate_of, of the
-- table's composite key type: disable and DROP TABLE keep the type, with a
-- NOTICE, instead of failing.
CREATE TABLE kdet (id bigint, published date NOT NULL, body text, PRIMARY KEY (id, published)) PARTITION BY RANGE (published);
CREATE TABLE kdet_1 PARTITION OF kdet FOR VALUES FROM ('2024-01-01') TO ('2024-02-01');
CREATE TABLE kdrop (LIKE kdet INCLUDING ALL) PARTITION BY RANGE (published);
CREATE TABLE kdrop_1 PARTITION OF kdrop FOR VALUES FROM ('2024-01-01') TO ('2024-02-01');
SELECT dedup.enable('kdet', 'body', published_at => 'published'), dedup.enable('kdrop', 'body', published_at => 'published');
ALTER TABLE kdet DETACH PARTITION kdet_1;
ALTER TABLE kdrop DETACH PARTITION kdrop_1;
SELECT dedup.disable('kdet');
DROP TABLE kdrop;
SELECT attrelid::regclass, atttypid::regtype FROM pg_attribute
 WHERE attrelid IN ('kdet_1'::regclass, 'kdrop_1'::regclass) AND attname = 'duplicate_of' ORDER BY 1;
SELECT count(*) AS registered FROM dedup.enabled_tables WHERE tbl::text IN ('kdet', 'kdrop');
DROP TABLE kdet, kdet_1, kdrop_1;
DROP TYPE kdet_dedup_key, kdrop_dedup_key;

-- Only DDL that adds or removes a partition changes what a partitioned table
-- counts: a constraint added to one whose partition has lost its statement
-- triggers (as a partition restored by pg_restore has, until its own dumped
-- triggers come) counts nothing twice.
CREATE TABLE kcon (id bigint, published date NOT NULL, body text, PRIMARY KEY (id, published)) PARTITION BY RANGE (published);
CREATE TABLE kcon_1 PARTITION OF kcon FOR VALUES FROM ('2024-01-01') TO ('2024-02-01');
SELECT dedup.enable('kcon', 'body', published_at => 'published');
INSERT INTO kcon VALUES (1, '2024-01-02', 'Первая новость о строительстве моста через реку.'),
                        (2, '2024-01-03', 'Вторая новость о ремонте школы в районе Сокол.');
SELECT s.n_docs FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'kcon';
DROP TRIGGER dedup_statement_start ON kcon_1;
DROP TRIGGER dedup_statement_end ON kcon_1;
DROP TRIGGER dedup_truncate_trigger ON kcon_1;
ALTER TABLE kcon ADD CONSTRAINT kcon_id CHECK (id > 0);
SELECT s.n_docs FROM dedup.collection_stats s JOIN dedup.collections c ON c.id = s.collection_id WHERE c.name = 'kcon';
SELECT count(*) AS statement_triggers FROM pg_trigger WHERE tgrelid = 'kcon_1'::regclass AND tgname LIKE 'dedup_statement%';
SELECT dedup.disable('kcon');
DROP TABLE kcon;

-- A table of a composite key renamed, and a new one of the old name enabled: the
-- old table keeps rot_dedup_key, the new one gets rot_dedup_key1, and enable
-- accepts the type it made.
CREATE TABLE rot (id int, day date, body text, PRIMARY KEY (id, day));
SELECT dedup.enable('rot', 'body');
ALTER TABLE rot RENAME TO rot_old;
CREATE TABLE rot (id int, day date, body text, PRIMARY KEY (id, day));
SELECT dedup.enable('rot', 'body', collection => 'rot_new');
SELECT format_type(atttypid, atttypmod) AS key_type FROM pg_attribute
 WHERE attrelid = 'rot'::regclass AND attname = 'duplicate_of';
INSERT INTO rot VALUES (1, '2024-01-01', 'Мост через реку откроют в мае после ремонта пролётов.'),
                       (2, '2024-01-02', 'Мост через реку откроют в мае после ремонта пролётов.');
SELECT id, duplicate_of FROM rot ORDER BY id;
SELECT dedup.disable('rot'), dedup.disable('rot_old');
DROP TABLE rot, rot_old;

-- Inheritance children (INHERITS, not partitions) get none of the triggers, and
-- every read of the parent reads their rows: refused at enable, and refused when
-- one would appear later.
CREATE TABLE ip (id int PRIMARY KEY, body text);
CREATE TABLE ic (PRIMARY KEY (id)) INHERITS (ip);
SELECT err($$SELECT dedup.enable('ip', 'body')$$);
DROP TABLE ic;
SELECT dedup.enable('ip', 'body');
SELECT err($$CREATE TABLE ic (PRIMARY KEY (id)) INHERITS (ip)$$);
CREATE TABLE ic2 (id int PRIMARY KEY, body text, dedup_doc dedup.document, dedup_sig dedup.signature,
                  duplicate_of int, dedup_verdict dedup.verdict);
SELECT err($$ALTER TABLE ic2 INHERIT ip$$);
SELECT count(*) AS children FROM pg_inherits WHERE inhparent = 'ip'::regclass;
SELECT dedup.disable('ip');
DROP TABLE ip, ic2;

-- A name so long that <table>_dedup_key would be cut: the table's name is cut
-- instead, by whole characters, and enable accepts the type it made.
CREATE TABLE "новости_региональные_архив_2024" (id int, day date, body text, PRIMARY KEY (id, day));
SELECT dedup.enable('"новости_региональные_архив_2024"', 'body');
SELECT format_type(atttypid, atttypmod) AS key_type, octet_length(format_type(atttypid, atttypmod)) AS bytes
FROM pg_attribute WHERE attrelid = '"новости_региональные_архив_2024"'::regclass AND attname = 'duplicate_of';
SELECT dedup.disable('"новости_региональные_архив_2024"');
DROP TABLE "новости_региональные_архив_2024";
-- Partitions dropped without being named (DROP SCHEMA ... CASCADE, DROP OWNED BY)
-- leave the statistics as a DROP TABLE of each does.
CREATE TABLE imp (id int PRIMARY KEY, body text) PARTITION BY RANGE (id);
CREATE TABLE imp_1 PARTITION OF imp FOR VALUES FROM (0) TO (100);
CREATE SCHEMA imp_side;
CREATE TABLE imp_side.imp_2 PARTITION OF imp FOR VALUES FROM (100) TO (200);
CREATE ROLE imp_owner;
CREATE TABLE imp_3 PARTITION OF imp FOR VALUES FROM (200) TO (300);
ALTER TABLE imp_3 OWNER TO imp_owner;
SELECT dedup.enable('imp', 'body');
INSERT INTO imp SELECT i, 'Новость номер ' || i || ' о строительстве моста через реку в городе ' || (i * 7) FROM generate_series(1, 299) i;
SELECT dedup.flush_stats('imp') >= 0 AS flushed;
DROP SCHEMA imp_side CASCADE;
DROP OWNED BY imp_owner;
SELECT dedup.flush_stats('imp') >= 0 AS flushed;
SELECT (SELECT documents FROM dedup.status WHERE collection = 'imp') AS counted,
       (SELECT count(*) FROM imp WHERE dedup_doc IS NOT NULL) AS rows_left;
SELECT dedup.disable('imp');
DROP TABLE imp;
DROP ROLE imp_owner;
-- A partition created later gives its statement triggers the partitioned table's
-- trigger state (ENABLE ALWAYS on a logical replication subscriber).
CREATE TABLE subp (id int, grp int, body text, PRIMARY KEY (id, grp)) PARTITION BY LIST (grp);
CREATE TABLE subp_0 PARTITION OF subp FOR VALUES IN (0);
SELECT dedup.enable('subp', 'body');
ALTER TABLE subp ENABLE ALWAYS TRIGGER dedup_statement_start, ENABLE ALWAYS TRIGGER dedup_statement_end,
  ENABLE ALWAYS TRIGGER dedup_truncate_trigger;
CREATE TABLE subp_1 PARTITION OF subp FOR VALUES IN (1);
SELECT tgrelid::regclass AS part, tgname, tgenabled FROM pg_trigger
WHERE tgrelid IN ('subp_0'::regclass, 'subp_1'::regclass)
  AND tgname IN ('dedup_statement_start', 'dedup_statement_end', 'dedup_truncate_trigger')
ORDER BY 1, 2;
SELECT dedup.disable('subp');
DROP TABLE subp;
-- DROP OWNED BY a schema's owner, CASCADE, takes the partitions of another role
-- in it along; a DETACH by the owner of the partitioned table takes out a
-- partition of another role (ALTER TABLE ... OWNER TO leaves the partitions'
-- owners as they were).
CREATE ROLE own_app;
CREATE ROLE own_app2;
CREATE ROLE own_sch;
GRANT CREATE ON SCHEMA public TO own_app, own_app2;
CREATE SCHEMA own_archive AUTHORIZATION own_sch;
GRANT USAGE, CREATE ON SCHEMA own_archive TO own_app;
SET ROLE own_app;
CREATE TABLE ownp (id int, published date NOT NULL, body text, PRIMARY KEY (id, published)) PARTITION BY RANGE (published);
CREATE TABLE ownp_a PARTITION OF ownp FOR VALUES FROM ('2020-01-01') TO ('2024-01-01');
CREATE TABLE ownp_b PARTITION OF ownp FOR VALUES FROM ('2025-01-01') TO ('2030-01-01');
CREATE TABLE own_archive.ownp_old PARTITION OF ownp FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
SELECT dedup.enable('ownp', 'body', published_at => 'published');
INSERT INTO ownp VALUES (1, '2023-05-01', 'Курс доллара на Московской бирже вырос до 92 рублей после решения ЦБ'),
                        (2, '2026-05-01', 'В Москве ожидается сильный снегопад и гололедица на дорогах'),
                        (3, '2024-05-01', 'Выставка кошек открылась в Сокольниках, приехали животные из двадцати стран');
SELECT dedup.flush_stats('ownp') >= 0 AS flushed;
RESET ROLE;
DROP OWNED BY own_sch CASCADE;
ALTER TABLE ownp OWNER TO own_app2;
SET ROLE own_app2;
ALTER TABLE ownp DETACH PARTITION ownp_a;
SELECT dedup.flush_stats('ownp') >= 0 AS flushed;
RESET ROLE;
SELECT (SELECT documents FROM dedup.status WHERE collection = 'ownp') AS counted,
       (SELECT count(*) FROM ownp) AS rows_left,
       (SELECT count(*) FROM pg_trigger WHERE tgrelid = 'ownp_a'::regclass) AS detached_triggers;
DROP TABLE ownp_a;
SELECT dedup.disable('ownp');
DROP TABLE ownp;
REVOKE CREATE ON SCHEMA public FROM own_app, own_app2;
DROP ROLE own_app;
DROP ROLE own_app2;
DROP ROLE own_sch;
