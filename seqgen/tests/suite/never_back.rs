//! Counters never go back, whoever edits them (migration 600): the database refuses an
//! `UPDATE` that lowers `current_value` unless it names the value it lowers from, which only
//! seqgen's `release` and the deliberate renumbering path do. Under load from several
//! instances, an operator's lowering edit fails loudly and no number is handed out twice.

use crate::common;

use std::sync::{Arc, Barrier};
use std::thread;

use common::{TestConnection, TestDb};
use diesel_seqgen::{Generator, Spec};

backend_tests!(
    a_lowering_edit_fails_and_says_what_to_do,
    release_still_gives_the_unused_end_back,
    the_lowering_edit_under_load_hands_out_nothing_twice,
);

/// An undated spec with the defaults a user gets.
fn spec(db: &TestDb<impl TestConnection>, name: &str) -> Spec {
    Spec::builder(db.key(name)).date("").build().unwrap()
}

fn current<C: TestConnection>(conn: &mut C, key: &str) -> i64 {
    let values = C::texts(
        conn,
        &format!(
            "SELECT CAST(current_value AS CHAR(20)) AS text FROM db_key \
             WHERE key_name = '{key}' AND scope = '' AND period = ''"
        ),
    );
    values[0].trim().parse().unwrap()
}

/// The edit the issue names fails, with the message an operator needs; raising still works,
/// and the lowering that names what it lowers from goes through once (and not again).
fn a_lowering_edit_fails_and_says_what_to_do<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = spec(&db, "edit");
    let key = spec.key().to_owned();
    Generator::new().next_id(&mut conn, &spec).unwrap();
    let before = current(&mut conn, &key);
    assert!(before >= 100, "one block of the defaults: {before}");

    let lower =
        format!("UPDATE db_key SET current_value = current_value - 50 WHERE key_name = '{key}'");
    let err = conn.batch_execute(&lower).unwrap_err().to_string();
    assert!(err.contains("may not go back"), "{err}");
    assert!(
        err.contains("seqgen renumber") && err.contains("seqgen adopt"),
        "{err}"
    );
    assert_eq!(current(&mut conn, &key), before, "nothing changed");

    conn.batch_execute(&format!(
        "UPDATE db_key SET current_value = current_value + 10 WHERE key_name = '{key}'"
    ))
    .unwrap();
    assert_eq!(current(&mut conn, &key), before + 10);

    // Naming a wrong old value is refused too; naming the right one lowers, once.
    let named = |from: i64| {
        format!(
            "UPDATE db_key SET current_value = 5, lowered_from = {from} WHERE key_name = '{key}'"
        )
    };
    assert!(conn.batch_execute(&named(before)).is_err());
    conn.batch_execute(&named(before + 10)).unwrap();
    assert_eq!(current(&mut conn, &key), 5);
    let at_rest = C::texts(
        &mut conn,
        &format!(
            "SELECT CAST(COALESCE(lowered_from, -1) AS CHAR(20)) AS text FROM db_key \
             WHERE key_name = '{key}'"
        ),
    );
    assert_eq!(at_rest[0].trim(), "-1", "lowered_from is cleared at once");
    conn.batch_execute(&format!(
        "UPDATE db_key SET current_value = 20 WHERE key_name = '{key}'"
    ))
    .unwrap();
    assert!(conn.batch_execute(&lower.replace("- 50", "- 1")).is_err());
}

/// seqgen's own lowering, `release`, keeps working: the next instance continues without a hole.
fn release_still_gives_the_unused_end_back<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = spec(&db, "release");
    let first = Generator::new();
    let ids = first.next_ids(&mut conn, &spec, 3).unwrap();
    assert_eq!(ids.last().unwrap(), "000003");
    assert!(first.release(&mut conn).unwrap() > 0);
    assert_eq!(current(&mut conn, spec.key()), 3);
    assert_eq!(
        Generator::new().next_id(&mut conn, &spec).unwrap(),
        "000004"
    );
}

/// Four instances (a generator and a connection each, as four processes would have) take
/// numbers while an operator lowers the counter by 5,000 again and again: every edit fails,
/// and every number is handed out once.
fn the_lowering_edit_under_load_hands_out_nothing_twice<C: TestConnection>(db: TestDb<C>) {
    const INSTANCES: usize = 4;
    const IDS: usize = 3_000;
    let spec = Arc::new(spec(&db, "load"));
    let key = spec.key().to_owned();
    let db = Arc::new(db);
    // The counter well above 5,000 first, so the edit would not fail on the CHECK (>= 0).
    let mut operator = db.connect();
    Generator::new().next_id(&mut operator, &spec).unwrap();
    operator
        .batch_execute(&format!(
            "UPDATE db_key SET current_value = current_value + 20000 WHERE key_name = '{key}'"
        ))
        .unwrap();
    let start = Arc::new(Barrier::new(INSTANCES + 1));
    let instances: Vec<_> = (0..INSTANCES)
        .map(|_| {
            let (db, spec, start) = (db.clone(), spec.clone(), start.clone());
            thread::spawn(move || {
                let mut conn = db.connect();
                let generator = Generator::new();
                start.wait();
                let mut ids = Vec::with_capacity(IDS);
                for _ in 0..IDS {
                    ids.push(generator.next_id(&mut conn, &spec).unwrap());
                }
                ids
            })
        })
        .collect();
    start.wait();
    let mut refused = 0;
    let lower =
        format!("UPDATE db_key SET current_value = current_value - 5000 WHERE key_name = '{key}'");
    while refused < 20 && !instances.iter().all(|i| i.is_finished()) {
        let err = operator
            .batch_execute(&lower)
            .expect_err("the lowering edit went through");
        assert!(err.to_string().contains("may not go back"), "{err}");
        refused += 1;
        thread::sleep(std::time::Duration::from_millis(5));
    }
    let ids: Vec<String> = instances
        .into_iter()
        .flat_map(|i| i.join().unwrap())
        .collect();
    assert_eq!(ids.len(), INSTANCES * IDS);
    common::assert_distinct(&ids);
    assert!(refused > 0);
    println!(
        "{}: {} IDs from {INSTANCES} instances, {refused} lowering edits refused, 0 repeated",
        C::NAME,
        ids.len()
    );
}
