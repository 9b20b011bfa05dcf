//! The command on a key whose counter resets apart from its printed date
//! (`SO{date:%Y%m%d-}{seq:5}{reset:year}`): `keys` shows one row per year, `gaps` checks a
//! year's counter against IDs of all its days, `check` sees a counter behind its table and
//! `adopt` raises the year's row, `prune` deletes years, and `number` numbers rows of many days
//! from their year's counter.
#![cfg(feature = "sqlite")]

use chrono::NaiveDate;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel_seqgen::{Generator, Reset, Spec};

#[allow(dead_code)] // the server tests' watchdog and runs in a directory
#[path = "support/command.rs"]
mod command;
use command::{expect, seqgen};

#[test]
fn every_tool_reads_the_reset_from_the_shape() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reset.db");
    let url = path.to_str().unwrap();
    expect(&seqgen(Some(url), &["migrate"]), 0);
    let mut conn = SqliteConnection::establish(url).unwrap();
    conn.batch_execute("CREATE TABLE orders (id TEXT PRIMARY KEY)")
        .unwrap();
    let spec = Spec::builder("orders")
        .prefix("SO")
        .date("%Y%m%d-")
        .pad(5)
        .reset(Reset::Year)
        .gapless()
        .build()
        .unwrap();
    // The default generator, with documents dated across the last New Year.
    let generator = Generator::new();
    let mut insert = |(y, m, d): (i32, u32, u32)| {
        let day = NaiveDate::from_ymd_opt(2000 + y, m, d).unwrap();
        conn.transaction(|conn| {
            let id = generator.next_id(conn, spec.dated(day))?;
            conn.batch_execute(&format!("INSERT INTO orders VALUES ('{id}')"))?;
            Ok::<_, diesel_seqgen::Error>(id)
        })
        .unwrap()
    };
    let ids: Vec<String> = [(25, 11, 27), (25, 11, 28), (25, 12, 31), (26, 1, 1)]
        .into_iter()
        .map(&mut insert)
        .collect();
    assert_eq!(
        ids,
        [
            "SO20251127-00001",
            "SO20251128-00002",
            "SO20251231-00003",
            "SO20260101-00001"
        ]
    );
    let keys = seqgen(Some(url), &["keys", "--key", "orders"]);
    expect(&keys, 0);
    assert!(keys.out.contains("{reset:year}"), "{}", keys.out);
    assert!(
        keys.out.contains(" 2025 ") && keys.out.contains(" 2026 "),
        "{}",
        keys.out
    );
    assert!(
        !keys.out.contains("20251127"),
        "rows per year, not per day: {}",
        keys.out
    );

    // The second order deleted: `gaps` on any day of 2025 checks all of 2025's numbers.
    let mut conn = SqliteConnection::establish(url).unwrap();
    conn.batch_execute("DELETE FROM orders WHERE id = 'SO20251128-00002'")
        .unwrap();
    let table = ["--key", "orders", "--table", "orders", "--column", "id"];
    let mut gaps = vec!["gaps", "--period", "20251231-"];
    gaps.extend(table);
    let run = seqgen(Some(url), &gaps);
    expect(&run, 1);
    assert!(run.out.contains("period 2025 (reset year"), "{}", run.out);
    assert!(
        run.out.contains("numbers 1..=3 handed out, 2 found"),
        "{}",
        run.out
    );
    assert!(run.out.contains("       2  -  unexplained"), "{}", run.out);

    // A row another program wrote past 2025's counter: `check` sees it, `adopt` raises 2025.
    conn.batch_execute("INSERT INTO orders VALUES ('SO20251230-00009')")
        .unwrap();
    let mut check = vec!["check"];
    check.extend(table);
    expect(&seqgen(Some(url), &check), 1);
    let mut adopt = vec!["adopt"];
    adopt.extend(table);
    expect(&seqgen(Some(url), &adopt), 0);
    expect(&seqgen(Some(url), &check), 0);
    assert_eq!(insert((25, 12, 31)), "SO20251231-00010");
    assert_eq!(insert((26, 1, 2)), "SO20260102-00002");

    // `prune` takes the reset's periods: 2025's row goes, 2026's (the newest) stays.
    let prune = [
        "prune",
        "--key",
        "orders",
        "--min-age-secs",
        "0",
        "--before",
    ];
    let run = seqgen(Some(url), &[&prune[..], &["20251231-"]].concat());
    expect(&run, 2);
    assert!(run.err.contains("is not a period"), "{}", run.err);
    let run = seqgen(Some(url), &[&prune[..], &["2026"]].concat());
    expect(&run, 0);
    let keys = seqgen(Some(url), &["keys", "--key", "orders"]);
    assert!(
        !keys.out.contains(" 2025 ") && keys.out.contains(" 2026 "),
        "{}",
        keys.out
    );

    // `number` numbers rows dated on days of two years from one counter a year, each
    // printing its day, from a shape given on the command.
    conn.batch_execute(
        "CREATE TABLE refs (id INTEGER PRIMARY KEY, ref TEXT UNIQUE, issued_on TEXT); \
         INSERT INTO refs (issued_on) VALUES ('2025-12-31'), ('2026-01-01'), ('2026-01-02')",
    )
    .unwrap();
    let shape = "R{date:%Y%m%d-}{seq:4}{reset:year}";
    command::number_refs(url, shape, &["--date-column", "issued_on"]);
    let refs: Vec<String> = diesel::select(diesel::dsl::sql::<diesel::sql_types::Text>(
        "ref FROM refs ORDER BY id",
    ))
    .load(&mut conn)
    .unwrap();
    assert_eq!(refs, ["R20251231-0001", "R20260101-0001", "R20260102-0002"]);
}
