-- dblink and postgres_fdw against the fixture's server (@REMOTE@), run by
-- tests/pq/server/run-server-clients.sh on a server whose libpq is libpq,
-- then libpgwire-pq: what it prints must not change.
CREATE EXTENSION dblink;
CREATE EXTENSION postgres_fdw;
SELECT * FROM dblink('@REMOTE@', 'SELECT g, repeat(''x'', g), g * 1.5 FROM generate_series(1, 5) g')
    AS t(a int, b text, c numeric);
SELECT dblink_connect('c1', '@REMOTE@');
SELECT dblink_send_query('c1', 'SELECT pg_sleep(0.2), 42');
SELECT * FROM dblink_get_result('c1') AS t(s text, n int);
SELECT * FROM dblink_get_result('c1') AS t(s text, n int);
-- a cancel of a statement the remote server is running
SELECT dblink_send_query('c1', 'SELECT pg_sleep(30)');
DO $$ BEGIN
    FOR i IN 1..600 LOOP
        EXIT WHEN (SELECT n FROM dblink('@REMOTE@', 'SELECT count(*) FROM pg_stat_activity
            WHERE query = ''SELECT pg_sleep(30)'' AND state = ''active''') AS t(n int)) > 0;
        PERFORM pg_sleep(0.05);
    END LOOP;
END $$;
SELECT dblink_cancel_query('c1');
SELECT * FROM dblink_get_result('c1', false) AS t(s text);
SELECT * FROM dblink_get_result('c1', false) AS t(s text);
SELECT * FROM dblink('c1', 'SELECT 1/0', false) AS t(n int);
SELECT dblink_error_message('c1');
SELECT dblink_exec('c1', 'CREATE TEMP TABLE tt (a int, b text)');
SELECT dblink_exec('c1', 'INSERT INTO tt VALUES (1, ''one''), (2, NULL)');
SELECT * FROM dblink('c1', 'SELECT * FROM tt ORDER BY 1') AS t(a int, b text);
SELECT dblink_open('c1', 'cur', 'SELECT g FROM generate_series(1, 10) g');
SELECT * FROM dblink_fetch('c1', 'cur', 3) AS t(g int);
SELECT * FROM dblink_fetch('c1', 'cur', 3) AS t(g int);
SELECT dblink_close('c1', 'cur');
SELECT dblink_get_connections();
SELECT dblink_disconnect('c1');
SELECT * FROM dblink('host=/nonexistent user=nobody', 'SELECT 1') AS t(n int);
SELECT * FROM dblink('@REMOTE@ options=-cstatement_timeout=100',
    'SELECT pg_sleep(3)') AS t(s text);
CREATE SERVER remote FOREIGN DATA WRAPPER postgres_fdw
    OPTIONS (host '@HOST@', port '@PORT@', dbname '@DB@');
CREATE USER MAPPING FOR CURRENT_USER SERVER remote OPTIONS (user '@USER@');
CREATE SCHEMA r;
IMPORT FOREIGN SCHEMA public LIMIT TO (pq_srv_remote) FROM SERVER remote INTO r;
SELECT count(*), sum(id), max(v) FROM r.pq_srv_remote;
SELECT * FROM r.pq_srv_remote WHERE id BETWEEN 3 AND 6 ORDER BY id;
EXPLAIN (VERBOSE, COSTS OFF) SELECT v FROM r.pq_srv_remote WHERE id = 7;
BEGIN;
UPDATE r.pq_srv_remote SET v = 'changed' WHERE id = 1;
INSERT INTO r.pq_srv_remote VALUES (100, 'new');
DELETE FROM r.pq_srv_remote WHERE id = 2;
SELECT * FROM r.pq_srv_remote WHERE id IN (1, 2, 100) ORDER BY id;
ROLLBACK;
SELECT * FROM r.pq_srv_remote WHERE id IN (1, 2, 100) ORDER BY id;
INSERT INTO r.pq_srv_remote VALUES (1, 'duplicate');
CREATE FOREIGN TABLE r.nothere (a int) SERVER remote;
SELECT * FROM r.nothere;
SET statement_timeout = '300ms';
SELECT * FROM dblink('@REMOTE@', 'SELECT pg_sleep(3)') AS t(s text);
RESET statement_timeout;
-- Asynchronous foreign scans: the executor waits on both connections at
-- once (PQsendQuery, PQconsumeInput and PQisBusy from its event loop).
CREATE SERVER ra FOREIGN DATA WRAPPER postgres_fdw
    OPTIONS (host '@HOST@', port '@PORT@', dbname '@DB@', async_capable 'true');
CREATE SERVER rb FOREIGN DATA WRAPPER postgres_fdw
    OPTIONS (host '@HOST@', port '@PORT@', dbname '@DB@', async_capable 'true', fetch_size '7');
CREATE USER MAPPING FOR CURRENT_USER SERVER ra OPTIONS (user '@USER@');
CREATE USER MAPPING FOR CURRENT_USER SERVER rb OPTIONS (user '@USER@');
CREATE TABLE r.parts (id int, v text) PARTITION BY RANGE (id);
CREATE FOREIGN TABLE r.part_a PARTITION OF r.parts FOR VALUES FROM (0) TO (1000)
    SERVER ra OPTIONS (schema_name 'public', table_name 'pq_srv_a');
CREATE FOREIGN TABLE r.part_b PARTITION OF r.parts FOR VALUES FROM (1000) TO (2000)
    SERVER rb OPTIONS (schema_name 'public', table_name 'pq_srv_b');
EXPLAIN (COSTS OFF) SELECT count(*) FROM r.parts WHERE v LIKE '_1%';
SELECT count(*), sum(id), min(v), max(v) FROM r.parts WHERE v LIKE '_1%';
SELECT * FROM r.parts WHERE id % 333 = 0 ORDER BY id;
DROP SCHEMA r CASCADE;
DROP SERVER remote CASCADE;
DROP SERVER ra CASCADE;
DROP SERVER rb CASCADE;
