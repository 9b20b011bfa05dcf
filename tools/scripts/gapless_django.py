"""django-sequences 3.1 doing what bench-report's gapless path does, for its comparison.

Each worker process (a gunicorn-style Django worker) runs, until the time is up:

    with transaction.atomic():
        n = get_next_value("bench_invoices_django")
        INSERT INTO bench_invoices_django (id, amount) VALUES ('INV' + n padded to 8, 1)
        # with --hold-ms: the transaction's other work (lines, stock, a payment call)
        # one transaction in ten rolls back (the 10th, 20th, ... of each worker)

bench-report runs it as a subprocess (`--gapless`) and reads the JSON line it prints. Set up:

    python3 -m venv /tmp/djvenv
    /tmp/djvenv/bin/pip install "django>=4.2,<6" django-sequences==3.1 "psycopg[binary]"

PGOPTIONS (e.g. `-c synchronous_commit=off`) reaches the server through libpq, as for pgbench.
"""

import argparse
import json
import multiprocessing
import time
import urllib.parse

TABLE = "bench_invoices_django"
SEQUENCE = "bench_invoices_django"


class Rollback(Exception):
    """Raised inside `atomic()` to roll the transaction back."""


def configure(url):
    import django
    from django.conf import settings

    parts = urllib.parse.urlparse(url)
    settings.configure(
        DATABASES={
            "default": {
                "ENGINE": "django.db.backends.postgresql",
                "NAME": parts.path.lstrip("/"),
                "USER": urllib.parse.unquote(parts.username or ""),
                "PASSWORD": urllib.parse.unquote(parts.password or ""),
                "HOST": parts.hostname or "127.0.0.1",
                "PORT": parts.port or 5432,
            }
        },
        INSTALLED_APPS=["sequences"],
        USE_TZ=True,
    )
    django.setup()


def worker(seconds, rollback_every, hold, barrier, results):
    # Forked from the configured parent: Django is set up; the connection is opened here.
    from django.db import connection, transaction
    from sequences import get_next_value

    connection.ensure_connection()
    barrier.wait()
    deadline = time.monotonic() + seconds
    committed = rolled_back = 0
    while time.monotonic() < deadline:
        try:
            with transaction.atomic():
                n = get_next_value(SEQUENCE)
                with connection.cursor() as cursor:
                    cursor.execute(
                        f"INSERT INTO {TABLE} (id, amount) VALUES (%s, %s)",
                        [f"INV{n:08d}", 1],
                    )
                if hold:
                    time.sleep(hold)
                if (committed + rolled_back) % rollback_every == rollback_every - 1:
                    raise Rollback
            committed += 1
        except Rollback:
            rolled_back += 1
    results.put((committed, rolled_back))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="postgres://user@host:port/db")
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--rollback-every", type=int, default=10)
    parser.add_argument(
        "--hold-ms", type=float, default=0.0, help="other work in each transaction after the insert"
    )
    args = parser.parse_args()

    configure(args.url)
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", "sequences", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TABLE IF NOT EXISTS {TABLE} (id VARCHAR(40) PRIMARY KEY, amount BIGINT NOT NULL)"
        )
        cursor.execute(f"TRUNCATE {TABLE}")
        cursor.execute("DELETE FROM sequences_sequence WHERE name = %s", [SEQUENCE])
    connection.close()

    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(args.workers + 1)
    results = context.Queue()
    processes = [
        context.Process(
            target=worker,
            args=(args.seconds, args.rollback_every, args.hold_ms / 1000, barrier, results),
        )
        for _ in range(args.workers)
    ]
    for process in processes:
        process.start()
    barrier.wait()
    started = time.monotonic()
    totals = [results.get() for _ in processes]
    elapsed = time.monotonic() - started
    for process in processes:
        process.join()
    committed = sum(c for c, _ in totals)
    rolled_back = sum(r for _, r in totals)

    # Gapless: the committed rows hold exactly the numbers 1..committed.
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*), max(id) FROM {TABLE}")
        count, highest = cursor.fetchone()
    gapless = count == committed and (count == 0 or highest == f"INV{count:08d}")
    print(
        json.dumps(
            {
                "transactions_per_second": (committed + rolled_back) / elapsed,
                "committed_per_second": committed / elapsed,
                "committed": committed,
                "rolled_back": rolled_back,
                "seconds": elapsed,
                "gapless": gapless,
            }
        )
    )


if __name__ == "__main__":
    main()
