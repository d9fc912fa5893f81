-- The second script of tests/pq/psql/run-psql.sh (the first ends with a
-- failed \connect): an error under ON_ERROR_STOP ends psql with status 3.
\echo == ON_ERROR_STOP
\set ON_ERROR_STOP on
SELECT 'before the error';
SELECT * FROM no_such_table;
SELECT 'never printed';
