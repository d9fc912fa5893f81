-- The data set every scenario reads, loaded by bench/run.sh before any driver
-- runs (psql -v ON_ERROR_STOP=1). Deterministic: every library sees the same
-- rows, and the drivers' checksums depend on that.

-- Suite A: Mixed-Type Decode, Simple Query Fetch, Prepared Statement Reuse.
DROP TABLE IF EXISTS bench_mixed;
CREATE TABLE bench_mixed (
    id int PRIMARY KEY,
    c_int2 int2,
    c_int4 int4,
    c_float4 float4,
    c_float8 float8,
    c_varchar varchar(64),
    c_json json,
    c_jsonb jsonb,
    c_ts timestamp,
    c_tstz timestamptz,
    c_bytea bytea
);
INSERT INTO bench_mixed
SELECT i,
       ((i * 7) % 60000 - 30000)::int2,
       ((i::bigint * 2654435761) % 4294967296 - 2147483648)::int4,
       (i * 1.25)::float4,
       i * 3.141592653589793::float8,
       'name-' || i || '-' || repeat('x', i % 20),
       json_build_object('id', i, 'name', 'n' || i, 'tags', json_build_array('a', 'b')),
       jsonb_build_object('id', i, 'name', 'n' || i, 'ok', i % 2 = 0),
       timestamp '2024-01-01 00:00:00' + i * interval '1 second 123 milliseconds',
       timestamptz '2024-01-01 00:00:00+00' + i * interval '37 minutes 11.5 seconds',
       decode(md5(i::text) || md5((i + 1)::text), 'hex')
FROM generate_series(1, 1000) i;

-- Large Blob Fetch: 10 rows of 1 MiB (a 16-byte pattern repeated).
DROP TABLE IF EXISTS bench_blob;
CREATE TABLE bench_blob (id int PRIMARY KEY, b bytea);
ALTER TABLE bench_blob ALTER COLUMN b SET STORAGE EXTERNAL;
INSERT INTO bench_blob
SELECT i, decode(repeat(md5(i::text), 65536), 'hex') FROM generate_series(1, 10) i;

-- Large Array Fetch: 10 rows of int4[50000], full-width, half negative.
DROP TABLE IF EXISTS bench_array;
CREATE TABLE bench_array (id int PRIMARY KEY, a int4[]);
INSERT INTO bench_array
SELECT i, array_agg(CASE WHEN j % 2 = 0 THEN 2147483647 - j - i ELSE -2147483647 + j + i END
                    ORDER BY j)
FROM generate_series(1, 10) i, generate_series(0, 49999) j
GROUP BY i;

-- Unit of Work: 15 counters.
DROP TABLE IF EXISTS bench_uow;
CREATE TABLE bench_uow (id int PRIMARY KEY, v bigint NOT NULL, note text);
INSERT INTO bench_uow SELECT i, 0, '' FROM generate_series(1, 15) i;

-- Bulk Load target.
DROP TABLE IF EXISTS bench_copy;
CREATE TABLE bench_copy (i4 int4, i8 int8, f8 float8, vc varchar(40));

-- Suite B: seed 001's table, exactly.
CREATE TABLE IF NOT EXISTS benchmark_rows (
  id int PRIMARY KEY,
  int_value int,
  string_value text,
  null_value text,
  bool_value boolean
);
TRUNCATE benchmark_rows;
INSERT INTO benchmark_rows (id, int_value, string_value, null_value, bool_value)
  SELECT
    i,
    1337,
    'wat',
    NULL,
    false
  FROM generate_series(1, 500) i;

-- Suite C starts from nothing.
DROP TABLE IF EXISTS t1, t2, t2_1, t3, t3_1;
VACUUM ANALYZE;
