"""What the tests share: the package on sys.path, and the cluster's
connection strings from the environment the ctest wrapper exports
(tests/pg's env file: PGHOST, PGPORT, PGUSER, PGDATABASE, PGW_TEST_*)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import pgwire  # noqa: E402,F401


def tls_conninfo(user_kind="scram", sslmode="verify-full", extra=""):
    """A TCP connection string to the cluster over TLS: the SCRAM role
    with its password, or the certificate role with the client cert."""
    env = os.environ
    base = (f"host={env['PGW_TEST_TCP_HOST']} port={env['PGPORT']} dbname={env['PGDATABASE']} "
            f"sslmode={sslmode} sslrootcert={env['PGW_TEST_SSL_ROOTCERT']}")
    if user_kind == "cert":
        return (f"{base} user={env['PGW_TEST_CERT_USER']} "
                f"sslcert={env['PGW_TEST_SSL_CLIENT_CERT']} "
                f"sslkey={env['PGW_TEST_SSL_CLIENT_KEY']} {extra}")
    return (f"{base} user={env['PGW_TEST_SCRAM_USER']} "
            f"password={env['PGW_TEST_SCRAM_PASSWORD']} {extra}")


def have_cluster():
    return "PGW_TEST_TCP_HOST" in os.environ
