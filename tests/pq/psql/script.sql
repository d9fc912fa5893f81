-- Run by tests/pq/psql/run-psql.sh with Debian's psql, once on libpq and
-- once on libpgwire-pq; every line of output must be the same (apart from
-- the lines expected-differences.txt lists).
\echo == conninfo
\conninfo
SELECT current_database(), current_user, version() LIKE 'PostgreSQL 15%' AS v15;

\echo == tables and describe
CREATE TABLE items (
    id int PRIMARY KEY,
    name text NOT NULL,
    price numeric(10, 2) CHECK (price >= 0),
    tags text[],
    created date DEFAULT '2024-01-01'
);
COMMENT ON TABLE items IS 'things for sale';
CREATE INDEX items_name ON items (name);
CREATE VIEW cheap AS SELECT id, name FROM items WHERE price < 10;
CREATE SEQUENCE watch_seq;
\d items
\d
\dt+
\dv
\di
\ds
\dn
\df upper
\dT+ int4

\echo == COPY FROM STDIN inline
COPY items (id, name, price, tags) FROM STDIN;
1	apple	1.50	{red,fruit}
2	bread	3.00	\N
3	caviar	250.00	{"very expensive"}
\.
COPY items (id, name, price) FROM STDIN (FORMAT csv);
4,"dough, raw",2.25
5,eggs,0
\.
SELECT * FROM items ORDER BY id;

\echo == copy in and out
\copy items (id, name, price) from 'items_in.csv' with (format csv, header)
\copy (SELECT id, name, price, tags FROM items ORDER BY id) to 'items_out.tsv'
\copy (SELECT id, name FROM items WHERE id > 5 ORDER BY id) to 'items_out.csv' with (format csv, header)
\copy items from 'no_such_file.tsv'
\copy items (id, name) from stdin
10	from psql stdin
\.
SELECT count(*) AS n, sum(price) AS total FROM items;

\echo == gset
SELECT count(*) AS item_count, max(price) AS top_price FROM items \gset
\echo items: :item_count top: :top_price
SELECT name AS first_name FROM items ORDER BY id LIMIT 1 \gset p_
\echo :p_first_name
SELECT 1 WHERE false \gset
SELECT 1 AS a, 2 AS b \gx

\echo == formats
\pset format aligned
\pset border 2
SELECT id, name, price FROM items WHERE id < 4 ORDER BY id;
\pset format unaligned
\pset border 1
SELECT id, name FROM items WHERE id < 3 ORDER BY id;
\pset format aligned
\x on
SELECT * FROM items WHERE id = 1;
\x off
SELECT NULL AS nothing, '' AS empty, E'multi\nline' AS ml, 'é' AS accent;
SELECT 1 AS one \g
SELECT 'to file' AS x \g g_out.txt
\! cat g_out.txt

\echo == notices and errors
DO $$ BEGIN RAISE NOTICE 'a notice with %', 'detail' USING HINT = 'a hint'; END $$;
SELECT 1/0;
SELECT nosuchcolumn FROM items;
SELEC 1;
\set VERBOSITY verbose
SELECT 1/0;
\set VERBOSITY default
\set SHOW_CONTEXT always
DO $$ BEGIN PERFORM 1/0; END $$;
\set SHOW_CONTEXT errors
BEGIN;
SELECT 1/0;
SELECT 'in failed transaction';
ROLLBACK;
\set ON_ERROR_ROLLBACK on
BEGIN;
INSERT INTO items (id, name) VALUES (20, 'kept');
INSERT INTO items (id, name) VALUES (20, 'duplicate');
COMMIT;
\set ON_ERROR_ROLLBACK off
SELECT id, name FROM items WHERE id = 20;

\echo == prepared and extended
SELECT 41 + 1 AS next, 'x'::text AS t \gdesc
PREPARE q(int) AS SELECT name FROM items WHERE id = $1;
EXECUTE q(2);
DEALLOCATE q;
\errverbose

\echo == large objects
\lo_import 'lo_in.bin'
\set lo_oid :LASTOID
\lo_export :lo_oid 'lo_out.bin'
\! cmp lo_in.bin lo_out.bin && echo large object round trip ok
SELECT count(*) AS large_objects FROM pg_largeobject_metadata WHERE oid = :lo_oid;
\lo_unlink :lo_oid
\lo_export 1 'nope.bin'

\echo == watch
\pset footer off
-- psql 15's \watch has no count: the query fails on its fourth round, which
-- ends the \watch deterministically.
SELECT CASE WHEN nextval('watch_seq') > 3 THEN 1 / (currval('watch_seq') - currval('watch_seq'))
            ELSE currval('watch_seq') END AS round \watch 0.1
\pset footer on
SELECT last_value FROM watch_seq;

\echo == connect to another database and back
\connect postgres
\conninfo
SELECT current_database();
\connect -reuse-previous=on dbname=:T_DB
\echo == notifications
LISTEN psql_chan;
NOTIFY psql_chan, 'hello';
SELECT 'after notify';
UNLISTEN psql_chan;

\echo == other users, a wrong password
\set wrong 'host=' :TCP_HOST ' port=' :T_PORT ' user=' :SCRAM_USER ' password=wrong dbname=' :T_DB
\set home 'host=' :T_HOST ' port=' :T_PORT ' user=' :T_USER ' dbname=' :T_DB
\set scram 'host=' :TCP_HOST ' port=' :T_PORT ' user=' :SCRAM_USER ' password=' :SCRAM_PASSWORD ' dbname=' :T_DB
\connect :scram
\conninfo
SELECT current_user;
\connect :home
\conninfo
-- A failed \connect ends a psql that is not interactive: this comes last.
\connect :wrong
\echo never printed

