//! The `seqgen` binary against a real SQLite file and, with their features and URLs
//! (`PG_DATABASE_URL`, `MYSQL_DATABASE_URL`), the PostgreSQL and MariaDB servers: its output
//! and exit codes, bad input included. The data is made through the library, as an app would.

use std::process::Command;

use diesel::connection::{LoadConnection, SimpleConnection};
use diesel::prelude::*;
use diesel_migrations::MigrationHarness;

#[path = "support/command.rs"]
mod command;
use command::{expect, seqgen, seqgen_in, Watchdog, DEADLINE};

/// A name no other run of this test uses (the servers are shared).
fn unique(name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("{name}_{}_{nanos}", std::process::id())
}

/// The whole command set on one database at `url`, through connections of type `C`.
fn every_command<C>(url: &str)
where
    C: LoadConnection + MigrationHarness<C::Backend> + 'static,
    C::Backend: diesel_seqgen::Backend,
{
    // Its own statements too end with what the database's sessions were doing, well before
    // nextest's timeout (which prints nothing of them).
    let _watchdog = Watchdog::arm(url, 2 * DEADLINE);
    let migrate = seqgen(Some(url), &["migrate"]);
    expect(&migrate, 0);
    let again = seqgen(Some(url), &["migrate"]);
    expect(&again, 0);
    assert_eq!(again.out.trim(), "db_key is up to date");

    // An app's day: five gapless invoices, the second voided and removed, the fourth lost.
    let mut conn = C::establish(url).unwrap();
    let invoices = unique("invoices");
    let spec = diesel_seqgen::Spec::builder(invoices.as_str())
        .prefix("INV")
        .date("%Y")
        .gapless()
        .build()
        .unwrap();
    let ids: Vec<String> = (0..5)
        .map(|_| {
            diesel_seqgen::retry_transaction(&mut conn, |conn| {
                diesel_seqgen::global::next_id(conn, &spec)
            })
            .unwrap()
        })
        .collect();
    let year = &ids[0][3..7];
    conn.batch_execute(&format!(
        "CREATE TABLE {invoices} (number VARCHAR(64) NOT NULL)"
    ))
    .unwrap();
    for id in [&ids[0], &ids[2], &ids[4]] {
        conn.batch_execute(&format!("INSERT INTO {invoices} (number) VALUES ('{id}')"))
            .unwrap();
    }
    diesel_seqgen::ledger::void(&mut conn, &spec, &ids[1], "customer cancelled").unwrap();

    let keys = seqgen(Some(url), &["keys"]);
    expect(&keys, 0);
    let line = keys.out.lines().find(|l| l.contains(&invoices)).unwrap();
    assert!(line.contains("INV{date:%Y}{seq:6}"), "{line}");
    let json = seqgen(Some(url), &["keys", "--key", &invoices, "--json"]);
    expect(&json, 0);
    let rows: serde_json::Value = serde_json::from_str(&json.out).unwrap();
    assert_eq!(rows[0]["period"], "");
    assert_eq!(rows[1]["period"], year);
    assert_eq!(rows[1]["current_value"], 5);
    expect(&seqgen(Some(url), &["keys", "--key", &unique("nokey")]), 2);

    let peek = seqgen(Some(url), &["peek", "--key", &invoices, "--period", year]);
    expect(&peek, 0);
    assert!(
        peek.out.contains(&format!("last:   5 ({})", ids[4])),
        "{}",
        peek.out
    );
    assert!(
        peek.out.contains(&format!("next:   6 (INV{year}000006)")),
        "{}",
        peek.out
    );

    let gaps_args = [
        "gaps", "--key", &invoices, "--table", &invoices, "--column", "number", "--period", year,
    ];
    let gaps = seqgen(Some(url), &gaps_args);
    expect(&gaps, 1);
    assert!(
        gaps.out
            .contains(&format!("{}  voided: customer cancelled", ids[1])),
        "{}",
        gaps.out
    );
    assert!(
        gaps.out.contains(&format!("{}  unexplained", ids[3])),
        "{}",
        gaps.out
    );
    let wrong_column = seqgen(
        Some(url),
        &[
            "gaps", "--key", &invoices, "--table", &invoices, "--column", "nope",
        ],
    );
    expect(&wrong_column, 2);
    let void = [
        "void",
        "--key",
        &invoices,
        "--reason",
        "found in the shredder",
        &ids[3],
    ];
    let voided = seqgen(Some(url), &void);
    expect(&voided, 0);
    assert_eq!(
        voided.out.trim(),
        format!("{invoices}: {} voided (found in the shredder)", ids[3])
    );
    let twice = seqgen(Some(url), &void);
    expect(&twice, 2);
    assert!(twice.err.contains("voided already"), "{}", twice.err);
    let unissued = seqgen(
        Some(url),
        &[
            "void",
            "--key",
            &invoices,
            "--reason",
            "x",
            &format!("INV{year}000099"),
        ],
    );
    expect(&unissued, 2);
    let gaps = seqgen(Some(url), &gaps_args);
    expect(&gaps, 0);
    assert!(
        gaps.out.contains("every missing number is voided"),
        "{}",
        gaps.out
    );

    // Settings: checked, then changed, printed before -> after.
    let zero = seqgen(Some(url), &["set-batch", "--key", &invoices, "0"]);
    expect(&zero, 2);
    let typo = seqgen(
        Some(url),
        &["set-batch", "--key", &unique("invoicez"), "10"],
    );
    expect(&typo, 2);
    assert!(typo.err.contains("has no key"), "{}", typo.err);
    let set = seqgen(Some(url), &["set-batch", "--key", &invoices, "1000"]);
    expect(&set, 0);
    assert_eq!(
        set.out.trim(),
        format!("{invoices}: batch_size unset -> 1000")
    );
    let too_far = seqgen(Some(url), &["set-start", "--key", &invoices, "1000000"]);
    expect(&too_far, 2);
    let start = seqgen(Some(url), &["set-start", "--key", &invoices, "100"]);
    expect(&start, 0);
    let cleared = seqgen(Some(url), &["set-batch", "--key", &invoices, "default"]);
    assert_eq!(
        cleared.out.trim(),
        format!("{invoices}: batch_size 1000 -> unset")
    );
    let json = seqgen(Some(url), &["keys", "--key", &invoices, "--json"]);
    let rows: serde_json::Value = serde_json::from_str(&json.out).unwrap();
    assert_eq!(
        (
            rows[0]["batch_size"].clone(),
            rows[0]["start_value"].clone()
        ),
        (serde_json::Value::Null, 100.into())
    );

    // Prune: the current period is refused; earlier ones go.
    let next_year = (year.parse::<i32>().unwrap() + 1).to_string();
    let refused = seqgen(
        Some(url),
        &["prune", "--key", &invoices, "--before", &next_year],
    );
    expect(&refused, 2);
    assert!(refused.err.contains("never deleted"), "{}", refused.err);
    let nothing = seqgen(Some(url), &["prune", "--key", &invoices, "--before", year]);
    expect(&nothing, 0);
    assert!(nothing.out.contains("nothing deleted"), "{}", nothing.out);

    conn.batch_execute(&format!("DROP TABLE {invoices}"))
        .unwrap();

    scoped_commands(&mut conn, url);
}

/// A key that counts per company: `keys` shows each scope's row, `peek`, `void` and `gaps`
/// take `--scope` (`gaps` with the table's scope column too), and `gaps` without one refuses.
fn scoped_commands<C>(conn: &mut C, url: &str)
where
    C: LoadConnection + 'static,
    C::Backend: diesel_seqgen::Backend,
{
    let invoices = unique("scoped_invoices");
    let spec = diesel_seqgen::Spec::builder(invoices.as_str())
        .prefix("S")
        .date("")
        .pad(4)
        .gapless()
        .scoped()
        .build()
        .unwrap();
    let mut take = |company: &str| {
        diesel_seqgen::retry_transaction(conn, |conn| {
            diesel_seqgen::global::next_id(conn, spec.scope(company))
        })
        .unwrap()
    };
    let (one, two) = ([take("1"), take("1"), take("1")], [take("2"), take("2")]);
    assert_eq!((one[2].as_str(), two[1].as_str()), ("S0003", "S0002"));
    conn.batch_execute(&format!(
        "CREATE TABLE {invoices} (company_id INTEGER NOT NULL, number VARCHAR(64) NOT NULL); \
         INSERT INTO {invoices} (company_id, number) VALUES \
         (1, 'S0001'), (1, 'S0003'), (2, 'S0001'), (2, 'S0002')"
    ))
    .unwrap();

    let keys = seqgen(Some(url), &["keys", "--key", &invoices, "--json"]);
    expect(&keys, 0);
    let rows: serde_json::Value = serde_json::from_str(&keys.out).unwrap();
    let scopes: Vec<&str> = (0..3).map(|i| rows[i]["scope"].as_str().unwrap()).collect();
    assert_eq!(scopes, ["", "1", "2"]);
    let no_scope = seqgen(Some(url), &["peek", "--key", &invoices]);
    expect(&no_scope, 2);
    assert!(no_scope.err.contains("--scope"), "{}", no_scope.err);
    let bad_scope = seqgen(Some(url), &["peek", "--key", &invoices, "--scope", "1 "]);
    expect(&bad_scope, 2);
    let peek = seqgen(Some(url), &["peek", "--key", &invoices, "--scope", "1"]);
    expect(&peek, 0);
    assert!(peek.out.contains("last:   3 (S0003)"), "{}", peek.out);

    let gaps = |scope: &str| {
        seqgen(
            Some(url),
            &[
                "gaps",
                "--key",
                &invoices,
                "--table",
                &invoices,
                "--column",
                "number",
                "--scope",
                scope,
                "--scope-column",
                "company_id",
            ],
        )
    };
    let found = gaps("1");
    expect(&found, 1);
    assert!(found.out.contains("S0002  unexplained"), "{}", found.out);
    expect(&gaps("2"), 0);
    let unscoped = seqgen(
        Some(url),
        &[
            "gaps", "--key", &invoices, "--table", &invoices, "--column", "number",
        ],
    );
    expect(&unscoped, 2);
    assert!(unscoped.err.contains("--scope"), "{}", unscoped.err);
    let void = seqgen(
        Some(url),
        &[
            "void", "--key", &invoices, "--scope", "1", "--reason", "torn", "S0002",
        ],
    );
    expect(&void, 0);
    expect(&gaps("1"), 0);
    conn.batch_execute(&format!("DROP TABLE {invoices}"))
        .unwrap();
}

/// The URL of a server backend's test database, or `None` (printed) when it is not set;
/// under `CI=true` a missing URL fails, as in seqgen's own suite.
#[cfg(any(feature = "postgres", feature = "mysql"))]
fn server_url(var: &str) -> Option<String> {
    let url = std::env::var(var).ok();
    if url.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{var} is not set (a missing URL fails under CI=true)"
        );
        println!("skipping: set {var} to run this test");
    }
    url
}

#[test]
#[cfg(feature = "sqlite")]
fn every_command_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.db");
    every_command::<SqliteConnection>(path.to_str().unwrap());
}

#[test]
#[cfg(feature = "postgres")]
fn every_command_on_postgres() {
    if let Some(url) = server_url("PG_DATABASE_URL") {
        every_command::<PgConnection>(&url);
    }
}

/// A server that does not answer is a failure (exit code 3), for a job to tell from bad input.
#[test]
#[cfg(feature = "postgres")]
fn an_unreachable_server_is_exit_code_3() {
    let down = seqgen(Some("postgres://postgres@127.0.0.1:1/test"), &["keys"]);
    expect(&down, 3);
    assert!(down.err.contains("could not connect"), "{}", down.err);
}

#[test]
#[cfg(feature = "mysql")]
fn every_command_on_mysql() {
    if let Some(url) = server_url("MYSQL_DATABASE_URL") {
        every_command::<MysqlConnection>(&url);
    }
}

/// No database, a mistyped file, an unknown command, a bad time zone: a clear message and exit
/// code 2, and no file created.
#[test]
#[cfg(feature = "sqlite")]
fn bad_input_is_refused_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("typo.db");
    let missing = missing.to_str().unwrap();

    let no_url = seqgen(None, &["keys"]);
    expect(&no_url, 2);
    assert!(no_url.err.contains("DATABASE_URL"), "{}", no_url.err);
    let typo = seqgen(Some(missing), &["keys"]);
    expect(&typo, 2);
    assert!(typo.err.contains("no SQLite database"), "{}", typo.err);
    assert!(!std::path::Path::new(missing).exists());
    expect(&seqgen(Some(missing), &["frobnicate"]), 2);
    let tz = seqgen(
        Some(missing),
        &["peek", "--key", "k", "--tz", "Mars/Olympus"],
    );
    expect(&tz, 2);
    assert!(tz.err.contains("+08:00"), "{}", tz.err);

    // A database without db_key: says to migrate.
    let empty = dir.path().join("empty.db");
    std::fs::File::create(&empty).unwrap();
    let unmigrated = seqgen(empty.to_str(), &["keys"]);
    expect(&unmigrated, 2);
    assert!(
        unmigrated.err.contains("seqgen migrate"),
        "{}",
        unmigrated.err
    );
}

/// The diesel CLI's habits: `--database-url`, `--url` as its alias, and `DATABASE_URL` from a
/// `.env` file in the working directory (the environment's value first).
#[test]
#[cfg(feature = "sqlite")]
fn the_database_comes_as_the_diesel_cli_takes_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("app.db");
    let url = db.to_str().unwrap();
    expect(&seqgen(None, &["migrate", "--database-url", url]), 0);
    expect(&seqgen(None, &["keys", "--url", url]), 0);
    let nowhere = seqgen_in(dir.path(), None, &["keys"]);
    expect(&nowhere, 2);
    assert!(nowhere.err.contains("--database-url"), "{}", nowhere.err);
    std::fs::write(dir.path().join(".env"), format!("DATABASE_URL={url}\n")).unwrap();
    let from_env_file = seqgen_in(dir.path(), None, &["keys", "--json"]);
    expect(&from_env_file, 0);
    assert_eq!(from_env_file.out.trim(), "[]");
    // The environment wins over the file, as with dotenv everywhere.
    let other = dir.path().join("other.db");
    let overridden = seqgen_in(dir.path(), other.to_str(), &["keys"]);
    expect(&overridden, 2);
    assert!(overridden.err.contains("other.db"), "{}", overridden.err);
}

/// `seqgen check` reports rows whose ID was never filled (a record inserted with plain
/// `diesel::insert_into` before seqgen filled it) with exit code 1, naming the fix.
#[test]
#[cfg(feature = "sqlite")]
fn check_reports_rows_without_an_id() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("app.db");
    let url = db.to_str().unwrap();
    expect(&seqgen(Some(url), &["migrate"]), 0);
    let mut conn = SqliteConnection::establish(url).unwrap();
    conn.batch_execute("CREATE TABLE users (id TEXT, name TEXT NOT NULL)")
        .unwrap();
    let spec = diesel_seqgen::Spec::builder("users")
        .prefix("U")
        .date("")
        .build()
        .unwrap();
    for name in ["ada", "grace"] {
        let id = diesel_seqgen::global::next_id(&mut conn, &spec).unwrap();
        conn.batch_execute(&format!("INSERT INTO users VALUES ('{id}', '{name}')"))
            .unwrap();
    }
    let args = [
        "check", "--key", "users", "--table", "users", "--column", "id",
    ];
    expect(&seqgen(Some(url), &args), 0);
    conn.batch_execute("INSERT INTO users VALUES ('', 'edsger'), (NULL, 'barbara')")
        .unwrap();
    let check = seqgen(Some(url), &args);
    expect(&check, 1);
    assert!(check.out.contains("2 row(s) have no ID"), "{}", check.out);
    assert!(
        check.out.contains("diesel_seqgen::insert_into"),
        "{}",
        check.out
    );
}

/// `seqgen keys | head`: the reader goes away mid-output; seqgen stops quietly, no panic.
#[test]
#[cfg(feature = "sqlite")]
fn a_reader_that_stops_early_is_no_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.db");
    let url = path.to_str().unwrap();
    expect(&seqgen(Some(url), &["migrate"]), 0);
    let mut conn = SqliteConnection::establish(url).unwrap();
    // More rows than a pipe buffers (64 KiB), so seqgen is still writing when the reader goes.
    conn.batch_execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) \
         INSERT INTO db_key (key_name, period, current_value) SELECT 'key' || i, '', i FROM n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_seqgen"))
        .args(["keys", "--url", url])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(0), "{stderr}");
}

/// `seqgen completions SHELL`, as `diesel completions`: a script that completes the commands
/// and their flags, with no database; a shell it does not know is bad input.
#[test]
fn completions_need_no_database() {
    let bash = seqgen(None, &["completions", "bash"]);
    expect(&bash, 0);
    for word in [
        "set-batch",
        "--database-url",
        "--scope-column",
        "completions",
    ] {
        assert!(bash.out.contains(word), "{word} missing:\n{}", bash.out);
    }
    expect(&seqgen(None, &["completions", "zsh"]), 0);
    expect(&seqgen(None, &["completions", "tcsh"]), 2);
}

/// This crate's README shows every command `seqgen --help` lists.
#[test]
fn the_readme_shows_every_command() {
    let help = seqgen(None, &["--help"]);
    expect(&help, 0);
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md beside Cargo.toml");
    // Under "Commands:", a command's line is indented by two spaces; its help's continuation
    // lines, further.
    let commands: Vec<&str> = help
        .out
        .lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| {
            line.strip_prefix("  ")
                .filter(|rest| !rest.starts_with(' '))
        })
        .filter_map(|line| line.split_whitespace().next())
        .filter(|command| *command != "help")
        .collect();
    assert!(commands.len() > 10, "{}", help.out);
    let missing: Vec<&&str> = commands
        .iter()
        .filter(|command| !readme.contains(&format!("seqgen {command} ")))
        .collect();
    assert!(
        missing.is_empty(),
        "not in seqgen-cli/README.md: {missing:?}"
    );
}
