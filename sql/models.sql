-- SVM models and source authority.

CREATE TABLE dedup.models (
    name        text PRIMARY KEY CHECK (name <> ''),
    collection  text NOT NULL,
    features    text[] NOT NULL,
    kernel      text NOT NULL CHECK (kernel IN ('linear', 'rbf')),
    parameters  jsonb NOT NULL,
    scaler      jsonb NOT NULL,
    model       bytea NOT NULL,
    metrics     jsonb NOT NULL,
    version     int NOT NULL DEFAULT 1,
    trained_at  timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE dedup.models IS
    'Trained pair classifiers: model bytes are serde+bincode behind a "PGDM" + version header';

CREATE TABLE dedup.sources (
    collection  text NOT NULL,
    source      text NOT NULL,
    authority   float8 NOT NULL CHECK (authority >= 0 AND authority <= 1),
    PRIMARY KEY (collection, source)
);
COMMENT ON TABLE dedup.sources IS 'Source authority in [0,1] per collection; a missing source counts 0.5';

-- Any change of the stored bytes bumps the version, which every backend checks
-- once per statement before using its cached copy.
CREATE FUNCTION dedup._models_version() RETURNS trigger SET search_path = pg_catalog, pg_temp LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.model IS DISTINCT FROM OLD.model AND NEW.version = OLD.version THEN
        NEW.version := OLD.version + 1;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER models_version BEFORE UPDATE ON dedup.models
    FOR EACH ROW EXECUTE FUNCTION dedup._models_version();

-- A model an enabled table uses stays while it does: deleting or renaming it
-- would fail every insert into the table with 42704. (A stored 'default' may go:
-- the built-in model takes its place.)
CREATE FUNCTION dedup._models_in_use() RETURNS trigger
SET search_path = pg_catalog, pg_temp LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.name <> 'default' AND (TG_OP = 'DELETE' OR NEW.name IS DISTINCT FROM OLD.name)
       AND EXISTS (SELECT 1 FROM dedup.enabled_tables e WHERE e.model = OLD.name) THEN
        RAISE EXCEPTION 'model "%" is used by enabled table %', OLD.name,
            (SELECT string_agg(e.tbl::text, ', ' ORDER BY e.tbl::text) FROM dedup.enabled_tables e WHERE e.model = OLD.name)
            USING ERRCODE = 'object_in_use', HINT = 'disable those tables first, or enable them with another model';
    END IF;
    -- Rows may name it in a model_column, which is data: say which tables read
    -- one, since a row naming a model that is gone is refused (42704).
    IF OLD.name <> 'default' AND (TG_OP = 'DELETE' OR NEW.name IS DISTINCT FROM OLD.name)
       AND EXISTS (SELECT 1 FROM dedup.enabled_tables e WHERE e.model_column IS NOT NULL) THEN
        RAISE WARNING 'tables % pick a model per row (model_column): a row that names model "%" is refused from now on',
            (SELECT string_agg(e.tbl::text, ', ' ORDER BY e.tbl::text) FROM dedup.enabled_tables e WHERE e.model_column IS NOT NULL),
            OLD.name
            USING HINT = 'store the model again under that name, or have the rows name another (NULL takes the table''s model)';
    END IF;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $$;
COMMENT ON FUNCTION dedup._models_in_use() IS
    'Trigger on dedup.models: refuses to delete or rename a model an enabled table uses, and warns when tables pick models per row';
CREATE TRIGGER models_in_use BEFORE DELETE OR UPDATE OF name ON dedup.models
    FOR EACH ROW EXECUTE FUNCTION dedup._models_in_use();
-- TRUNCATE dedup.models goes past the row trigger above: refused the same way
-- while an enabled table uses a stored model (it failed every insert with 42704).
CREATE FUNCTION dedup._models_truncated() RETURNS trigger
SET search_path = pg_catalog, pg_temp SET citus.allow_nested_distributed_execution = on LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM dedup.enabled_tables e JOIN dedup.models m ON m.name = e.model WHERE m.name <> 'default') THEN
        RAISE EXCEPTION 'cannot truncate dedup.models: enabled tables use models %',
            (SELECT string_agg(DISTINCT quote_literal(m.name), ', ') FROM dedup.enabled_tables e JOIN dedup.models m ON m.name = e.model
             WHERE m.name <> 'default')
            USING ERRCODE = 'object_in_use', HINT = 'disable those tables first, or enable them with another model; DELETE the other models';
    END IF;
    IF EXISTS (SELECT 1 FROM dedup.enabled_tables e WHERE e.model_column IS NOT NULL) THEN
        RAISE WARNING 'tables % pick a model per row (model_column): a row that names a stored model is refused from now on',
            (SELECT string_agg(e.tbl::text, ', ' ORDER BY e.tbl::text) FROM dedup.enabled_tables e WHERE e.model_column IS NOT NULL)
            USING HINT = 'store the models again, or have the rows name another (NULL takes the table''s model)';
    END IF;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION dedup._models_truncated() IS
    'Trigger on dedup.models: refuses TRUNCATE while an enabled table uses a stored model, as dedup._models_in_use refuses DELETE';
CREATE TRIGGER models_truncated BEFORE TRUNCATE ON dedup.models
    FOR EACH STATEMENT EXECUTE FUNCTION dedup._models_truncated();
-- A changed model's version bumps, and a model in use stays, in a replica-role
-- session too (see config_changed).
ALTER TABLE dedup.models ENABLE ALWAYS TRIGGER models_version;
ALTER TABLE dedup.models ENABLE ALWAYS TRIGGER models_in_use;
ALTER TABLE dedup.models ENABLE ALWAYS TRIGGER models_truncated;

SELECT pg_catalog.pg_extension_config_dump('dedup.models', '');
SELECT pg_catalog.pg_extension_config_dump('dedup.sources', '');

CREATE FUNCTION dedup.evaluate(model text, pairs text)
    RETURNS TABLE(tp bigint, fp bigint, fn bigint, tn bigint, "precision" float8, recall float8, f1 float8)
    VOLATILE STRICT LANGUAGE sql
    AS $$ SELECT * FROM dedup._evaluate(model, pairs) $$;
COMMENT ON FUNCTION dedup.evaluate(text, text) IS
    'Confusion counts, precision, recall and F1 of a model on labelled pairs (a, b, a_dup_b, b_dup_a), both directions';
