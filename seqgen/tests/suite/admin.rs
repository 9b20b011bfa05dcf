//! `diesel_seqgen::admin`, what the `seqgen` command runs: listing counters, changing settings,
//! pruning old periods, and the gap report against a business table.

use crate::common;

use chrono::{TimeZone as _, Utc};
use diesel_seqgen::admin::{self, Missing, Setting};
use diesel_seqgen::{Error, Spec, TimeZone};

use common::{generator_on_fixed_clock, TestConnection, TestDb};

backend_tests!(
    counters_show_every_period_and_the_keys_row,
    settings_are_checked_then_changed,
    prune_deletes_past_periods_only,
    prune_keeps_a_row_that_took_a_number_since_it_was_read,
    gaps_explain_each_missing_number,
    gaps_read_integer_columns,
    changes_wait_for_a_busy_app,
);

/// `prune` with no minimum age: the rows these tests prune were written a moment ago.
const ANY_AGE: std::time::Duration = std::time::Duration::ZERO;

fn daily(db: &TestDb<impl TestConnection>, name: &str) -> Spec {
    Spec::builder(db.key(name))
        .prefix("D")
        .date("%Y%m%d")
        .pad(4)
        .batch(10)
        .build()
        .unwrap()
}

/// Two days of a dated key: its key's row (period '', with the shape) and one row per day;
/// the row that names the database is not listed.
fn counters_show_every_period_and_the_keys_row<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let (clock, generator) = generator_on_fixed_clock();
    let spec = daily(&db, "list");
    generator.next_ids(&mut conn, &spec, 3).unwrap();
    clock.advance(chrono::Duration::days(1));
    generator.next_id(&mut conn, &spec).unwrap();

    let rows = admin::counters(&mut conn, Some(spec.key())).unwrap();
    let seen: Vec<(&str, i64)> = rows
        .iter()
        .map(|r| (r.period.as_str(), r.current_value))
        .collect();
    // The first day's unused 4..=10 went back to its counter when the day ended.
    assert_eq!(seen, [("", 0), ("20261123", 3), ("20261124", 10)]);
    assert_eq!(rows[0].shape.as_deref(), Some(spec.shape()));
    assert_eq!(rows[1].shape, None);
    assert!(
        rows.iter()
            .all(|r| r.updated_at.len() == 19 && r.updated_at.starts_with("20")),
        "{rows:?}"
    );
    let all = admin::counters(&mut conn, None).unwrap();
    assert!(
        all.iter().all(|r| !r.key.is_empty()),
        "the token row is listed"
    );
    assert!(all.iter().any(|r| r.key == spec.key()));
}

/// A value below 1, a mistyped key and a start value the IDs cannot print are refused and
/// change nothing; a good value applies at the next reservation.
fn settings_are_checked_then_changed<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = Spec::builder(db.key("set"))
        .date("")
        .pad(4)
        .batch(10)
        .build()
        .unwrap();
    let generator = diesel_seqgen::Generator::builder().fixed_batch().build();
    assert_eq!(generator.next_id(&mut conn, &spec).unwrap(), "0001");

    let err = admin::set(&mut conn, spec.key(), Setting::BatchSize, Some(0)).unwrap_err();
    assert!(matches!(err, Error::Refused { .. }), "{err:?}");
    let typo = db.key("sett");
    let err = admin::set(&mut conn, &typo, Setting::BatchSize, Some(5)).unwrap_err();
    assert!(matches!(err, Error::UnknownKey { .. }), "{err:?}");
    assert!(admin::counters(&mut conn, Some(&typo)).unwrap().is_empty());
    let err = admin::set(&mut conn, spec.key(), Setting::StartValue, Some(10_000)).unwrap_err();
    assert!(err.to_string().contains("9999"), "{err}");
    assert_eq!(
        admin::counters(&mut conn, Some(spec.key())).unwrap()[0].start_value,
        None
    );

    let change = admin::set(&mut conn, spec.key(), Setting::BatchSize, Some(25)).unwrap();
    assert_eq!((change.before, change.after), (None, Some(25)));
    let fresh = diesel_seqgen::Generator::builder().fixed_batch().build();
    assert_eq!(fresh.next_id(&mut conn, &spec).unwrap(), "0011");
    assert_eq!(
        admin::peek(&mut conn, &spec, "").unwrap().last,
        Some(35),
        "a block of batch_size 25 after the first block of 10"
    );

    admin::set(&mut conn, spec.key(), Setting::StartValue, Some(500)).unwrap();
    let fresh = diesel_seqgen::Generator::builder().fixed_batch().build();
    assert_eq!(fresh.next_id(&mut conn, &spec).unwrap(), "0500");
    let change = admin::set(&mut conn, spec.key(), Setting::StartValue, None).unwrap();
    assert_eq!((change.before, change.after), (Some(500), None));
}

/// Periods before the given one go; the current period, the newest one in the table (ahead of
/// the operator's clock, or the last one a quiet key used), an undated key's only row, and
/// periods that do not sort as dates stay.
fn prune_deletes_past_periods_only<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let (clock, generator) = generator_on_fixed_clock();
    let spec = daily(&db, "prune");
    for day in 0..3 {
        if day > 0 {
            clock.advance(chrono::Duration::days(1));
        }
        generator.next_id(&mut conn, &spec).unwrap();
    } // 23, 24, 25 November
    let periods = |conn: &mut C| -> Vec<String> {
        admin::counters(conn, Some(spec.key()))
            .unwrap()
            .into_iter()
            .map(|r| r.period)
            .collect()
    };
    let on = |day| Utc.with_ymd_and_hms(2026, 11, day, 12, 0, 0).unwrap();

    let err = admin::prune(
        &mut conn,
        spec.key(),
        "20261126",
        on(25),
        TimeZone::Utc,
        ANY_AGE,
    )
    .unwrap_err();
    assert!(err.to_string().contains("never deleted"), "{err}");
    let err = admin::prune(
        &mut conn,
        spec.key(),
        "2026-11",
        on(25),
        TimeZone::Utc,
        ANY_AGE,
    )
    .unwrap_err();
    assert!(err.to_string().contains("not a period"), "{err}");
    assert_eq!(periods(&mut conn).len(), 4);

    // Rows that took a number a moment ago: an instance on a late clock may still be in them.
    let hour = std::time::Duration::from_secs(3600);
    let err = admin::prune(
        &mut conn,
        spec.key(),
        "20261125",
        on(24),
        TimeZone::Utc,
        hour,
    )
    .unwrap_err();
    assert!(err.to_string().contains("minimum age"), "{err}");
    assert_eq!(periods(&mut conn).len(), 4);

    // The operator's clock says the 24th; the 25th exists already and stays.
    let deleted = admin::prune(
        &mut conn,
        spec.key(),
        "20261125",
        on(24),
        TimeZone::Utc,
        ANY_AGE,
    )
    .unwrap();
    assert_eq!(deleted, ["20261123", "20261124"]);
    assert_eq!(periods(&mut conn), ["", "20261125"]);
    // The row kept still counts on: a new instance continues after the block taken.
    let restarted = diesel_seqgen::Generator::builder()
        .clock(std::sync::Arc::clone(&clock))
        .fixed_batch()
        .build();
    assert_eq!(
        restarted.next_id(&mut conn, &spec).unwrap(),
        "D202611250011"
    );

    let undated = Spec::builder(db.key("prune_undated"))
        .date("")
        .build()
        .unwrap();
    generator.next_id(&mut conn, &undated).unwrap();
    let err =
        admin::prune(&mut conn, undated.key(), "", on(25), TimeZone::Utc, ANY_AGE).unwrap_err();
    assert!(err.to_string().contains("no date part"), "{err}");
    assert_eq!(
        admin::counters(&mut conn, Some(undated.key()))
            .unwrap()
            .len(),
        1
    );

    let unsorted = Spec::builder(db.key("prune_dmy"))
        .date("%d%m%Y")
        .build()
        .unwrap();
    generator.next_id(&mut conn, &unsorted).unwrap();
    let err = admin::prune(
        &mut conn,
        unsorted.key(),
        "01012027",
        on(25),
        TimeZone::Utc,
        ANY_AGE,
    )
    .unwrap_err();
    assert!(err.to_string().contains("do not sort"), "{err}");
}

/// Ten gapless invoices of 2026; the table holds 1, 3 (twice), 5, 6 and 10, plus an ID past
/// the counter, one of another year and a value that is no ID. 2 is voided.
fn gaps_explain_each_missing_number<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let (_clock, generator) = generator_on_fixed_clock();
    let spec = Spec::builder(db.key("gaps"))
        .prefix("INV")
        .date("%Y")
        .gapless()
        .build()
        .unwrap();
    let ids: Vec<String> = (0..10)
        .map(|_| {
            diesel_seqgen::retry_transaction(&mut conn, |conn| generator.next_id(conn, &spec))
                .unwrap()
        })
        .collect();
    let table = db.key("gap_invoices");
    let held = [1, 3, 3, 5, 6, 10].map(|n| format!("'{}'", ids[n - 1]));
    conn.batch_execute(&format!(
        "CREATE TABLE {table} (number VARCHAR(64)); \
         INSERT INTO {table} (number) VALUES ({}), ('INV2026000012'), ('INV2025000001'), ('draft');",
        held.join("), (")
    ))
    .unwrap();
    diesel_seqgen::ledger::void(&mut conn, &spec, &ids[1], "customer cancelled").unwrap();

    let report = admin::gaps(
        &mut conn,
        &spec,
        admin::IdColumn::new(&table, "number"),
        "2026",
    )
    .unwrap();
    assert_eq!((report.first, report.last, report.found), (1, 10, 7));
    assert_eq!(
        report.missing,
        [
            Missing::Voided {
                number: 2,
                reason: "customer cancelled".into()
            },
            Missing::Unexplained { from: 4, to: 4 },
            Missing::Unexplained { from: 7, to: 9 },
        ]
    );
    assert_eq!(report.duplicates, [(3, 2)]);
    assert_eq!(report.beyond, [12]);
    assert_eq!(report.foreign, 1);
    assert!(!report.is_explained());

    // Explained once every missing number is voided and the strays are gone.
    for n in [4, 7, 8, 9] {
        diesel_seqgen::ledger::void(&mut conn, &spec, &ids[n - 1], "test run").unwrap();
    }
    conn.batch_execute(&format!(
        "DELETE FROM {table} WHERE number IN ('{}', 'INV2026000012'); \
         INSERT INTO {table} (number) VALUES ('{}');",
        ids[2], ids[2]
    ))
    .unwrap();
    let report = admin::gaps(
        &mut conn,
        &spec,
        admin::IdColumn::new(&table, "number"),
        "2026",
    )
    .unwrap();
    assert!(report.is_explained(), "{report:?}");

    // A table name is a name, never SQL.
    let err = admin::gaps(
        &mut conn,
        &spec,
        admin::IdColumn::new(&format!("{table}; DROP TABLE {table}"), "number"),
        "2026",
    )
    .unwrap_err();
    assert!(matches!(err, Error::Database(_)), "{err:?}");
    conn.batch_execute(&format!("DROP TABLE {table}")).unwrap();
}

/// A numeric spec's IDs stored as BIGINT (an `i64` field): read back with their leading
/// zeros restored.
fn gaps_read_integer_columns<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let (_clock, generator) = generator_on_fixed_clock();
    let spec = Spec::builder(db.key("gaps_int"))
        .date("%m")
        .pad(4)
        .gapless()
        .build()
        .unwrap();
    let numbers: Vec<i64> = (0..3)
        .map(|_| {
            diesel_seqgen::retry_transaction(&mut conn, |conn| generator.next_number(conn, &spec))
                .unwrap()
        })
        .collect();
    assert_eq!(numbers, [110001, 110002, 110003]);
    let table = db.key("gap_numbers");
    conn.batch_execute(&format!(
        "CREATE TABLE {table} (number BIGINT); INSERT INTO {table} (number) VALUES (110001), (110003);"
    ))
    .unwrap();
    let report = admin::gaps(
        &mut conn,
        &spec,
        admin::IdColumn::new(&table, "number"),
        "11",
    )
    .unwrap();
    assert_eq!(report.missing, [Missing::Unexplained { from: 2, to: 2 }]);
    assert_eq!(report.found, 2);
    // A period the key cannot have is refused, not reported as empty.
    for period in ["2026", "13", ""] {
        let err = admin::gaps(
            &mut conn,
            &spec,
            admin::IdColumn::new(&table, "number"),
            period,
        )
        .unwrap_err();
        assert!(matches!(err, Error::Refused { .. }), "{period}: {err:?}");
        let err = admin::peek(&mut conn, &spec, period).unwrap_err();
        assert!(matches!(err, Error::Refused { .. }), "{period}: {err:?}");
    }
    conn.batch_execute(&format!("DROP TABLE {table}")).unwrap();
}

/// A change while an app takes gapless numbers of the key without pause: the change waits its
/// turn, and neither side fails. On SQLite a transaction that read first could not write after
/// another connection had ("database is locked" at once, 24 of 30 changes); on MySQL a change
/// that took a shared lock on the key's row and then upgraded it deadlocked with the app.
fn changes_wait_for_a_busy_app<C: TestConnection>(db: TestDb<C>) {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    let spec = Spec::builder(db.key("busy"))
        .date("")
        .gapless()
        .build()
        .unwrap();
    let mut conn = db.connect();
    diesel_seqgen::retry_transaction(&mut conn, |conn| {
        diesel_seqgen::global::next_id(conn, &spec)
    })
    .unwrap();
    let (stop, commits) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let app = {
        let (stop, commits) = (Arc::clone(&stop), Arc::clone(&commits));
        let (spec, mut app) = (spec.clone(), db.connect());
        std::thread::spawn(move || {
            let mut failures = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                match app.transaction(|conn| diesel_seqgen::global::next_id(conn, &spec)) {
                    Ok(_) => commits.fetch_add(1, Ordering::Relaxed),
                    Err(e) => {
                        failures.push(e);
                        0
                    }
                };
            }
            failures
        })
    };
    while commits.load(Ordering::Relaxed) < 50 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let results: Vec<_> = (1..=30)
        .map(|batch| {
            std::thread::sleep(Duration::from_millis(5));
            admin::set(&mut conn, spec.key(), Setting::BatchSize, Some(batch))
        })
        .collect();
    stop.store(true, Ordering::Relaxed);
    let app_failures = app.join().unwrap();
    let failed: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert!(
        failed.is_empty(),
        "{} of 30 changes failed: {:?}",
        failed.len(),
        failed[0]
    );
    assert!(
        app_failures.is_empty(),
        "the app failed {} times: {:?}",
        app_failures.len(),
        app_failures[0]
    );
}

/// `prune` checks a period's age on a row it read, then deletes: a lagging instance taking a
/// number in between would find the row gone and start the period over, repeating numbers.
/// The delete is a compare-and-delete on the value read, so such a row stays (and `prune`,
/// seeing it, refuses and deletes nothing).
fn prune_keeps_a_row_that_took_a_number_since_it_was_read<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let (_clock, generator) = generator_on_fixed_clock();
    let spec = daily(&db, "prune_race");
    generator.next_id(&mut conn, &spec).unwrap(); // 1..=10 of the 23rd
    let read = admin::counters(&mut conn, Some(spec.key())).unwrap();
    let row = read.iter().find(|r| r.period == "20261123").unwrap();
    // Another instance, on the same late day, takes the next block after the read.
    diesel_seqgen::Generator::builder()
        .clock(diesel_seqgen::clock::FixedClock::new(
            Utc.with_ymd_and_hms(2026, 11, 23, 10, 0, 0).unwrap(),
        ))
        .fixed_batch()
        .build()
        .next_id(&mut conn, &spec)
        .unwrap();
    let counter = diesel_seqgen::backend::Counter {
        key: spec.key(),
        scope: "",
        period: &row.period,
        start: 1,
    };
    let stale = <C::B as diesel_seqgen::Backend>::delete_row(&mut conn, counter, row.current_value);
    assert_eq!(
        stale.unwrap(),
        0,
        "a row read before its last reservation was deleted"
    );
    let fresh = admin::counters(&mut conn, Some(spec.key())).unwrap();
    let now = fresh.iter().find(|r| r.period == "20261123").unwrap();
    assert_eq!(now.current_value, 20);
    let deleted =
        <C::B as diesel_seqgen::Backend>::delete_row(&mut conn, counter, now.current_value);
    assert_eq!(deleted.unwrap(), 1);
}
