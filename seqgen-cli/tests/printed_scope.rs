//! The command on a key whose IDs print their scope (`{scope}-{seq}`): `keys` shows the
//! shape, `peek` and `gaps` print IDs in their scope, `check` reads each ID's scope back and
//! `adopt` raises that scope's counter alone.
#![cfg(feature = "sqlite")]

use std::process::Command;

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel_seqgen::{Generator, Spec};

/// `seqgen ARGS` on the SQLite file `url`: exit code and standard output.
fn seqgen(url: &str, args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_seqgen"))
        .args(args)
        .args(["--database-url", url])
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&output.stdout).into_owned();
    let err = String::from_utf8_lossy(&output.stderr);
    (output.status.code().unwrap_or(-1), format!("{out}{err}"))
}

#[test]
fn every_tool_prints_and_reads_the_scope_in_the_id() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("printed_scope.db");
    let url = path.to_str().unwrap();
    assert_eq!(seqgen(url, &["migrate"]).0, 0);
    let mut conn = SqliteConnection::establish(url).unwrap();
    conn.batch_execute("CREATE TABLE invoices (id TEXT PRIMARY KEY, company TEXT NOT NULL)")
        .unwrap();
    let spec = Spec::builder("invoices")
        .format("{scope}-{seq}")
        .date("")
        .pad(4)
        .scoped()
        .gapless()
        .build()
        .unwrap();
    let generator = Generator::new();
    let insert = |conn: &mut SqliteConnection, company: &str| {
        conn.transaction(|conn| {
            let id = generator.next_id(conn, spec.scope(company))?;
            conn.batch_execute(&format!(
                "INSERT INTO invoices VALUES ('{id}', '{company}')"
            ))?;
            Ok::<_, diesel_seqgen::Error>(id)
        })
        .unwrap()
    };
    for company in ["ACME", "GLOBEX", "ACME", "ACME", "GLOBEX"] {
        insert(&mut conn, company);
    }
    let (code, keys) = seqgen(url, &["keys", "--key", "invoices", "--json"]);
    assert_eq!(code, 0, "{keys}");
    assert!(keys.contains("{scope}-{seq:4}{scoped}"), "{keys}");
    let (code, peek) = seqgen(url, &["peek", "--key", "invoices", "--scope", "ACME"]);
    assert_eq!(code, 0, "{peek}");
    assert!(
        peek.contains("(ACME-0003)") && peek.contains("(ACME-0004)"),
        "{peek}"
    );

    conn.batch_execute("DELETE FROM invoices WHERE id = 'ACME-0002'")
        .unwrap();
    let table = ["--key", "invoices", "--table", "invoices", "--column", "id"];
    let scoped = ["--scope-column", "company"];
    let mut gaps = vec!["gaps", "--scope", "ACME"];
    gaps.extend(table.iter().chain(&scoped));
    let (code, out) = seqgen(url, &gaps);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("ACME-0002  unexplained"), "{out}");

    // A row another program wrote past GLOBEX's counter: `check` sees it, `adopt` raises
    // GLOBEX's counter and leaves ACME's.
    conn.batch_execute("INSERT INTO invoices VALUES ('GLOBEX-0009', 'GLOBEX')")
        .unwrap();
    let mut check = vec!["check"];
    check.extend(table.iter().chain(&scoped));
    assert_eq!(seqgen(url, &check).0, 1);
    let mut adopt = vec!["adopt"];
    adopt.extend(table.iter().chain(&scoped));
    let (code, out) = seqgen(url, &adopt);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("GLOBEX-0009"), "{out}");
    assert_eq!(seqgen(url, &check).0, 0);
    assert_eq!(insert(&mut conn, "GLOBEX"), "GLOBEX-0010");
    assert_eq!(insert(&mut conn, "ACME"), "ACME-0004");
}
