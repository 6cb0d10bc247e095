-- Pair features, SVM models, classification, explanation, evaluation, export/import.
BEGIN;
SELECT dedup.feature_names();
SELECT dedup.create_collection('m');

-- 40 labelled pairs built from 20 short news texts: a cut or lightly edited
-- reprint (duplicate of the original), or another story (distinct).
CREATE TEMP TABLE stories AS
SELECT i, format('Новость номер %s: %s сообщил о решении по проекту %s. %s будет построен к %s году. '
                 'Стоимость работ составит %s млн рублей. Жители района %s обсуждают изменения.',
                 i, (ARRAY['Мэр','Губернатор','Министр','Директор','Депутат'])[1 + i % 5],
                 (ARRAY['мост','стадион','парк','театр','вокзал','музей','рынок'])[1 + i % 7],
                 (ARRAY['Объект','Комплекс','Центр'])[1 + i % 3], 2024 + i % 6, 100 + i * 37,
                 (ARRAY['Арбат','Хамовники','Сокол','Марьино'])[1 + i % 4]) AS body
FROM generate_series(1, 20) i;
CREATE TEMP TABLE docs AS SELECT i, dedup.to_document(body, 'Заголовок ' || i) AS doc FROM stories;
SELECT dedup.recompute('docs', 'doc', 'm');
CREATE TEMP TABLE labelled AS
SELECT dedup.to_document(regexp_replace(s.body, ' Жители.*$', ''), 'Заголовок ' || s.i) AS a, d.doc AS b,
       true AS a_dup_b, false AS b_dup_a FROM stories s JOIN docs d USING (i)
UNION ALL
SELECT d1.doc, d2.doc, false, false FROM docs d1 JOIN docs d2 ON d2.i = d1.i % 20 + 1;

-- ρ is asymmetric: the cut copy adds nothing to the original, not the reverse.
SELECT f.name, round(ab::numeric, 4) AS ab, round(ba::numeric, 4) AS ba
FROM (SELECT a, b FROM labelled LIMIT 1) p,
     unnest(dedup.feature_names(), dedup.compare(p.a, p.b, 'm'), dedup.compare(p.b, p.a, 'm')) AS f(name, ab, ba);

-- An infinite publication time is no time: the time features are unknown.
SELECT f.name, ab FROM unnest(dedup.feature_names(),
         dedup.compare(dedup.to_document('Мост откроют весной', published_at => 'infinity'),
                       dedup.to_document('Мост откроют весной', published_at => '-infinity'), 'm')) AS f(name, ab)
 WHERE f.name IN ('time', 'time_gap');
SELECT dedup.summary(dedup.to_document('Мост', published_at => 'infinity'))->'published_at' AS published_at;

-- Bad training input.
SELECT err($$SELECT dedup.train('x', 'm', 'SELECT a, b, a_dup_b, b_dup_a FROM labelled LIMIT 4')$$);
SELECT err($$SELECT dedup.train('x', 'm', 'SELECT a, a, false, false FROM labelled')$$);
SELECT err($$SELECT dedup.train('x', 'm', 'SELECT a, b, a_dup_b, b_dup_a FROM labelled', '{"kernel": "poly"}')$$);
SELECT err($$SELECT dedup.train('x', 'm', 'SELECT a, b, a_dup_b, b_dup_a FROM labelled', '{"features": ["nope"]}')$$);
SELECT err($$SELECT dedup.train('x', 'm', 'SELECT 1')$$);
SELECT err($$SELECT dedup.train('x', 'm', 'SELECT 1, 2, true, false FROM generate_series(1, 20)')$$);
SELECT err($$SELECT dedup.train('x', 'm', 'SELEC nonsense')$$);
SELECT err($$SELECT dedup.train('x', 'nope', 'SELECT a, b, a_dup_b, b_dup_a FROM labelled')$$);

-- Train a linear and an rbf model.
SELECT r->'version' AS version, r->'kernel' AS kernel, r->'pairs' AS pairs, (r->'cv'->>'f1')::float8 > 0.8 AS cv_f1_ok
FROM dedup.train('news', 'm', 'SELECT a, b, a_dup_b, b_dup_a FROM labelled', '{"folds": 4}') r;
SELECT r->'version' AS version, r->'kernel' AS kernel
FROM dedup.train('news', 'm', 'SELECT a, b, a_dup_b, b_dup_a FROM labelled', '{"folds": 4, "C": 10}') r;
SELECT (dedup.train('news_rbf', 'm', 'SELECT a, b, a_dup_b, b_dup_a FROM labelled', '{"kernel": "rbf", "folds": 0}'))->'kernel';
SELECT name, collection, kernel, version, features FROM dedup.models ORDER BY name;

-- The four verdicts from both directions.
SELECT dedup.classify_pair('news', a, b) AS cut_vs_original, dedup.classify_pair('news', b, a) AS original_vs_cut,
       dedup.classify_pair('news', b, b) AS same, dedup.pair_score('news', a, b) > 0 AS score_positive
FROM labelled WHERE a_dup_b LIMIT 1;
SELECT dedup.classify_pair('news', a, b) AS other_story FROM labelled WHERE NOT a_dup_b LIMIT 1;
SELECT dedup.classify_pair('news_rbf', a, b) AS rbf FROM labelled WHERE a_dup_b LIMIT 1;

-- Linear contributions are exact: decision − Σ contributions is the same bias in
-- both directions.
SELECT count(*) AS features,
       abs((max(p.sab) - sum(e.contribution_ab)) - (max(p.sba) - sum(e.contribution_ba))) < 1e-9 AS same_bias
FROM (SELECT a, b, dedup.pair_score('news', a, b) AS sab, dedup.pair_score('news', b, a) AS sba
      FROM labelled WHERE a_dup_b LIMIT 1) p,
     dedup.explain_pair('news', p.a, p.b) e;

SELECT tp, fp, fn, tn, precision > 0.8 AS p_ok, recall > 0.8 AS r_ok
FROM dedup.evaluate('news', 'SELECT a, b, a_dup_b, b_dup_a FROM labelled');
SELECT err($$SELECT * FROM dedup.evaluate('nope', 'SELECT a, b, a_dup_b, b_dup_a FROM labelled')$$);
-- A NULL label is unknown: that direction is not scored (nor trained on), and
-- a pair with both labels NULL is skipped.
SELECT (SELECT tp + fp + fn + tn FROM dedup.evaluate('news', 'SELECT a, b, a_dup_b, NULL::boolean FROM labelled')) AS one_way,
       (SELECT tp + fp + fn + tn FROM dedup.evaluate('news', 'SELECT a, b, NULL::boolean, NULL::boolean FROM labelled')) AS none,
       (SELECT count(*) FROM labelled) AS pairs;
SELECT total_pairs FROM dedup.filter_quality('SELECT a, b, ''news'', NULL::boolean FROM labelled');
SELECT err($$SELECT * FROM dedup.filter_quality('SELECT a, b, ''news'', 1 FROM labelled')$$);
SELECT err($$SELECT dedup.classify_pair('nope', '{"v":1}', '{"v":1}')$$);

-- Export and import move a model; corrupt bytes give a clear error.
CREATE TEMP TABLE exported AS SELECT dedup.export_model('news') AS j;
SELECT j->>'name' AS name, j->>'kernel' AS kernel, left(j->>'model', 8) AS header FROM exported;
SELECT dedup.import_model(jsonb_set(j, '{name}', '"news_copy"')) FROM exported;
SELECT dedup.classify_pair('news_copy', a, b) FROM labelled WHERE a_dup_b LIMIT 1;
SELECT err($$SELECT dedup.import_model(jsonb_set(j, '{model}', '"50474 44d01"')) FROM exported$$);
SELECT err($$SELECT dedup.import_model(jsonb_set(j, '{model}', to_jsonb(left(j->>'model', 40)))) FROM exported$$);
SELECT err($$SELECT dedup.import_model('{"name": "x"}')$$);
SELECT err($$SELECT dedup.import_model(j || '{"nmae": "typo"}') FROM exported$$);
SELECT err($$SELECT dedup.import_model('[1]')$$);
SELECT err($$SELECT dedup.import_model(jsonb_set(j, '{name}', '"  "')) FROM exported$$);
SELECT err($$SELECT dedup.create_collection(E' \t')$$);
SELECT dedup.import_model(dedup.export_model('default') || '{"name": "builtin_copy"}');
DELETE FROM dedup.models WHERE name = 'builtin_copy';
SELECT err($$SELECT dedup.import_model(jsonb_set(j, '{name}', '1')) FROM exported$$);
SELECT err($$SELECT dedup.import_model(jsonb_set(j, '{format}', '"pg_dedup model v9"')) FROM exported$$);
-- The bytes decide the kernel: an export that says otherwise is refused; the
-- threshold rule's name cannot be a model's.
SELECT err($$SELECT dedup.import_model(jsonb_set(j, '{kernel}', '"poly"')) FROM exported$$);
-- So do they the scaler; the descriptive fields must be of their kind (metrics
-- and parameters objects, a positive version, a time PostgreSQL reads).
SELECT err($$SELECT dedup.import_model(jsonb_set(j, '{scaler,std,0}', '-1')) FROM exported$$);
SELECT err($$SELECT dedup.import_model(jsonb_set(j, '{scaler}', '{}')) FROM exported$$);
SELECT err($$SELECT dedup.import_model(jsonb_set(j, '{metrics}', '"x"')) FROM exported$$);
SELECT err($$SELECT dedup.import_model(jsonb_set(j, '{parameters}', '[1]')) FROM exported$$);
SELECT err($$SELECT dedup.import_model(jsonb_set(j, '{version}', '-7')) FROM exported$$);
SELECT err($$SELECT dedup.import_model(jsonb_set(j, '{trained_at}', '"x"')) FROM exported$$);
SELECT err($$SELECT dedup.import_model(jsonb_set(j, '{trained_at}', '"2024-01-01 00:00+16:00"')) FROM exported$$);
SELECT err($$SELECT dedup.import_model(jsonb_set(j, '{trained_at}', '"infinity"')) FROM exported$$);
SELECT err($$SELECT dedup.import_model(j || '{"trained_on": 5}') FROM exported$$);
SELECT dedup.import_model(jsonb_set(jsonb_set(j, '{name}', '"news_round"'), '{scaler}', (j->'scaler')::text::jsonb)) FROM exported;
DELETE FROM dedup.models WHERE name = 'news_round';
SELECT err($$SELECT dedup.import_model(jsonb_set(j, '{name}', '"threshold"')) FROM exported$$);
-- The bytes must read this build's pair vector: a feature index past it, or one
-- read twice, is refused (such a model read 0 for ever and marked every row), and
-- so is an export whose "features" names others than its bytes read. (The bytes:
-- a 6-byte header, the feature count, then one byte per index below 251.)
SELECT err($$SELECT dedup.import_model(jsonb_set(j, '{model}', to_jsonb(overlay(j->>'model' placing '64' from 15 for 2)))) FROM exported$$);
SELECT err($$SELECT dedup.import_model(jsonb_set(j, '{model}', to_jsonb(overlay(j->>'model' placing substr(j->>'model', 17, 2) from 15 for 2)))) FROM exported$$);
SELECT err($$SELECT dedup.import_model(jsonb_set(j, '{features}', '["bogus"]')) FROM exported$$);
SELECT err($$SELECT dedup.export_model('nope')$$);
-- Changing the stored bytes bumps the version, so the backend cache reloads them.
UPDATE dedup.models SET model = '\x50474449'::bytea WHERE name = 'news_copy';
SELECT version FROM dedup.models WHERE name = 'news_copy';
SELECT err($$SELECT dedup.classify_pair('news_copy', '{"v":1}', '{"v":1}')$$);

-- A collection a stored model was trained on stays while the model does: its
-- statistics weigh the pairs the model judges.
SELECT err($$SELECT dedup.drop_collection('m')$$);

-- The built-in model moves like a stored one: its export names the collection
-- "default", which need not exist, and judges alike once imported.
SELECT dedup.import_model(dedup.export_model('default') || '{"name": "builtin_copy"}');
SELECT bool_and(dedup.classify_pair('builtin_copy', a, b) = dedup.classify_pair('default', a, b)) AS same_verdicts,
       bool_and(dedup.pair_score('builtin_copy', a, b) = dedup.pair_score('default', a, b)) AS same_scores
FROM labelled;

-- The threshold rule judges pairs too, by name, with no statistics; it has no
-- per-feature contributions to explain.
SELECT dedup.classify_pair('threshold', a, b) AS cut_copy, dedup.pair_score('threshold', a, b) > 0 AS a_dup_b
FROM labelled WHERE a_dup_b LIMIT 1;
SELECT tp + fp + fn + tn AS examples FROM dedup.evaluate('threshold', 'SELECT a, b, a_dup_b, b_dup_a FROM labelled');
SELECT err($$SELECT * FROM dedup.explain_pair('threshold', '{"v":1}', '{"v":1}')$$);

-- A pairs query is read through a cursor: training stops reading one pair past
-- its limit, and what is no SELECT is refused as such.
SELECT err($$SELECT dedup.train('x', 'm', 'SELECT a, b, a_dup_b, b_dup_a FROM labelled, generate_series(1, 1000000)')$$);
SELECT err($$SELECT dedup.train('x', 'm', 'INSERT INTO labelled SELECT * FROM labelled RETURNING *')$$);
-- Also when the transaction has written already (pgrx then opens cursors read-write).
SELECT err($$WITH w AS (INSERT INTO labelled SELECT * FROM labelled LIMIT 1 RETURNING 1) SELECT dedup.train('x', 'm', 'DELETE FROM labelled RETURNING *') FROM w$$);
SELECT count(*) AS labelled_kept FROM labelled;
SELECT tp + fp + fn + tn AS examples FROM dedup.evaluate('news', 'SELECT a, b, a_dup_b, b_dup_a FROM labelled, generate_series(1, 10)');

-- A model deleted and trained again under its name is judged anew, though its
-- version starts at 1 again; a model an enabled table uses cannot be deleted.
SELECT dedup.train('cache_m', 'm', 'SELECT a, b, a_dup_b, b_dup_a FROM labelled', '{"folds": 0, "C": 10}') IS NOT NULL AS trained;
CREATE TEMP TABLE cache_s AS SELECT dedup.pair_score('cache_m', a, b) AS s FROM labelled WHERE a_dup_b LIMIT 1;
DELETE FROM dedup.models WHERE name = 'cache_m';
SELECT dedup.train('cache_m', 'm', 'SELECT a, b, a_dup_b, b_dup_a FROM labelled', '{"folds": 0, "C": 0.01}') IS NOT NULL AS trained;
SELECT (SELECT s FROM cache_s) <> dedup.pair_score('cache_m', a, b) AS judged_anew, version
FROM labelled, dedup.models WHERE a_dup_b AND name = 'cache_m' LIMIT 1;
CREATE TABLE uses_m (id int PRIMARY KEY, body text);
SELECT dedup.enable('uses_m', 'body', model => 'cache_m');
SELECT err($$DELETE FROM dedup.models WHERE name = 'cache_m'$$);
SELECT err($$UPDATE dedup.models SET name = 'cache_x' WHERE name = 'cache_m'$$);
SELECT err($$TRUNCATE dedup.models$$);
SET session_replication_role = replica;
SELECT err($$DELETE FROM dedup.models WHERE name = 'cache_m'$$);
SELECT err($$TRUNCATE dedup.models$$);
RESET session_replication_role;
SELECT count(*) > 0 AS models_kept FROM dedup.models WHERE name = 'cache_m';
-- The configuration triggers fire in a replica-role session too (they empty the
-- other backends' caches; see tests/isolation).
SELECT c.relname, t.tgname, t.tgenabled FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
WHERE c.relnamespace = 'dedup'::regnamespace AND t.tgname IN ('config_changed', 'models_version', 'models_in_use', 'models_truncated')
ORDER BY 1, 2;
SELECT dedup.disable('uses_m');
DROP TABLE uses_m;
DELETE FROM dedup.models WHERE name = 'cache_m';

-- Source authority: each source's share of originals.
SELECT dedup.learn_authority('m', $$
  SELECT dedup.to_document('копия', source => 'copier'), dedup.to_document('оригинал', source => 'agency'), true, false
  FROM generate_series(1, 3)
  UNION ALL SELECT dedup.to_document('x', source => 'agency'), dedup.to_document('y', source => 'copier'), true, false $$);
SELECT source, authority FROM dedup.sources ORDER BY source;
ROLLBACK;

-- 'threshold' names the threshold rule wherever a model is named: enable's model,
-- a model_column value, pairs' model. No model may take the name.
SELECT err($$SELECT dedup.train('threshold', 'default', 'SELECT NULL::dedup.document, NULL::dedup.document, true, true')$$);
CREATE TABLE rule_t (id int PRIMARY KEY, body text, m text);
SELECT dedup.enable('rule_t', 'body', model_column => 'm');
INSERT INTO rule_t VALUES (1, 'Курс доллара на Московской бирже вырос до 92 рублей после решения ЦБ.', 'threshold'),
                          (2, 'Курс доллара на Московской бирже вырос до 92 рублей после решения ЦБ.', 'threshold');
SELECT id, duplicate_of FROM rule_t ORDER BY id;
SELECT a, b FROM dedup.pairs('rule_t', 'threshold');
-- Deleting a stored model warns while tables pick models per row: rows that name
-- it are refused from then on.
SELECT dedup.import_model(dedup.export_model('default') || '{"name": "rule_m"}');
DELETE FROM dedup.models WHERE name = 'rule_m';
SELECT dedup.disable('rule_t');
DROP TABLE rule_t;
CREATE TABLE act_t (id int PRIMARY KEY, body text);
SELECT err($$SELECT dedup.enable('act_t', 'body', action => NULL)$$);
DROP TABLE act_t;

-- An exact copy is a duplicate whatever the model: the built-in model alone keeps
-- an identical text published 15 days later apart (its time features), and a
-- template with another number stays apart.
CREATE TABLE exact_t (id int PRIMARY KEY, body text, published timestamptz);
SELECT dedup.enable('exact_t', 'body', published_at => 'published');
INSERT INTO exact_t VALUES
  (1, 'Центробанк повысил ключевую ставку до 21 процента годовых, сообщила пресс-служба регулятора. Решение совет директоров принял единогласно.', '2024-01-05'),
  (2, 'Центробанк повысил ключевую ставку до 21 процента годовых, сообщила пресс-служба регулятора. Решение совет директоров принял единогласно.', '2024-01-20'),
  (3, 'ЦЕНТРОБАНК повысил ключевую ставку до 21 процента годовых — сообщила пресс-служба регулятора! Решение совет директоров принял единогласно', '2024-03-02'),
  (4, 'Центробанк повысил ключевую ставку до 22 процентов годовых, сообщила пресс-служба регулятора. Решение совет директоров принял единогласно.', '2024-03-03');
SELECT id, duplicate_of, dedup_verdict FROM exact_t ORDER BY id;
SELECT a, b, verdict, score >= 1 AS at_least_one FROM dedup.pairs('exact_t') ORDER BY a, b;
SELECT dedup.classify_pair('default', a.dedup_doc, b.dedup_doc), dedup.pair_score('default', a.dedup_doc, b.dedup_doc) >= 1
  FROM exact_t a, exact_t b WHERE a.id = 1 AND b.id = 2;
SELECT dedup.classify_pair('default', a.dedup_doc, b.dedup_doc) FROM exact_t a, exact_t b WHERE a.id = 1 AND b.id = 4;
SELECT dedup.is_duplicate('exact_t', body, published_at => '2025-01-01') FROM exact_t WHERE id = 1;
SELECT key, verdict FROM dedup.find_original('exact_t', dedup.to_document((SELECT body FROM exact_t WHERE id = 1), published_at => '2025-01-01'))
 ORDER BY score DESC LIMIT 1;
-- What the time features say alone, as explain_pair shows it: against.
SELECT contribution_ab < 0 AS time_gap_against
  FROM exact_t a, exact_t b, dedup.explain_pair('default', a.dedup_doc, b.dedup_doc) e
 WHERE a.id = 2 AND b.id = 1 AND e.feature = 'time_gap';
SELECT dedup.disable('exact_t');
DROP TABLE exact_t;
-- A penalty past 1e3 is refused: the fit would run for minutes (in the
-- background once stopped: see svm::parallel_map), and so is one below 1e-6.
SELECT dedup.create_collection('too_hard_c');
SELECT err($$SELECT dedup.train('too_hard', 'too_hard_c', 'SELECT a, b, a_dup_b, b_dup_a FROM labelled', '{"C": 1e4}')$$);
SELECT err($$SELECT dedup.train('too_hard', 'too_hard_c', 'SELECT a, b, a_dup_b, b_dup_a FROM labelled', '{"C": 1, "class_weights": {"pos": 1e-320}}')$$);
SELECT dedup.drop_collection('too_hard_c');
-- A feature far past the values the model was trained on counts at most 5
-- standard deviations: the built-in model's `time` (seconds, trained on pairs
-- days apart) gave two unrelated texts of one template, 700 days apart, +13 and
-- marked the later a duplicate of the earlier.
SELECT feature, round(value_ab::numeric, 1) AS value_ab, round(contribution_ab::numeric, 3) AS contribution_ab
FROM dedup.explain_pair('default',
  dedup.to_document('Permission is hereby granted to the mayor of Novosibirsk to open a new metro station on the left bank, provided that the works end by autumn.', NULL, timestamptz '2026-12-20', NULL),
  dedup.to_document('Permission is hereby granted to the city council of Kazan to repair tram lines on Bauman street, provided that the repair is finished by winter.', NULL, timestamptz '2025-01-20', NULL))
WHERE feature = 'time';
SELECT dedup.pair_score('default',
  dedup.to_document('Permission is hereby granted to the mayor of Novosibirsk to open a new metro station on the left bank, provided that the works end by autumn.', NULL, timestamptz '2026-12-20', NULL),
  dedup.to_document('Permission is hereby granted to the city council of Kazan to repair tram lines on Bauman street, provided that the repair is finished by winter.', NULL, timestamptz '2025-01-20', NULL)) < 0 AS distinct_far_apart;
