-- Installs the extension once for the whole regress run.
CREATE EXTENSION pg_dedup;
SELECT extname, extrelocatable, n.nspname AS schema
FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
WHERE extname = 'pg_dedup';
-- Every public function is in schema dedup and declares volatility and parallel safety.
SELECT p.proname, p.provolatile, p.proparallel, p.proisstrict
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pg_dedup'
WHERE p.pronamespace <> 'dedup'::regnamespace
ORDER BY 1;
-- err(sql): runs a statement and shows its SQLSTATE, message, detail and hint
-- instead of failing, so golden files record the exact error.
CREATE FUNCTION public.err(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE h text; d text;
BEGIN
  EXECUTE sql;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS h = PG_EXCEPTION_HINT, d = PG_EXCEPTION_DETAIL;
  RETURN SQLSTATE || ': ' || SQLERRM
      || CASE WHEN d <> '' THEN ' (detail: ' || d || ')' ELSE '' END
      || CASE WHEN h <> '' THEN ' (hint: ' || h || ')' ELSE '' END;
END $$;
-- err_fields(sql): the SQLSTATE of an error and the schema, table, column and
-- constraint it names (what a driver reads from the error's fields).
CREATE FUNCTION public.err_fields(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE s text; t text; c text; k text;
BEGIN
  EXECUTE sql;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS s = SCHEMA_NAME, t = TABLE_NAME, c = COLUMN_NAME, k = CONSTRAINT_NAME;
  RETURN format('%s: schema %s, table %s, column %s, constraint %s', SQLSTATE,
                coalesce(nullif(s, ''), '-'), coalesce(nullif(t, ''), '-'),
                coalesce(nullif(c, ''), '-'), coalesce(nullif(k, ''), '-'));
END $$;
-- wait_folded(collection): waits up to 30 s for the background fold worker to fold
-- the collection's pending rows, and warns (changing the golden output) if it does not.
CREATE FUNCTION public.wait_folded(coll text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..600 LOOP
    PERFORM 1 FROM dedup.collections c
     WHERE c.name = coll AND NOT EXISTS (SELECT FROM dedup.term_stats_pending p WHERE p.collection_id = c.id);
    IF FOUND THEN RETURN; END IF;
    PERFORM pg_sleep(0.05);
  END LOOP;
  RAISE WARNING 'the fold worker did not fold collection % within 30 s', coll;
END $$;
-- The volatility, parallel safety and strictness of every function, on record.
SELECT p.oid::regprocedure AS function, p.provolatile AS vol, p.proparallel AS par, p.proisstrict AS strict
FROM pg_proc p WHERE p.pronamespace = 'dedup'::regnamespace
ORDER BY p.proname, p.oid::regprocedure::text;
-- Every operator class passes amvalidate.
SELECT opcname, amvalidate(oid) FROM pg_opclass WHERE opcnamespace = 'dedup'::regnamespace ORDER BY 1;
-- Every function of schema dedup has a comment, internal helpers too (none
-- listed), and so have the schema, its operator class and family, tables, views
-- and sequences.
SELECT p.oid::regprocedure AS uncommented FROM pg_proc p
WHERE p.pronamespace = 'dedup'::regnamespace
  AND obj_description(p.oid, 'pg_proc') IS NULL ORDER BY 1;
SELECT 'schema' AS kind, nspname AS uncommented FROM pg_namespace WHERE nspname = 'dedup' AND obj_description(oid, 'pg_namespace') IS NULL
UNION ALL SELECT 'opclass', opcname FROM pg_opclass WHERE opcnamespace = 'dedup'::regnamespace AND obj_description(oid, 'pg_opclass') IS NULL
UNION ALL SELECT 'opfamily', opfname FROM pg_opfamily WHERE opfnamespace = 'dedup'::regnamespace AND obj_description(oid, 'pg_opfamily') IS NULL
UNION ALL SELECT 'relation', relname FROM pg_class WHERE relnamespace = 'dedup'::regnamespace AND relkind IN ('r', 'v', 'S')
  AND obj_description(oid, 'pg_class') IS NULL ORDER BY 1, 2;
