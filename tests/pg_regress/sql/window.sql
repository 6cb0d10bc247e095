-- The time window: a new row is compared with the rows published within
-- time_window of it (before or after); rows without a time are not limited. On a
-- table partitioned by range of that time, only the partitions that meet the
-- window are searched.
SET client_min_messages = warning;
CREATE FUNCTION story(s int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg('w' || (abs(hashtext(s || ':' || j)::int8) % 3000), ' ' ORDER BY j) || '. Итог ' || s || '.'
  FROM generate_series(1, 30) AS j $$;
SET TimeZone = 'UTC';
-- Six monthly partitions and a default one; and the same rows in a plain table.
CREATE TABLE wnews (id bigint, published timestamptz NOT NULL, body text, PRIMARY KEY (id, published))
    PARTITION BY RANGE (published);
DO $$
BEGIN
    FOR m IN 1..6 LOOP
        EXECUTE format('CREATE TABLE wnews_%s PARTITION OF wnews FOR VALUES FROM (%L) TO (%L)', m,
                       make_date(2024, m, 1), make_date(2024, m + 1, 1));
    END LOOP;
END $$;
CREATE TABLE wnews_other PARTITION OF wnews DEFAULT;
CREATE TABLE wflat (id bigint PRIMARY KEY, published timestamptz, body text);
-- Originals a week apart from January on; one of them (id 20) also in a reprint
-- before the window is set, 60 days later.
INSERT INTO wnews SELECT i, timestamptz '2024-01-01' + i * interval '7 days', story(i) FROM generate_series(1, 20) AS i;
INSERT INTO wflat SELECT i, timestamptz '2024-01-01' + i * interval '7 days', story(i) FROM generate_series(1, 20) AS i;
INSERT INTO wnews VALUES (21, timestamptz '2024-01-01' + 20 * interval '7 days' + interval '60 days', story(20));
INSERT INTO wflat VALUES (21, timestamptz '2024-01-01' + 20 * interval '7 days' + interval '60 days', story(20));
SELECT err($$SELECT dedup.enable('wflat', 'body', time_window => interval '30 days')$$);
SELECT err($$SELECT dedup.enable('wflat', 'body', published_at => 'published', time_window => interval '-1 day')$$);
SELECT err($$SELECT dedup.set_time_window('wflat', interval '1 day')$$);
-- The backfill marks what the trigger would have: 21 is outside the window of 20.
SELECT dedup.enable('wnews', 'body', published_at => 'published', time_window => interval '30 days') AS backfilled;
SELECT dedup.enable('wflat', 'body', published_at => 'published', time_window => interval '30 days') AS backfilled;
SELECT tbl, time_window FROM dedup.enabled_tables WHERE tbl IN ('wnews'::regclass, 'wflat'::regclass) ORDER BY 1;
SELECT count(duplicate_of) AS marked FROM wnews;
-- Reprints 10 days after, 10 days before and 45 days after their original.
CREATE TEMP TABLE reprints AS
SELECT 100 + i AS id, timestamptz '2024-01-01' + i * interval '7 days' + d AS published, story(i) AS body, d
FROM generate_series(3, 8) AS i, (VALUES (interval '10 days'), (interval '-10 days'), (interval '45 days')) AS v(d)
WHERE (i + extract(day FROM d)::int) % 3 = 0;
SELECT dedup._leaves_searched() AS before \gset
INSERT INTO wnews SELECT id, published, body FROM reprints ORDER BY id;
SELECT dedup._leaves_searched() - :before AS partitions_searched, (SELECT count(*) FROM reprints) AS rows,
       (SELECT count(*) FROM reprints) * 7 AS without_window;
INSERT INTO wflat SELECT id, published, body FROM reprints ORDER BY id;
SELECT r.id, r.d AS after_original, n.duplicate_of, n.dedup_verdict, f.duplicate_of AS flat_duplicate_of,
       f.dedup_verdict AS flat_verdict
FROM reprints r JOIN wnews n USING (id) JOIN wflat f USING (id) ORDER BY r.id;
-- A row without a time is compared with every row (the plain table allows one).
INSERT INTO wflat VALUES (200, NULL, story(2));
SELECT id, duplicate_of, dedup_verdict FROM wflat WHERE id = 200;
-- find_original and is_duplicate compare by the document's time.
SELECT key, verdict FROM dedup.find_original('wnews', dedup.to_document(story(5), NULL, timestamptz '2024-02-10'));
SELECT count(*) AS none_outside FROM dedup.find_original('wnews', dedup.to_document(story(5), NULL, timestamptz '2024-06-10'));
SELECT dedup.is_duplicate('wnews', story(5), NULL, timestamptz '2024-02-10') AS inside,
       dedup.is_duplicate('wnews', story(5), NULL, timestamptz '2024-06-10') AS outside,
       dedup.is_duplicate('wnews', story(5)) AS without_time;
-- pairs and groups pair rows within the window only.
SELECT a, b, verdict FROM dedup.pairs('wnews') ORDER BY a, b;
SELECT (SELECT count(*) FROM dedup.pairs('wflat')) AS flat_pairs,
       (SELECT count(*) FROM dedup.groups('wnews')) AS grouped;
-- Index lookups equal the SQL form's sequential scan under the window.
CREATE TEMP TABLE via_index AS
SELECT id, (SELECT string_agg(f.key || ' ' || f.verdict, '; ' ORDER BY f.key)
            FROM dedup.find_original('wnews', p.dedup_doc) f) AS originals FROM wnews p;
DROP INDEX wnews_dedup_sig_idx;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE via_seqscan AS
SELECT id, (SELECT string_agg(f.key || ' ' || f.verdict, '; ' ORDER BY f.key)
            FROM dedup.find_original('wnews', p.dedup_doc) f) AS originals FROM wnews p;
RESET enable_indexscan;
RESET enable_bitmapscan;
SELECT count(*) AS rows, count(i.originals) AS with_originals,
       count(*) FILTER (WHERE i.originals IS DISTINCT FROM s.originals) AS differ
FROM via_index i JOIN via_seqscan s USING (id);
CREATE INDEX wnews_dedup_sig_idx ON wnews USING gin (dedup_sig dedup.signature_ops) WITH (fastupdate = off);
-- The owner widens the window, or removes it; others may not.
SELECT dedup.set_time_window('wnews', interval '60 days');
INSERT INTO wnews VALUES (300, timestamptz '2024-01-01' + 8 * interval '7 days' + interval '45 days', story(8));
SELECT id, duplicate_of, dedup_verdict FROM wnews WHERE id = 300;
SELECT dedup.set_time_window('wnews', NULL);
SELECT dedup._leaves_searched() AS before \gset
INSERT INTO wnews VALUES (301, '2024-06-20', story(1));
SELECT dedup._leaves_searched() - :before AS partitions_searched, duplicate_of, dedup_verdict FROM wnews WHERE id = 301;
CREATE ROLE regress_dedup_wother;
GRANT SELECT ON wnews TO regress_dedup_wother;
SET ROLE regress_dedup_wother;
SELECT err($$SELECT dedup.set_time_window('wnews', interval '1 day')$$);
RESET ROLE;
SELECT err($$SELECT dedup.set_time_window('wnews', interval '0')$$);
CREATE TABLE wnot (id int PRIMARY KEY, body text);
SELECT err($$SELECT dedup.set_time_window('wnot', interval '1 day')$$);
SELECT err($$SELECT dedup.set_time_window(NULL, interval '1 day')$$);
-- dedup.distribute: a table that is not enabled, no Citus here, NULL arguments.
SELECT err($$SELECT dedup.distribute('wnot', 'id')$$);
SELECT err($$SELECT dedup.distribute('wflat', 'id')$$);
SELECT dedup.distribute(NULL, 'id') IS NULL AS strict_null;
-- A date column, partitions by date and days of the window.
CREATE TABLE dnews (id bigint, day date NOT NULL, body text, PRIMARY KEY (id, day)) PARTITION BY RANGE (day);
CREATE TABLE dnews_a PARTITION OF dnews FOR VALUES FROM (MINVALUE) TO ('2024-02-01');
CREATE TABLE dnews_b PARTITION OF dnews FOR VALUES FROM ('2024-02-01') TO ('2024-03-01');
CREATE TABLE dnews_c PARTITION OF dnews FOR VALUES FROM ('2024-03-01') TO (MAXVALUE);
SELECT dedup.enable('dnews', 'body', published_at => 'day', time_window => interval '3 days');
INSERT INTO dnews VALUES (1, '2024-01-30', story(1)), (2, '2024-02-02', story(1)), (3, '2024-02-10', story(1)),
                         (4, '2024-03-02', story(1));
SELECT id, duplicate_of, dedup_verdict FROM dnews ORDER BY id;
-- Another session time zone than the one the configuration was read in: the
-- partitions' spans follow it (5 is 3 days before 6, at the window's edge, and
-- 6's partition begins after that edge in UTC).
SET TimeZone = 'Pacific/Kiritimati';
INSERT INTO dnews VALUES (6, '2024-02-01', story(6));
INSERT INTO dnews VALUES (5, '2024-01-29', story(6));
SELECT id, duplicate_of, dedup_verdict FROM dnews WHERE id IN (5, 6) ORDER BY id;
SET TimeZone = 'UTC';
-- An UPDATE that changes the key (here its time column, to the next partition)
-- does not find the row's own old version: 7 stays an original.
INSERT INTO dnews VALUES (7, '2024-01-31', story(7));
UPDATE dnews SET day = '2024-02-01' WHERE id = 7;
SELECT tableoid::regclass AS part, id, day, duplicate_of, dedup_verdict FROM dnews WHERE id = 7;
-- Times as the trigger reads them, in the analyst functions and enable's
-- backfill too. A text time that is not a time counts as no time (it used to
-- make every windowed query and insert fail with 22007):
CREATE TABLE wtext (id int PRIMARY KEY, pub text, body text);
SELECT dedup.enable('wtext', 'body', published_at => 'pub');
INSERT INTO wtext VALUES (1, 'not a date', story(8));
INSERT INTO wtext VALUES (2, '2024-01-01', story(8));
SELECT dedup.set_time_window('wtext', interval '1 day');
SELECT a, b, verdict FROM dedup.pairs('wtext');
SELECT key, is_original FROM dedup.groups('wtext') ORDER BY key;
SELECT dedup.is_duplicate('wtext', story(8), NULL, '2024-01-01') AS is_duplicate;
INSERT INTO wtext VALUES (3, '2024-01-01', story(8));
SELECT dedup.disable('wtext');
SELECT dedup.enable('wtext', 'body', published_at => 'pub', time_window => interval '1 day');
SELECT id, duplicate_of, dedup_verdict FROM wtext ORDER BY id;
-- infinity is no time: a row published at infinity is compared with every row
-- under a window, by the trigger and by pairs alike.
CREATE TABLE winf (id int PRIMARY KEY, pub timestamptz, body text);
SELECT dedup.enable('winf', 'body', published_at => 'pub', time_window => interval '1 day');
INSERT INTO winf VALUES (1, '2024-01-01', story(9)), (2, 'infinity', story(9));
INSERT INTO winf VALUES (3, '2024-05-01', story(9));
SELECT id, duplicate_of FROM winf ORDER BY id;
SELECT a, b, verdict FROM dedup.pairs('winf') ORDER BY 1, 2;
-- A timestamp column is UTC whatever the session's TimeZone: 100 minutes apart
-- (60 in Berlin's clock change night) is outside a window of an hour.
CREATE TABLE wts (id int PRIMARY KEY, pub timestamp, body text);
SELECT dedup.enable('wts', 'body', published_at => 'pub', time_window => interval '1 hour');
SET TimeZone = 'Europe/Berlin';
INSERT INTO wts VALUES (1, '2024-03-31 01:30', story(10)), (2, '2024-03-31 03:10', story(10));
SELECT id, duplicate_of FROM wts ORDER BY id;
SELECT count(*) AS pairs_in_berlin FROM dedup.pairs('wts');
SET TimeZone = 'UTC';
SELECT count(*) AS pairs_in_utc FROM dedup.pairs('wts');
-- A partition open at its end (MAXVALUE) may hold infinity: it is searched for
-- every row under a window.
CREATE TABLE wpinf (id int, pub timestamptz NOT NULL, body text, PRIMARY KEY (id, pub)) PARTITION BY RANGE (pub);
CREATE TABLE wpinf_a PARTITION OF wpinf FOR VALUES FROM ('2024-01-01') TO ('2024-02-01');
CREATE TABLE wpinf_b PARTITION OF wpinf FOR VALUES FROM ('2030-01-01') TO (MAXVALUE);
SELECT dedup.enable('wpinf', 'body', published_at => 'pub', time_window => interval '1 day');
INSERT INTO wpinf VALUES (1, 'infinity', story(11));
INSERT INTO wpinf VALUES (2, '2024-01-10', story(11));
SELECT id, duplicate_of FROM wpinf ORDER BY id;
-- So may one up to 'infinity' on a date column: a date past the last timestamp
-- (year 294276) reads as the end of time, no time.
CREATE TABLE wpdate (id int, d date, body text, PRIMARY KEY (id, d)) PARTITION BY RANGE (d);
CREATE TABLE wpdate_a PARTITION OF wpdate FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
CREATE TABLE wpdate_b PARTITION OF wpdate FOR VALUES FROM ('2025-01-01') TO ('infinity');
SELECT dedup.enable('wpdate', 'body', published_at => 'd', time_window => interval '1 day');
INSERT INTO wpdate VALUES (1, '300000-01-01', story(12));
INSERT INTO wpdate VALUES (2, '2024-06-01', story(12));
SELECT id, duplicate_of FROM wpdate ORDER BY id;
SELECT count(*) AS pairs FROM dedup.pairs('wpdate');
-- dedup._published, the reading they share: STRICT; text that is not a time,
-- an empty one and the infinities are no time; a timestamp and a date are UTC.
SET TimeZone = 'Europe/Berlin';
SELECT dedup._published(NULL::text) IS NULL AS null_in,
       dedup._published('not a date'::text) IS NULL AS not_a_time,
       dedup._published(''::varchar) IS NULL AS empty,
       dedup._published('infinity'::timestamptz) IS NULL AS infinity,
       dedup._published('-infinity'::date) IS NULL AS minus_infinity,
       dedup._published('2024-03-31 01:30'::timestamp) = timestamptz '2024-03-31 01:30+00' AS timestamp_utc,
       dedup._published(date '2024-01-01') = timestamptz '2024-01-01 00:00+00' AS date_utc,
       dedup._published('2024-01-01 10:00+03'::text) = timestamptz '2024-01-01 07:00+00' AS text_with_zone;
SET TimeZone = 'UTC';
-- A text time is read under DateStyle 'ISO, MDY' and, without a zone, as UTC,
-- whatever the writer set: a DMY writer's '03/04/2024 11:00' is the 4th of March,
-- an hour after row 1 (inside the window), and the analyst reading agrees.
CREATE TABLE wtstyle (id int PRIMARY KEY, pub text, body text);
SELECT dedup.enable('wtstyle', 'body', published_at => 'pub', time_window => interval '2 hours');
INSERT INTO wtstyle VALUES (1, '2024-03-04 10:00', story(13));
SET DateStyle = 'ISO, DMY';
SET TimeZone = 'Asia/Tokyo';
INSERT INTO wtstyle VALUES (2, '03/04/2024 11:00', story(13));
SELECT id, duplicate_of FROM wtstyle ORDER BY id;
SELECT dedup._published('03/04/2024 11:00'::text) = timestamptz '2024-03-04 11:00+00' AS text_mdy_utc;
SELECT count(*) AS pairs_in_window FROM dedup.pairs('wtstyle');
RESET DateStyle;
SET TimeZone = 'UTC';
SELECT dedup._table_document_left_out() AS left_out_outside_a_backfill;
DROP TABLE wtext, winf, wts, wpinf, wpdate, wtstyle;
DROP TABLE wnews, wflat, wnot, dnews;
DROP ROLE regress_dedup_wother;
DROP FUNCTION story(int);
RESET TimeZone;

-- Times at the ends of timestamptz's range, and a window of millions of years:
-- the analyst functions compare distances, which cannot overflow (a row at
-- 294276 AD failed pairs, groups and matrix_quality for the table with 22008).
CREATE TABLE win_edge (id int PRIMARY KEY, body text, pub timestamptz);
SELECT dedup.enable('win_edge', 'body', published_at => 'pub', time_window => '1 day');
INSERT INTO win_edge VALUES
 (1, 'Новость номер 5 о том, что курс доллара вырос до 5 рублей на бирже', '294276-12-31 23:59:59+00'),
 (2, 'Новость номер 5 о том, что курс доллара вырос до 5 рублей на бирже', '294276-12-31 23:00:59+00'),
 (3, 'Новость номер 5 о том, что курс доллара вырос до 5 рублей на бирже', '4714-11-24 00:00:00+00 BC'),
 (4, 'Новость номер 5 о том, что курс доллара вырос до 5 рублей на бирже', '4714-11-24 01:00:00+00 BC');
SELECT id, duplicate_of FROM win_edge ORDER BY id;
SELECT a, b, verdict FROM dedup.pairs('win_edge') ORDER BY a, b;
SELECT key, group_id, is_original FROM dedup.groups('win_edge') ORDER BY key;
SELECT pairs FROM dedup.matrix_quality('win_edge');
SELECT dedup.set_time_window('win_edge', '178000000 years');
SELECT count(*) AS pairs FROM dedup.pairs('win_edge');
SELECT dedup.disable('win_edge');
DROP TABLE win_edge;
