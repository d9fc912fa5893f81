-- A database with one of most kinds of object pg_dump handles, and data
-- that is hard to carry: every byte value, tabs, newlines, backslashes,
-- NULLs, non-ASCII text, large objects, and rows enough for several COPY
-- chunks.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE EXTENSION hstore;
CREATE SCHEMA s2;
COMMENT ON SCHEMA s2 IS 'second schema, ''quoted''';
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN posint AS integer CHECK (VALUE > 0);
CREATE TYPE pair AS (a int, b text);
CREATE SEQUENCE s2.counter START 42 INCREMENT 7;
SELECT setval('s2.counter', 1000);
CREATE TABLE kinds (
    id serial PRIMARY KEY,
    b bool, i2 int2, i4 int4, i8 int8, n numeric(30, 10), f4 float4, f8 float8,
    t text, vc varchar(20), c char(5), by bytea, d date, tm time, tz timetz,
    ts timestamp, tstz timestamptz, iv interval, u uuid, j json, jb jsonb,
    a int[], ta text[], m mood, p posint, pr pair, h hstore, ip inet, cid cidr,
    mac macaddr, bits bit varying(16), pt point, r int4range, x xml, mo money
);
INSERT INTO kinds (b, i2, i4, i8, n, f4, f8, t, vc, c, by, d, tm, tz, ts, tstz,
                   iv, u, j, jb, a, ta, m, p, pr, h, ip, cid, mac, bits, pt, r, x, mo)
SELECT g % 2 = 0, g, g * 1000, g::int8 * 10000000000, g / 7.0, g / 3.0, g / 11.0,
       E'row\t' || g || E'\nline two \\ back ' || chr(233) || chr(8364) || chr(128512),
       'vc' || g, 'c' || (g % 100), decode(lpad(to_hex(g % 256), 2, '0') || '00ff5c0a09', 'hex'),
       date '2000-01-01' + g, time '12:00' + g * interval '1 second', timetz '12:00+02',
       timestamp '2020-02-29 23:59:59.123456' + g * interval '1 hour',
       timestamptz '2020-02-29 23:59:59.123456+00' + g * interval '1 minute',
       g * interval '1 day 2 hours 3.5 seconds', md5(g::text)::uuid,
       ('{"k": ' || g || ', "s": "a\"b"}')::json, ('{"k": ' || g || '}')::jsonb,
       ARRAY[g, g + 1, NULL], ARRAY['a b', NULL, 'c"d', E'e\\f'], (ARRAY['sad', 'ok', 'happy'])[g % 3 + 1]::mood,
       g + 1, ROW(g, 'p' || g)::pair, hstore('k' || g, 'v'), '10.0.0.1'::inet + g, '10.1.0.0/16',
       '08:00:2b:01:02:03', (g % 65536)::bit(16)::varbit, point(g, -g), int4range(g, g + 10),
       ('<r n="' || g || '">&amp;</r>')::xml, g * 1.25
FROM generate_series(1, 3000) g;
INSERT INTO kinds (t) VALUES (NULL), (''), (E'\\N'), (E'\\.'), (E'.\n\\.\n');
CREATE TABLE allbytes (k int PRIMARY KEY, v bytea NOT NULL, s text);
INSERT INTO allbytes SELECT g, decode(string_agg(lpad(to_hex(x), 2, '0'), ''), 'hex'), repeat('x', g * 100)
FROM generate_series(1, 40) g, generate_series(0, 255) x GROUP BY g;
CREATE TABLE s2.parted (k int, v text) PARTITION BY RANGE (k);
CREATE TABLE s2.parted_lo PARTITION OF s2.parted FOR VALUES FROM (0) TO (100);
CREATE TABLE s2.parted_hi PARTITION OF s2.parted FOR VALUES FROM (100) TO (MAXVALUE);
INSERT INTO s2.parted SELECT g, 'v' || g FROM generate_series(0, 199) g;
CREATE TABLE child (id int REFERENCES kinds (id) ON DELETE CASCADE, note text DEFAULT 'n/a');
INSERT INTO child SELECT g, NULL FROM generate_series(1, 50) g;
CREATE INDEX kinds_t ON kinds (lower(t)) WHERE t IS NOT NULL;
CREATE UNIQUE INDEX kinds_u ON kinds (u);
CREATE VIEW kinds_v AS SELECT id, t FROM kinds WHERE b;
CREATE MATERIALIZED VIEW kinds_mv AS SELECT m, count(*) FROM kinds GROUP BY m;
CREATE FUNCTION s2.bump(x int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
    RAISE NOTICE 'bump %', x;
    RETURN x + 1;
END $$;
CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.note := 'touched'; RETURN NEW; END $$;
CREATE TRIGGER child_touch BEFORE UPDATE ON child FOR EACH ROW EXECUTE FUNCTION touch();
CREATE RULE kinds_v_del AS ON DELETE TO kinds_v DO INSTEAD NOTHING;
COMMENT ON TABLE kinds IS E'every type\nin one table';
COMMENT ON COLUMN kinds.t IS 'text with ''quotes''';
CREATE ROLE pq_dump_reader NOLOGIN;
GRANT SELECT ON kinds TO pq_dump_reader;
GRANT USAGE ON SCHEMA s2 TO pq_dump_reader;
SELECT lo_from_bytea(0, decode(repeat('00ff', 40000), 'hex')) IS NOT NULL AS lo1;
SELECT lo_from_bytea(0, convert_to(repeat('large object text ', 500), 'UTF8')) IS NOT NULL AS lo2;
SELECT lo_from_bytea(0, '') IS NOT NULL AS lo_empty;
