-- Candidates ruled out before weighing (dedup.prune_candidates, on by default): the
-- trigger, find_original and is_duplicate decide exactly as when every candidate
-- is weighed, with a linear model and with the threshold rule.
SET client_min_messages = warning;
SELECT dedup.create_collection('prune_train');
CREATE TEMP TABLE stories AS
SELECT i,
       format('%s %s заявил о решении по проекту %s. ', (ARRAY['Мэр','Губернатор','Министр','Директор','Депутат'])[1 + i % 5],
              (ARRAY['Москвы','области','края','района'])[1 + i % 4], (ARRAY['моста','стадиона','парка','театра','вокзала','музея','рынка'])[1 + i % 7])
       || format('%s построят к %s году, стоимость работ составит %s млн рублей. ', (ARRAY['Объект','Комплекс','Центр'])[1 + i % 3], 2024 + i % 6, 100 + i * 37)
       || (ARRAY['Жители района обсуждают изменения на собраниях. ', 'Эксперты сомневаются в реалистичности сроков строительства. ',
                 'Подрядчик уже выбран по итогам открытого конкурса. ', 'Общественники требуют провести слушания заново. ',
                 'Проект вызвал споры в городской думе. '])[1 + i % 5]
       || (ARRAY['Погода в выходные будет солнечной и теплой.', 'Футбольный клуб сыграет домашний матч в субботу.',
                 'В городе откроются новые школы и поликлиники.', 'Цены на бензин снова выросли за неделю.',
                 'Музей продлил выставку современного искусства.', 'Транспорт будет ходить по особому расписанию.'])[1 + i % 6] AS body
FROM generate_series(1, 40) i;
CREATE TEMP TABLE train_docs AS SELECT i, dedup.to_document(body, 'Новость ' || i) AS doc FROM stories;
SELECT dedup.recompute('train_docs', 'doc', 'prune_train') > 0 AS recomputed;
CREATE TEMP TABLE labelled AS
SELECT dedup.to_document(regexp_replace(s.body, '[^.]*\.$', ''), 'Новость ' || s.i) AS a, d.doc AS b, true AS a_dup_b, false AS b_dup_a
FROM stories s JOIN train_docs d USING (i) WHERE s.i <= 20
UNION ALL
SELECT d1.doc, d2.doc, false, false FROM train_docs d1 JOIN train_docs d2 ON d2.i = d1.i % 40 + 1;
-- Over the first 18 features: a model whose bounds leave candidates to weigh again
-- below (the later features are exact on the new row's side only).
SELECT (dedup.train('prune_linear', 'prune_train', 'SELECT a, b, a_dup_b, b_dup_a FROM labelled',
                    '{"folds": 0, "features": [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]}'))->'kernel' AS kernel;

-- A stream: each story, then a cut copy, a copy with a sentence added (the new row
-- includes the old: "it duplicates new"), a copy with other numbers, or nothing.
CREATE TEMP TABLE stream AS
SELECT row_number() OVER (ORDER BY i, k)::int AS id, 'Новость ' || i AS title, body FROM (
    SELECT i, 0 AS k, body FROM stories
    UNION ALL
    SELECT i, 1, CASE i % 4
        WHEN 0 THEN regexp_replace(body, '[^.]*\.$', '')
        WHEN 1 THEN body || ' Об этом сообщили в пресс-службе ведомства в понедельник утром.'
        WHEN 2 THEN replace(replace(body, (100 + i * 37)::text, (900 + i)::text), (2024 + i % 6)::text, '2031') END
    FROM stories WHERE i % 4 <> 3) s;
SELECT count(*) AS stream_rows FROM stream;

CREATE FUNCTION pg_temp.same(a regclass, b regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    EXECUTE format('SELECT (SELECT count(*) FROM (SELECT id, duplicate_of, dedup_verdict FROM %1$s EXCEPT ALL SELECT id, duplicate_of, dedup_verdict FROM %2$s) d) '
                   '+ (SELECT count(*) FROM (SELECT id, duplicate_of, dedup_verdict FROM %2$s EXCEPT ALL SELECT id, duplicate_of, dedup_verdict FROM %1$s) d)', a, b) INTO n;
    RETURN n;
END $$;

-- Linear model: pruned and unpruned inserts of the same stream.
CREATE TABLE lin_on (id int PRIMARY KEY, title text, body text);
CREATE TABLE lin_off (id int PRIMARY KEY, title text, body text);
SELECT dedup.enable('lin_on', 'body', title => 'title', model => 'prune_linear');
SELECT dedup.enable('lin_off', 'body', title => 'title', model => 'prune_linear');
CREATE TEMP TABLE c0 AS SELECT * FROM dedup._candidate_counts();
INSERT INTO lin_on SELECT * FROM stream ORDER BY id;
CREATE TEMP TABLE c1 AS SELECT * FROM dedup._candidate_counts();
SET dedup.prune_candidates = off;
INSERT INTO lin_off SELECT * FROM stream ORDER BY id;
CREATE TEMP TABLE c2 AS SELECT * FROM dedup._candidate_counts();
RESET dedup.prune_candidates;
SELECT dedup_verdict, count(*) FROM lin_on GROUP BY 1 ORDER BY 1;
SELECT pg_temp.same('lin_on', 'lin_off') AS rows_that_differ,
       c1.pruned - c0.pruned > 0 AS some_pruned, c1.pruned - c0.pruned < c1.examined - c0.examined AS some_weighed,
       c2.pruned = c1.pruned AS none_pruned_when_off
FROM c0, c1, c2;
-- find_original and is_duplicate, pruned and not, on the stream's texts against lin_on.
CREATE TEMP TABLE fo_on AS SELECT s.id, f.* FROM stream s, dedup.find_original('lin_on', dedup.to_document(s.body, s.title)) f;
CREATE TEMP TABLE isd_on AS SELECT id, dedup.is_duplicate('lin_on', body, title) AS d FROM stream;
SET dedup.prune_candidates = off;
CREATE TEMP TABLE fo_off AS SELECT s.id, f.* FROM stream s, dedup.find_original('lin_on', dedup.to_document(s.body, s.title)) f;
CREATE TEMP TABLE isd_off AS SELECT id, dedup.is_duplicate('lin_on', body, title) AS d FROM stream;
RESET dedup.prune_candidates;
SELECT (SELECT count(*) FROM fo_on) AS find_original_rows,
       (SELECT count(*) FROM (TABLE fo_on EXCEPT ALL TABLE fo_off) d) + (SELECT count(*) FROM (TABLE fo_off EXCEPT ALL TABLE fo_on) d) AS find_original_differs,
       (SELECT count(*) FROM isd_on WHERE d) AS duplicates,
       (SELECT count(*) FROM isd_on JOIN isd_off USING (id) WHERE isd_on.d IS DISTINCT FROM isd_off.d) AS is_duplicate_differs;

-- A model kept across statements is dropped from the cache when another session
-- changes dedup.models: this session's next statement sees the change.
SELECT dedup.is_duplicate('lin_on', 'Мэр объявил закон.') AS model_cached;
CREATE TABLE prune_saved AS SELECT model FROM dedup.models WHERE name = 'prune_linear';
\! psql -X -q -d pg_dedup_regress -c "UPDATE dedup.models SET model = '\\x50474449'::bytea WHERE name = 'prune_linear'"
SELECT err($$SELECT dedup.is_duplicate('lin_on', 'Мэр объявил закон.')$$);
\! psql -X -q -d pg_dedup_regress -c "UPDATE dedup.models SET model = (SELECT model FROM prune_saved) WHERE name = 'prune_linear'"
DROP TABLE prune_saved;
SELECT dedup.is_duplicate('lin_on', 'Мэр объявил закон.') AS model_back;

-- The threshold rule.
CREATE TABLE rule_on (id int PRIMARY KEY, title text, body text);
CREATE TABLE rule_off (id int PRIMARY KEY, title text, body text);
SELECT dedup.enable('rule_on', 'body', title => 'title', model => 'threshold');
SELECT dedup.enable('rule_off', 'body', title => 'title', model => 'threshold');
CREATE TEMP TABLE c3 AS SELECT * FROM dedup._candidate_counts();
INSERT INTO rule_on SELECT * FROM stream ORDER BY id;
CREATE TEMP TABLE c4 AS SELECT * FROM dedup._candidate_counts();
SET dedup.prune_candidates = off;
INSERT INTO rule_off SELECT * FROM stream ORDER BY id;
RESET dedup.prune_candidates;
SELECT dedup_verdict, count(*) FROM rule_on GROUP BY 1 ORDER BY 1;
SELECT pg_temp.same('rule_on', 'rule_off') AS rows_that_differ, c4.pruned - c3.pruned > 0 AS some_pruned FROM c3, c4;

-- The built-in model, pruned and not.
CREATE TABLE def_on (id int PRIMARY KEY, title text, body text);
CREATE TABLE def_off (id int PRIMARY KEY, title text, body text);
SELECT dedup.enable('def_on', 'body', title => 'title');
SELECT dedup.enable('def_off', 'body', title => 'title');
CREATE TEMP TABLE c5 AS SELECT * FROM dedup._candidate_counts();
INSERT INTO def_on SELECT * FROM stream ORDER BY id;
CREATE TEMP TABLE c6 AS SELECT * FROM dedup._candidate_counts();
SET dedup.prune_candidates = off;
INSERT INTO def_off SELECT * FROM stream ORDER BY id;
RESET dedup.prune_candidates;
SELECT dedup_verdict, count(*) FROM def_on GROUP BY 1 ORDER BY 1;
SELECT pg_temp.same('def_on', 'def_off') AS rows_that_differ, c6.pruned - c5.pruned > 0 AS some_pruned FROM c5, c6;

-- Random sets of 3 to 6 sentences from a pool of 60, with cut copies and copies
-- extended by a sentence: many candidates share a sentence or two, and some rows
-- that duplicate nothing are duplicated by a candidate, so candidates ruled out
-- are weighed after all to find the closest (reweighed > 0). Same verdicts.
CREATE TEMP TABLE pool AS
SELECT k, format('%s %s %s %s %s.',
   (ARRAY['Мэр','Губернатор','Министр','Директор','Депутат','Премьер','Сенатор'])[1 + k % 7],
   (ARRAY['объявил','подписал','обсудил','отменил','предложил'])[1 + (k / 7) % 5],
   (ARRAY['закон','указ','проект','бюджет','план','договор'])[1 + (k / 3) % 6],
   (ARRAY['о строительстве дорог','о ремонте школ','о налогах','о выборах','о транспорте','о медицине','о спорте','о культуре'])[1 + (k * 5) % 8],
   (ARRAY['в понедельник','во вторник','в среду','в четверг','в пятницу'])[1 + (k * 3) % 5]) AS s
FROM generate_series(0, 59) k;
CREATE TEMP TABLE base AS
SELECT i, array_agg(s ORDER BY j) AS ss
FROM generate_series(1, 300) i, LATERAL (SELECT j, abs(hashtext(i || '-' || j)) % 60 AS k FROM generate_series(1, 3 + i % 4) j) q
JOIN pool USING (k) GROUP BY i;
CREATE TEMP TABLE mix AS
SELECT i AS id, 'Новость' AS title,
       CASE WHEN i % 3 = 0 THEN array_to_string(ss[1:cardinality(ss) - 1], ' ')
            WHEN i % 3 = 1 AND i > 10 THEN array_to_string((SELECT b.ss FROM base b WHERE b.i = base.i - 7) || ss[1:1], ' ')
            ELSE array_to_string(ss, ' ') END AS body
FROM base;
CREATE FUNCTION pg_temp.mix_differs(model text) RETURNS TABLE(verdicts text, rows_that_differ bigint, some_pruned boolean, some_reweighed boolean)
LANGUAGE plpgsql AS $$
DECLARE c0 record; c1 record;
BEGIN
    CREATE TABLE mix_on (id int PRIMARY KEY, title text, body text);
    CREATE TABLE mix_off (id int PRIMARY KEY, title text, body text);
    PERFORM dedup.enable('mix_on', 'body', model => model);
    PERFORM dedup.enable('mix_off', 'body', model => model);
    SELECT * INTO c0 FROM dedup._candidate_counts();
    INSERT INTO mix_on SELECT * FROM mix ORDER BY id;
    SELECT * INTO c1 FROM dedup._candidate_counts();
    SET LOCAL dedup.prune_candidates = off;
    INSERT INTO mix_off SELECT * FROM mix ORDER BY id;
    SET LOCAL dedup.prune_candidates = on;
    verdicts := (SELECT string_agg(v || ' ' || n, ', ' ORDER BY v) FROM (SELECT dedup_verdict::text AS v, count(*) AS n FROM mix_on GROUP BY 1) x);
    rows_that_differ := pg_temp.same('mix_on', 'mix_off');
    some_pruned := c1.pruned > c0.pruned;
    some_reweighed := c1.reweighed > c0.reweighed;
    PERFORM dedup.disable('mix_on'), dedup.disable('mix_off');
    DROP TABLE mix_on, mix_off;
    RETURN NEXT;
END $$;
SELECT * FROM pg_temp.mix_differs(NULL);
SELECT * FROM pg_temp.mix_differs('prune_linear');

-- An RBF model gives no bound: nothing is pruned.
SELECT (dedup.train('prune_rbf', 'prune_train', 'SELECT a, b, a_dup_b, b_dup_a FROM labelled', '{"folds": 0, "kernel": "rbf"}'))->'kernel' AS kernel;
UPDATE dedup.enabled_tables SET model = 'prune_rbf' WHERE tbl = 'lin_on'::regclass;
CREATE TEMP TABLE c5 AS SELECT * FROM dedup._candidate_counts();
SELECT count(*) FILTER (WHERE d) AS rbf_duplicates FROM (SELECT dedup.is_duplicate('lin_on', body, title) AS d FROM stream) s;
SELECT c6.pruned = c5.pruned AS none_pruned, c6.examined > c5.examined AS some_examined
FROM c5, dedup._candidate_counts() c6;

SELECT dedup.disable(t) FROM unnest(ARRAY['lin_on', 'lin_off', 'rule_on', 'rule_off']::regclass[]) t;
DROP TABLE lin_on, lin_off, rule_on, rule_off;
DELETE FROM dedup.models WHERE name IN ('prune_linear', 'prune_rbf');
SELECT dedup.drop_collection('prune_train');
RESET client_min_messages;
