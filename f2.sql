SET ROLE owner1;
CREATE SCHEMA s;
CREATE TABLE s.t (id int, d date, body text, PRIMARY KEY (id, d));
SELECT dedup.enable('s.t', 'body');
DROP SCHEMA s CASCADE;
RESET ROLE;
DROP OWNED BY owner1 CASCADE;
