//! `Generator::stats` and `diesel_seqgen::stats` against scripted calls: exact counts, every backend.

use crate::common;

use std::time::Duration;

use chrono::TimeDelta;
use common::{TestConnection, TestDb};
use diesel::connection::TransactionManager;
use diesel_seqgen::{Error, Generator, Spec};

backend_tests!(
    batched_calls_are_counted_exactly,
    gapless_calls_and_conflicts_are_counted,
    the_default_generator_counts_too,
);

/// Blocks of 10 (fixed), a period change and a release, each counted where it happened.
fn batched_calls_are_counted_exactly<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let (clock, generator) = common::generator_on_fixed_clock();
    let key = db.key("stats");
    let spec = Spec::builder(&key)
        .prefix("S")
        .date("%Y%m%d")
        .pad(6)
        .batch(10)
        .build()
        .unwrap();

    // 1..=25 from blocks 1..=10, 11..=20, 21..=30: each block's first ID comes with its
    // reservation, the other 22 from memory.
    for _ in 0..25 {
        generator.next_id(&mut conn, &spec).unwrap();
    }
    // The next day: 26..=30 of the day before go back to its counter; 1..=10 reserved, 1
    // served with it, 2..=5 from memory, 6..=10 given back.
    clock.advance(TimeDelta::days(1));
    generator.next_id(&mut conn, &spec).unwrap();
    generator.next_ids(&mut conn, &spec, 4).unwrap();
    assert_eq!(generator.release(&mut conn).unwrap(), 5);

    let stats = generator.stats();
    assert_eq!(stats.len(), 1, "{stats:?}");
    let stats = &stats[0];
    assert_eq!(stats.key, key);
    assert_eq!(
        (
            stats.reservations,
            stats.numbers_reserved,
            stats.served_from_memory
        ),
        (4, 40, 26)
    );
    assert_eq!((stats.numbers_abandoned, stats.numbers_given_back), (0, 10));
    assert_eq!((stats.retries, stats.conflicts), (0, 0));
    let time = stats.reservation_time;
    assert_eq!(time.count, 4);
    assert!(
        Duration::ZERO < time.mean() && time.mean() <= time.max,
        "{time:?}"
    );
}

/// Gapless numbers are one reservation each and never served from memory; a `nowait` call
/// that finds the counter held is a conflict.
fn gapless_calls_and_conflicts_are_counted<C: TestConnection>(db: TestDb<C>) {
    let key = db.key("stats_gapless");
    let waits = Spec::builder(&key).date("").gapless().build().unwrap();
    let nowait = Spec::builder(&key)
        .date("")
        .gapless_nowait()
        .build()
        .unwrap();
    let (mut holder, mut other) = (db.connect(), db.connect());
    let generator = Generator::new();

    C::TransactionManager::begin_transaction(&mut holder).unwrap();
    generator.next_id(&mut holder, &waits).unwrap();
    generator.next_id(&mut holder, &waits).unwrap();
    let busy = other.transaction(|conn| generator.next_id(conn, &nowait).map(|_| ()));
    assert!(matches!(busy, Err(Error::Busy { .. })), "{busy:?}");
    C::TransactionManager::commit_transaction(&mut holder).unwrap();

    let stats = generator.stats();
    assert_eq!(stats.len(), 1, "both specs are one key: {stats:?}");
    let stats = &stats[0];
    assert_eq!(
        (
            stats.reservations,
            stats.numbers_reserved,
            stats.served_from_memory
        ),
        (2, 2, 0)
    );
    assert_eq!((stats.conflicts, stats.numbers_abandoned), (1, 0));
}

/// `diesel_seqgen::stats` sums the default generators' counts per key.
fn the_default_generator_counts_too<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let key = db.key("stats_default");
    let spec = common::blocks_of_ten(&key);
    diesel_seqgen::global::next_ids(&mut conn, &spec, 3).unwrap();
    diesel_seqgen::global::next_id(&mut conn, &spec).unwrap();
    let all = diesel_seqgen::global::stats();
    let stats = all
        .iter()
        .find(|s| s.key == key)
        .expect("the key is counted");
    assert_eq!(
        (
            stats.reservations,
            stats.numbers_reserved,
            stats.served_from_memory
        ),
        (1, 10, 1)
    );
}
