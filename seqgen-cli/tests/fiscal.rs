//! The command on a fiscal-year key: it reads the fiscal year from the key's recorded shape
//! (`{fiscal:04-01}`), so `keys` shows each fiscal year's counter, `gaps` finds a fiscal
//! year's missing numbers, `check` sees a counter behind its table and `adopt` raises it.
#![cfg(feature = "sqlite")]

use std::sync::Arc;

use chrono::{TimeZone as _, Utc};
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel_seqgen::clock::FixedClock;
use diesel_seqgen::{FiscalYear, Generator, Spec};

#[allow(dead_code)] // the server tests' watchdog and runs in a directory
#[path = "support/command.rs"]
mod command;
use command::{expect, seqgen};

#[test]
fn every_tool_reads_the_fiscal_year_from_the_shape() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fiscal.db");
    let url = path.to_str().unwrap();
    expect(&seqgen(Some(url), &["migrate"]), 0);
    let mut conn = SqliteConnection::establish(url).unwrap();
    conn.batch_execute("CREATE TABLE invoices (id TEXT PRIMARY KEY)")
        .unwrap();
    let spec = Spec::builder("invoices")
        .prefix("INV")
        .date("FY%Y-")
        .fiscal_year(FiscalYear::starting(4, 1).unwrap())
        .pad(4)
        .gapless()
        .build()
        .unwrap();
    let clock = Arc::new(FixedClock::new(
        Utc.with_ymd_and_hms(2027, 3, 31, 12, 0, 0).unwrap(),
    ));
    let generator = Generator::builder().clock(clock.clone()).build();
    let insert = |conn: &mut SqliteConnection| {
        conn.transaction(|conn| {
            let id = generator.next_id(conn, &spec)?;
            conn.batch_execute(&format!("INSERT INTO invoices VALUES ('{id}')"))?;
            Ok::<_, diesel_seqgen::Error>(id)
        })
        .unwrap()
    };
    for _ in 0..3 {
        insert(&mut conn);
    }
    clock.set(Utc.with_ymd_and_hms(2027, 4, 1, 0, 0, 0).unwrap());
    assert_eq!(insert(&mut conn), "INVFY2027-0001");

    let keys = seqgen(Some(url), &["keys", "--key", "invoices", "--json"]);
    expect(&keys, 0);
    assert!(
        keys.out.contains("FY2026-") && keys.out.contains("FY2027-"),
        "{}",
        keys.out
    );
    assert!(keys.out.contains("{fiscal:04-01}"), "{}", keys.out);

    // A number of fiscal 2026 deleted: `gaps` names it in that year.
    conn.batch_execute("DELETE FROM invoices WHERE id = 'INVFY2026-0002'")
        .unwrap();
    let table = ["--key", "invoices", "--table", "invoices", "--column", "id"];
    let mut gaps = vec!["gaps", "--period", "FY2026-"];
    gaps.extend(table);
    let run = seqgen(Some(url), &gaps);
    expect(&run, 1);
    assert!(
        run.out.contains("INVFY2026-0002  unexplained"),
        "{}",
        run.out
    );

    // Rows another program wrote past the counter of fiscal 2027: `check` sees it, `adopt`
    // raises that year's counter alone.
    conn.batch_execute("INSERT INTO invoices VALUES ('INVFY2027-0009')")
        .unwrap();
    let mut check = vec!["check"];
    check.extend(table);
    expect(&seqgen(Some(url), &check), 1);
    let mut adopt = vec!["adopt"];
    adopt.extend(table);
    let run = seqgen(Some(url), &adopt);
    expect(&run, 0);
    expect(&seqgen(Some(url), &check), 0);
    assert_eq!(insert(&mut conn), "INVFY2027-0010");
}
