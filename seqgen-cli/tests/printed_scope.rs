//! The command on a key whose IDs print their scope (`{scope}-{seq}`): `keys` shows the
//! shape, `peek` and `gaps` print IDs in their scope, `check` reads each ID's scope back and
//! `adopt` raises that scope's counter alone.
#![cfg(feature = "sqlite")]

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel_seqgen::{Generator, Spec};

#[allow(dead_code)] // the server tests' watchdog and runs in a directory
#[path = "support/command.rs"]
mod command;
use command::{expect, seqgen};

#[test]
fn every_tool_prints_and_reads_the_scope_in_the_id() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("printed_scope.db");
    let url = path.to_str().unwrap();
    expect(&seqgen(Some(url), &["migrate"]), 0);
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
    let keys = seqgen(Some(url), &["keys", "--key", "invoices", "--json"]);
    expect(&keys, 0);
    assert!(keys.out.contains("{scope}-{seq:4}{scoped}"), "{}", keys.out);
    let peek = seqgen(Some(url), &["peek", "--key", "invoices", "--scope", "ACME"]);
    expect(&peek, 0);
    assert!(
        peek.out.contains("(ACME-0003)") && peek.out.contains("(ACME-0004)"),
        "{}",
        peek.out
    );

    conn.batch_execute("DELETE FROM invoices WHERE id = 'ACME-0002'")
        .unwrap();
    let table = ["--key", "invoices", "--table", "invoices", "--column", "id"];
    let scoped = ["--scope-column", "company"];
    let mut gaps = vec!["gaps", "--scope", "ACME"];
    gaps.extend(table.iter().chain(&scoped));
    let run = seqgen(Some(url), &gaps);
    expect(&run, 1);
    assert!(run.out.contains("ACME-0002  unexplained"), "{}", run.out);

    // A row another program wrote past GLOBEX's counter: `check` sees it, `adopt` raises
    // GLOBEX's counter and leaves ACME's.
    conn.batch_execute("INSERT INTO invoices VALUES ('GLOBEX-0009', 'GLOBEX')")
        .unwrap();
    let mut check = vec!["check"];
    check.extend(table.iter().chain(&scoped));
    expect(&seqgen(Some(url), &check), 1);
    let mut adopt = vec!["adopt"];
    adopt.extend(table.iter().chain(&scoped));
    let run = seqgen(Some(url), &adopt);
    expect(&run, 0);
    assert!(run.out.contains("GLOBEX-0009"), "{}", run.out);
    expect(&seqgen(Some(url), &check), 0);
    assert_eq!(insert(&mut conn, "GLOBEX"), "GLOBEX-0010");
    assert_eq!(insert(&mut conn, "ACME"), "ACME-0004");

    // `number` gives committed rows numbers in their scope, the scope printed, from a shape
    // given on the command.
    conn.batch_execute(
        "CREATE TABLE refs (id INTEGER PRIMARY KEY, ref TEXT UNIQUE, company TEXT); \
         INSERT INTO refs (company) VALUES ('ACME'), ('GLOBEX'), ('ACME')",
    )
    .unwrap();
    command::number_refs(
        url,
        "R-{scope}-{seq:3}{scoped}",
        &["--scope-column", "company"],
    );
    let refs: Vec<String> = diesel::select(diesel::dsl::sql::<diesel::sql_types::Text>(
        "ref FROM refs ORDER BY id",
    ))
    .load(&mut conn)
    .unwrap();
    assert_eq!(refs, ["R-ACME-001", "R-GLOBEX-001", "R-ACME-002"]);
}
