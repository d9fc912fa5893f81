# Debian's DBD::Pg (libdbd-pg-perl, built on libpq) through one session of
# what a Perl program asks of it: connection attributes, quoting, types both
# ways with server-side and client-side prepares, errors and transactions,
# notices, LISTEN/NOTIFY, COPY both ways, the asynchronous API with its own
# select() loop and cancel, a statement timeout, large objects, a
# terminated backend and failed connects.
#
# Run by run-bindings.sh on libpq and on libpgwire-pq: everything printed
# must be identical. Nothing printed depends on time, process ids or the run.
use strict;
use warnings;
use DBI;
use DBD::Pg qw(:pg_types :async);

$| = 1;

sub out { print join(" ", map { defined $_ ? $_ : "undef" } @_), "\n"; }
sub flat { my $s = shift; $s =~ s/\n/|/g; return $s; }
sub connect_db { return DBI->connect("dbi:Pg:", undef, undef, {RaiseError => 1, PrintError => 0, AutoCommit => 1, @_}); }

my $dbh = connect_db(pg_enable_utf8 => 1, PrintWarn => 1);
my @notes;
$SIG{__WARN__} = sub { push @notes, flat($_[0]) };

out("== info");
out($dbh->{pg_server_version} >= 150000 ? "server 15+" : "older server", $dbh->{pg_protocol});
out($dbh->{pg_user} eq $ENV{PGUSER} ? "user ok" : "user differs", $dbh->{pg_db} eq $ENV{PGDATABASE} ? "db ok" : "db differs");
out($dbh->ping, $dbh->pg_ping, $dbh->{pg_INV_READ}, $dbh->{pg_INV_WRITE}, $dbh->{pg_standard_conforming_strings});

out("== quote");
out($dbh->quote("it's \\ x"), $dbh->quote(undef), $dbh->quote_identifier('a"b'), $dbh->quote_identifier(undef, "s", "t"));
out($dbh->quote("\x00\x01'\\", {pg_type => PG_BYTEA}));
out(unpack("H*", $dbh->quote("\x{e9}t\x{e9}")));

out("== types");
$dbh->do("CREATE TEMP TABLE t (i int, f float8, n numeric, s text, b bytea, d date, a int[], ta text[], bo bool, j jsonb)");
my $sth = $dbh->prepare("INSERT INTO t VALUES (?,?,?,?,?,?,?,?,?,?)");
$sth->bind_param(5, undef, {pg_type => PG_BYTEA});
out($sth->execute(1, 1.5, "12345678901234567890.123", "h\x{e9}llo 'q'", "\x00\x01\xff'\\", "2020-02-29",
                  [1, undef, 3], ["a", "b c", undef, '"q"'], 1, '{"a": [1, "x", null]}'));
out($dbh->do("INSERT INTO t (i) SELECT g FROM generate_series(2, 5) g"));
for my $r (@{$dbh->selectall_arrayref("SELECT * FROM t ORDER BY i")}) {
    out(map {
        ref $_ eq 'ARRAY' ? "[" . join(",", map { defined $_ ? $_ : "NULL" } @$_) . "]"
        : defined $_ && /[^\x20-\x7e]/ ? unpack("H*", utf8::is_utf8($_) ? do { my $c = $_; utf8::encode($c); $c } : $_)
        : $_
    } @$r);
}
$sth = $dbh->prepare("SELECT * FROM t WHERE i = ?");
$sth->execute(1);
out(join(",", @{$sth->{NAME}}), join(",", @{$sth->{TYPE}}), join(",", @{$sth->{pg_type}}), $sth->{NUM_OF_FIELDS}, $sth->rows);
out(join(",", map { defined $_ ? $_ : "u" } @{$sth->{pg_size}}));
$sth->finish;
$sth = $dbh->prepare("SELECT \$1::int + \$2", {pg_server_prepare => 1});
$sth->execute(2, 3);
out($sth->fetchrow_array);
$sth->execute(20, 30);
out($sth->fetchrow_array);
$sth = $dbh->prepare("SELECT ?::text || ?", {pg_server_prepare => 0});
$sth->execute("x", "y");
out($sth->fetchrow_array);
out($dbh->selectrow_array("SELECT 1 WHERE false"));

out("== errors");
for my $q ("SELECT 1/0", "SELECT * FROM nosuch", "SELEC 1", "INSERT INTO t (i) VALUES ('x')") {
    eval { $dbh->do($q) };
    out($dbh->state, $dbh->err, flat($dbh->errstr));
}
$dbh->{AutoCommit} = 0;
eval { $dbh->do("SELECT 1/0") };
eval { $dbh->do("SELECT 1") };
out($dbh->state, flat($dbh->errstr));
$dbh->rollback;
out($dbh->selectrow_array("SELECT 2"));
$dbh->rollback;
$dbh->{AutoCommit} = 1;

out("== notices");
$dbh->do("DO \$\$ BEGIN RAISE NOTICE 'n1 %', 1; RAISE WARNING 'w2'; END \$\$");
out(@notes);
@notes = ();

out("== notify");
$dbh->do("LISTEN ch");
my $d2 = connect_db();
$d2->do("NOTIFY ch, 'p1'; NOTIFY ch, 'p2'; NOTIFY ch");
my @got;
while (@got < 3) {
    my $rin = '';
    vec($rin, $dbh->{pg_socket}, 1) = 1;
    select($rin, undef, undef, 1);
    while (my $n = $dbh->pg_notifies) {
        push @got, "$n->[0]:" . ($n->[1] == $d2->{pg_pid} ? "pid" : "other") . ":$n->[2]";
    }
}
out(@got);
$d2->disconnect;

out("== copy");
$dbh->do("CREATE TEMP TABLE c (a int, b text)");
$dbh->do("COPY c FROM STDIN");
$dbh->pg_putcopydata("1\tone\n");
$dbh->pg_putcopydata("2\t\\N\n3\tth\x{e9}\n");
out($dbh->pg_putcopyend());
$dbh->do("COPY c FROM STDIN");
$dbh->pg_putcopydata("$_\t" . ("x" x ($_ % 50)) . "\n") for 1 .. 20000;
out($dbh->pg_putcopyend());
$dbh->do("COPY (SELECT * FROM c ORDER BY a, b LIMIT 4) TO STDOUT");
my ($line, @lines);
while ($dbh->pg_getcopydata($line) >= 0) { push @lines, flat($line); }
out(@lines);
$dbh->do("COPY c TO STDOUT");
my ($n, $bytes) = (0, 0);
while ($dbh->pg_getcopydata($line) >= 0) { $n++; $bytes += length $line; }
out($n, $bytes);
$dbh->do("COPY c FROM STDIN");
$dbh->pg_putcopydata("1\tok\nbad\trow\n");
eval { $dbh->pg_putcopyend() };
out($dbh->state, flat($dbh->errstr));
eval { $dbh->do("COPY nosuch TO STDOUT") };
out($dbh->state);

out("== async");
$dbh->do("SELECT pg_sleep(0.2), 'async'", {pg_async => PG_ASYNC});
out($dbh->{pg_async_status});
until ($dbh->pg_ready) {
    my $rin = '';
    vec($rin, $dbh->{pg_socket}, 1) = 1;
    select($rin, undef, undef, 1);
}
out($dbh->pg_result);
$sth = $dbh->prepare("SELECT pg_sleep(30)", {pg_async => PG_ASYNC});
$sth->execute;
my $probe = connect_db();
# until the statement runs (the test's own timeout ends a hang)
until ($probe->selectrow_array("SELECT count(*) FROM pg_stat_activity WHERE pid = ? AND state = 'active'"
                               . " AND query LIKE 'SELECT pg_sleep(30)%'", undef, $dbh->{pg_pid})) {
    select(undef, undef, undef, 0.02);
}
$probe->disconnect;
out($dbh->pg_cancel, $dbh->state);
out($dbh->selectrow_array("SELECT 42"));
$dbh->do("SET statement_timeout = '100ms'");
eval { $dbh->do("SELECT pg_sleep(5)") };
out($dbh->state);
$dbh->do("RESET statement_timeout");

out("== large objects");
$dbh->{AutoCommit} = 0;
my $oid = $dbh->pg_lo_creat($dbh->{pg_INV_WRITE});
my $lfd = $dbh->pg_lo_open($oid, $dbh->{pg_INV_WRITE});
out($dbh->pg_lo_write($lfd, "large " x 1000, 6000));
$dbh->pg_lo_close($lfd);
$lfd = $dbh->pg_lo_open($oid, $dbh->{pg_INV_READ});
my $buf = '';
out($dbh->pg_lo_read($lfd, $buf, 12), $buf);
out($dbh->pg_lo_lseek($lfd, 6, 0), $dbh->pg_lo_tell($lfd));
$dbh->pg_lo_close($lfd);
out($dbh->pg_lo_unlink($oid));
$dbh->commit;
$dbh->{AutoCommit} = 1;

out("== terminate");
my $v = connect_db(RaiseError => 0);
out($dbh->selectrow_array("SELECT pg_terminate_backend(?, 60000)", undef, $v->{pg_pid}));
out(defined $v->do("SELECT 1") ? "alive" : "dead", $v->state, $v->ping);

out("== bad connect");
for my $dsn ("host=/nonexistent;port=1", "host=127.0.0.1;port=1", "dbname=nosuch_db_here", "bogus=1") {
    my $x = DBI->connect("dbi:Pg:$dsn", undef, undef, {RaiseError => 0, PrintError => 0});
    out(defined $x ? "connected" : "failed", flat($DBI::errstr // ""));
}
$dbh->disconnect;
out(@notes);
out("done");
