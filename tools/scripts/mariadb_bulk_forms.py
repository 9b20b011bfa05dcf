#!/usr/bin/env python3
"""Server-side cost of the forms a MySQL bulk insert could take to check the session's mark
(issue 55; BENCHMARKS.md, "The statement layer and the insert's plan").

Each form is prepared once inside a stored procedure and executed `REPS` times with bulks of
`ROWS` rows, so that the figures are the server's alone (no round trip, no client). Prints
each form's seconds per round, rounds alternated:

    python3 tools/scripts/mariadb_bulk_forms.py | mariadb -uroot -h127.0.0.1

It writes the database `seqgen_bulk_forms` and drops it at the end.
"""

ROWS, REPS, ROUNDS = 100, 300, 3

FORMS = {
    # Diesel's insert, as a bulk of the default generator sends it after the check.
    "plain": ("INSERT INTO bt (id, name) VALUES " + ", ".join(["(?, ?)"] * ROWS), False, False),
    # Every row's SELECT checks the mark: inserts nothing on another database.
    "union_each": (
        "INSERT INTO bt (id, name) "
        + " UNION ALL ".join(["SELECT ?, ? FROM DUAL WHERE @m = ?"] * ROWS),
        True,
        False,
    ),
    # One check over a derived table of the rows.
    "union_derived": (
        "INSERT INTO bt (id, name) SELECT * FROM ("
        + " UNION ALL ".join(["SELECT ? AS id, ? AS name"] + ["SELECT ?, ?"] * (ROWS - 1))
        + ") AS v WHERE @m = ?",
        False,
        True,
    ),
}


def procedure(name, sql, mark_per_row, mark_at_end):
    params = []
    for i in range(ROWS):
        params += [f"@i + {i}", "'x'"] + (["'a'"] if mark_per_row else [])
    params += ["'a'"] if mark_at_end else []
    sets = "\n    ".join(f"SET @p{k} = {p};" for k, p in enumerate(params))
    using = ", ".join(f"@p{k}" for k in range(len(params)))
    return f"""DROP PROCEDURE IF EXISTS p_{name};
DELIMITER //
CREATE PROCEDURE p_{name}(reps INT)
BEGIN
  DECLARE r INT DEFAULT 0;
  PREPARE s FROM "{sql}";
  WHILE r < reps DO
    SET @i = @base; SET @base = @base + {ROWS};
    {sets}
    EXECUTE s USING {using};
    SET r = r + 1;
  END WHILE;
  DEALLOCATE PREPARE s;
END//
DELIMITER ;"""


print("CREATE DATABASE IF NOT EXISTS seqgen_bulk_forms; USE seqgen_bulk_forms;")
print("CREATE OR REPLACE TABLE bt (id BIGINT PRIMARY KEY, name VARCHAR(20)) ENGINE=InnoDB;")
print("SET @m = 'a'; SET @base = 1;")
for name, (sql, per_row, at_end) in FORMS.items():
    print(procedure(name, sql, per_row, at_end))
for round_ in range(1, ROUNDS + 1):
    for name in FORMS:
        print(f"SET @t = SYSDATE(6); CALL p_{name}({REPS});")
        print(
            f"SELECT {round_} AS round, '{name}' AS form,"
            " TIMESTAMPDIFF(MICROSECOND, @t, SYSDATE(6)) / 1e6 AS seconds;"
        )
print("DROP DATABASE seqgen_bulk_forms;")
