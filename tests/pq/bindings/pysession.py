"""What the Python programs of run-bindings.sh share: their output and the
checks they make the same way (psycopg2_session.py, psycopg3_session.py)."""
import time


def out(*a):
    print(*a, flush=True)


def section(name):
    out("==", name)


def fails(error, f, *args):
    """f(*args) must raise error (the binding's base class): prints the
    error's class, SQLSTATE and first line."""
    try:
        f(*args)
    except error as e:
        code = getattr(e, "sqlstate", None) or getattr(e, "pgcode", None)
        out(type(e).__name__, code, str(e).splitlines()[0] if str(e) else "")
        return
    out("no error")


def each_error(error, execute, queries, show):
    """execute(q) for each of queries, each to raise error: prints what
    show(e) returns."""
    for q in queries:
        try:
            execute(q)
            out("no error:", q)
        except error as e:
            out(*show(e))


ACTIVE = ("SELECT count(*) FROM pg_stat_activity WHERE pid = %s AND state = 'active'"
          " AND query LIKE %s")


def wait_active(count, pid, pattern):
    """Until the backend pid runs a statement like pattern: count(sql,
    params) runs ACTIVE and returns its count. No deadline: the test's own
    timeout ends a hang."""
    while not count(ACTIVE, (pid, pattern)):
        time.sleep(0.02)
