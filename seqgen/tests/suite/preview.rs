//! Looking at a counter without moving it: `last_value` and `peek_next`.

use crate::common;

use std::sync::Arc;

use chrono::{TimeZone, Utc};
use common::{TestConnection, TestDb};
use diesel_seqgen::clock::FixedClock;
use diesel_seqgen::{Error, Generator, Spec};

backend_tests!(
    batched_keys_show_the_database_view,
    gapless_keys_show_what_committed,
    a_start_value_ahead_is_the_next_number,
    a_full_period_is_an_error,
);

fn undated(key: &str, pad: u32) -> Spec {
    Spec::builder(key)
        .prefix("N")
        .date("")
        .pad(pad)
        .batch(10)
        .build()
        .unwrap()
}

/// In batched mode the database counts whole blocks: after one ID of a batch of 10 it has
/// handed out 10, and the next reservation starts at 11. Looking moves nothing.
fn batched_keys_show_the_database_view<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = undated(&db.key("peek_batched"), 6);
    assert_eq!(
        diesel_seqgen::global::last_value(&mut conn, &spec).unwrap(),
        None
    );
    assert_eq!(
        diesel_seqgen::global::peek_next(&mut conn, &spec).unwrap(),
        1
    );
    assert_eq!(
        diesel_seqgen::global::peek_next(&mut conn, &spec).unwrap(),
        1,
        "looking moves nothing"
    );
    let generator = Generator::new();
    assert_eq!(generator.next_id(&mut conn, &spec).unwrap(), "N000001");
    assert_eq!(
        diesel_seqgen::global::last_value(&mut conn, &spec).unwrap(),
        Some(10)
    );
    assert_eq!(
        diesel_seqgen::global::peek_next(&mut conn, &spec).unwrap(),
        11
    );
    assert_eq!(
        Generator::new().next_id(&mut conn, &spec).unwrap(),
        "N000011"
    );
}

/// In gapless mode: the last committed number, and the one the next committing transaction
/// gets; a rolled-back transaction changes neither.
fn gapless_keys_show_what_committed<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = Spec::builder(db.key("peek_gapless"))
        .prefix("G")
        .date("")
        .gapless()
        .build()
        .unwrap();
    for _ in 0..2 {
        conn.transaction(|conn| diesel_seqgen::global::next_id(conn, &spec))
            .unwrap();
    }
    let rolled_back = conn.transaction(|conn| {
        diesel_seqgen::global::next_id(conn, &spec)?;
        Err::<(), _>(Error::Database(diesel::result::Error::RollbackTransaction))
    });
    assert!(rolled_back.is_err());
    assert_eq!(
        diesel_seqgen::global::last_value(&mut conn, &spec).unwrap(),
        Some(2)
    );
    let next = diesel_seqgen::global::peek_next(&mut conn, &spec).unwrap();
    assert_eq!(spec.format("", next), "G000003");
    let taken = conn
        .transaction(|conn| diesel_seqgen::global::next_id(conn, &spec))
        .unwrap();
    assert_eq!(taken, "G000003");
}

/// An operator's `start_value` on the key's row: a new period starts there, and so does the
/// preview.
fn a_start_value_ahead_is_the_next_number<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let key = db.key("peek_start");
    conn.batch_execute(&format!(
        "INSERT INTO db_key (key_name, period, current_value, start_value) VALUES ('{key}', '', 0, 500)"
    ))
    .unwrap();
    let spec = Spec::builder(&key).date("%Y").pad(6).build().unwrap();
    let clock = Arc::new(FixedClock::new(
        Utc.with_ymd_and_hms(2031, 1, 1, 0, 0, 0).unwrap(),
    ));
    let generator = Generator::builder().clock(clock.clone()).build();
    assert_eq!(generator.last_value(&mut conn, &spec).unwrap(), None);
    assert_eq!(generator.peek_next(&mut conn, &spec).unwrap(), 500);
    assert_eq!(generator.next_id(&mut conn, &spec).unwrap(), "2031000500");
    // A start value raised once the period's row exists applies to the next period, not to
    // this one: the preview says what the next reservation does.
    diesel_seqgen::admin::set(
        &mut conn,
        &key,
        diesel_seqgen::admin::Setting::StartValue,
        Some(9000),
    )
    .unwrap();
    let next = Generator::builder().clock(clock.clone()).build();
    assert_eq!(next.peek_next(&mut conn, &spec).unwrap(), 600);
    assert_eq!(next.next_id(&mut conn, &spec).unwrap(), "2031000600");
}

/// A full period: the preview says so with the error `next_id` would give.
fn a_full_period_is_an_error<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = undated(&db.key("peek_full"), 1);
    Generator::new().next_ids(&mut conn, &spec, 9).unwrap();
    assert_eq!(
        diesel_seqgen::global::last_value(&mut conn, &spec).unwrap(),
        Some(9)
    );
    let err = diesel_seqgen::global::peek_next(&mut conn, &spec).unwrap_err();
    assert!(matches!(err, Error::Overflow { max: 9, .. }), "{err:?}");
}
