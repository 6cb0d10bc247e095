#!/usr/bin/env bash
# ALTER EXTENSION pg_dedup UPDATE from 0.1.0 (the frozen script in sql/frozen) on a
# database with an enabled table, stored documents, signatures and a model gives
# the same catalog as a fresh install of the current version, and the same
# verdicts.
#   tests/upgrade/upgrade.sh PSQL_CONNECTION_ARGS   (as root: it installs the frozen
#   0.1.0 script into the server's extension directory)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
args=("$@")
cp "$ROOT/sql/frozen/pg_dedup--0.1.0.sql" "$("${PG_CONFIG:-/usr/bin/pg_config}" --sharedir)/extension/"
q() { local db=$1; shift; sudo -u postgres psql -X -q -t -A -v ON_ERROR_STOP=1 "${args[@]}" -d "$db" "$@"; }
for db in pg_dedup_up_old pg_dedup_up_new; do
  q postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" 2>/dev/null
done
# $2: how the table is enabled. Under 0.1.0 a collection's options were stored
# empty (the library's defaults then: imatch, 12 words, 6 keys, k1 1.2, the threshold
# rule); the current version is given the same settings by name.
setup() {
  q "$1" >/dev/null <<SQL
SET client_min_messages = warning;
$2
SQL
  q "$1" >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE FUNCTION story(s int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg('w' || (abs(hashtext(s || ':' || j)) % 3000), ' ' ORDER BY j) || '. Итог ' || s || '.'
  FROM generate_series(1, 30) AS j $$;
CREATE TABLE pairs_src AS
SELECT dedup.to_document(story(i)) AS a,
       dedup.to_document(CASE WHEN i % 2 = 0 THEN story(i) ELSE story(i + 1000) END) AS b,
       i % 2 = 0 AS a_dup_b, i % 2 = 0 AS b_dup_a
FROM generate_series(1, 40) AS i;
SELECT dedup.train('up_model', 'upnews', 'SELECT a, b, a_dup_b, b_dup_a FROM pairs_src', '{"kernel": "linear", "folds": 0}');
INSERT INTO upnews SELECT i, story(CASE WHEN i % 4 = 0 THEN i - 1 ELSE i END) FROM generate_series(1, 300) AS i;
SQL
}
q pg_dedup_up_old -c "CREATE EXTENSION pg_dedup VERSION '0.1.0'"
setup pg_dedup_up_old "CREATE TABLE upnews (id bigint PRIMARY KEY, body text);
SELECT dedup.enable('upnews', 'body');
UPDATE dedup.collections SET options = '{}' WHERE name = 'upnews';" 2>/dev/null
# Until the update, this library warns (once per session) that the catalog is older.
out=$(q pg_dedup_up_old -c "SELECT count(*) FROM upnews WHERE duplicate_of IS NULL" \
  -c "INSERT INTO upnews VALUES (100000, 'Курс доллара вырос до 92 рублей.')" -c "DELETE FROM upnews WHERE id = 100000" 2>&1)
[ "$(echo "$out" | grep -c "pg_dedup's catalog in this database is version 0.1.0, its library version")" = 1 ] \
  || { echo "no single warning of the 0.1.0 catalog: $out"; exit 1; }
echo "a session under the 0.1.0 catalog is warned once to update it"
# A DBA's grant on the extension's tables made under 0.1.0 (which a table owner's
# enable needed): the update warns that it is the configuration rights now, and a
# dump of the database keeps it (the update's own GRANTs must not make it part of
# the extension's initial privileges, which pg_dump leaves out).
dba=dedup_up_dba dump=$(mktemp)
q postgres -c "DROP ROLE IF EXISTS $dba" -c "CREATE ROLE $dba" >/dev/null
q pg_dedup_up_old -c "GRANT USAGE ON SCHEMA dedup TO $dba" -c "GRANT SELECT, INSERT ON dedup.models TO $dba" \
  -c "GRANT SELECT (source) ON dedup.sources TO $dba"
out=$(q pg_dedup_up_old -c "ALTER EXTENSION pg_dedup UPDATE" 2>&1)
echo "$out" | grep -q "roles $dba hold rights on pg_dedup's tables" || { echo "no warning about $dba's rights: $out"; exit 1; }
kept=$(q pg_dedup_up_old -c "SELECT has_table_privilege('$dba', 'dedup.models', 'INSERT'),
  (SELECT count(*) FROM pg_init_privs ip, aclexplode(ip.initprivs) e WHERE e.grantee = '$dba'::regrole)")
[ "$kept" = "t|0" ] || { echo "after the update: INSERT on dedup.models, initial privileges naming $dba: $kept"; exit 1; }
sudo -u postgres "$("${PG_CONFIG:-/usr/bin/pg_config}" --bindir)/pg_dump" -s "${args[@]}" -d pg_dedup_up_old \
  > "$dump"
dumped=$(grep -c -e "GRANT SELECT,INSERT ON TABLE dedup.models TO $dba" -e "GRANT SELECT(source) ON TABLE dedup.sources TO $dba" \
  "$dump" || true)
rm -f "$dump"
[ "$dumped" = 2 ] || { echo "pg_dump lost a grant to $dba ($dumped of 2 in the dump)"; exit 1; }
echo "a grant made under 0.1.0 is warned about, kept, and dumped after the update"
q pg_dedup_up_old -c "REVOKE ALL ON dedup.models FROM $dba" -c "REVOKE SELECT (source) ON dedup.sources FROM $dba" \
  -c "REVOKE USAGE ON SCHEMA dedup FROM $dba"
q pg_dedup_up_new -c "CREATE EXTENSION pg_dedup"
setup pg_dedup_up_new "CREATE TABLE upnews (id bigint PRIMARY KEY, body text);
SELECT dedup.create_collection('upnews', k1 => 1.2,
  options => '{\"signature_scheme\": \"imatch\", \"signature_topwords\": 12, \"min_shared_keys\": 6}');
SELECT dedup.enable('upnews', 'body', model => 'threshold');"
catalog() {
  q "$1" <<'SQL'
SELECT 'version ' || extversion FROM pg_extension WHERE extname = 'pg_dedup'
UNION ALL
SELECT 'function ' || p.oid::regprocedure || ' ' || CASE WHEN p.prokind = 'a' THEN 'aggregate' ELSE md5(pg_get_functiondef(p.oid)) END
       || ' ' || coalesce(p.proacl::text, '') || ' ' || coalesce(obj_description(p.oid, 'pg_proc'), '')
FROM pg_proc p WHERE p.pronamespace = 'dedup'::regnamespace
UNION ALL
SELECT 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull
       || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE (c.relnamespace = 'dedup'::regnamespace OR c.relname = 'upnews') AND a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT 'relation ' || c.relname || ' ' || c.relkind::text || ' ' || coalesce(c.relacl::text, '') || ' ' || coalesce(obj_description(c.oid, 'pg_class'), '')
       || ' ' || coalesce(c.reloptions::text, '') || ' ' || CASE WHEN c.relkind = 'v' THEN md5(pg_get_viewdef(c.oid)) ELSE '' END
FROM pg_class c WHERE c.relnamespace = 'dedup'::regnamespace
UNION ALL
SELECT 'trigger ' || pg_get_triggerdef(t.oid) || ' ' || t.tgenabled::text FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
WHERE NOT t.tgisinternal AND (c.relnamespace = 'dedup'::regnamespace OR c.relname = 'upnews')
UNION ALL
SELECT 'index ' || pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
WHERE c.relnamespace = 'dedup'::regnamespace OR c.relname = 'upnews'
UNION ALL
SELECT 'schema ' || coalesce(nspacl::text, '') FROM pg_namespace WHERE nspname = 'dedup'
UNION ALL
SELECT 'event trigger ' || evtname || ' ' || evtevent || ' ' || evtfoid::regproc || ' ' || evtenabled::text FROM pg_event_trigger WHERE evtname LIKE 'dedup%'
ORDER BY 1;
SQL
}
verdicts() {
  q "$1" <<'SQL'
SELECT 'rows ' || md5(string_agg(id || ':' || dedup_sig::text || ':' || coalesce(duplicate_of::text, '') || ':' || dedup_verdict, ',' ORDER BY id)) FROM upnews;
SELECT 'stats ' || md5(string_agg(term || df || ':' || cf, ',' ORDER BY term)) FROM dedup.term_stats_by_name;
SELECT 'pairs ' || md5(string_agg(a || b || verdict, ',' ORDER BY a, b)) FROM dedup.pairs('upnews');
SELECT 'model pairs ' || md5(string_agg(a || b || verdict, ',' ORDER BY a, b)) FROM dedup.pairs('upnews', 'up_model');
INSERT INTO upnews VALUES (1000, story(11));
SELECT 'new row ' || coalesce(duplicate_of::text, '-') || ' ' || dedup_verdict FROM upnews WHERE id = 1000;
SQL
}
old=$(catalog pg_dedup_up_old) new=$(catalog pg_dedup_up_new)
if [ "$old" != "$new" ]; then
  echo "the catalog after ALTER EXTENSION UPDATE differs from a fresh install:"
  diff <(echo "$old") <(echo "$new") || true
  exit 1
fi
echo "catalog after ALTER EXTENSION UPDATE equals a fresh install ($(echo "$new" | wc -l) entries, $(echo "$new" | head -1))"
vo=$(verdicts pg_dedup_up_old) vn=$(verdicts pg_dedup_up_new)
[ "$vo" = "$vn" ] || { echo "verdicts differ:"; diff <(echo "$vo") <(echo "$vn") || true; exit 1; }
echo "same signatures, statistics, pairs and new verdicts after the upgrade"
for db in pg_dedup_up_old pg_dedup_up_new; do q postgres -c "DROP DATABASE $db"; done
q postgres -c "DROP ROLE $dba"
