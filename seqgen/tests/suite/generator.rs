//! The batched generator's behaviour, on every backend.

use crate::common;

use std::sync::{Arc, Barrier};
use std::thread;

use chrono::{TimeDelta, TimeZone, Utc};
use common::{assert_distinct, TestConnection, TestDb};
use diesel_seqgen::clock::FixedClock;
use diesel_seqgen::{Error, Generator, Spec};

backend_tests!(
    formats_the_source_examples,
    twenty_threads_share_one_block_at_a_time,
    eight_threads_on_one_busy_key_account_for_every_number,
    two_generators_get_disjoint_blocks,
    midnight_starts_a_new_period,
    a_clock_a_day_behind_never_reissues,
    rollback_never_hands_a_number_out_twice,
    bulk_requests_reserve_once,
    a_busy_key_reserves_growing_blocks,
    with_a_pool_the_next_block_is_reserved_ahead,
    statements_per_reservation,
    a_pool_without_an_idle_connection_refills_in_the_foreground,
    overflow_is_an_error_naming_key_and_period,
    missing_table_says_to_migrate,
    default_generator_keeps_databases_apart,
    a_generator_refuses_a_second_database,
);

fn clock_at(y: i32, m: u32, d: u32, h: u32, min: u32, s: u32) -> FixedClock {
    FixedClock::new(Utc.with_ymd_and_hms(y, m, d, h, min, s).unwrap())
}

fn spec(key: &str, prefix: &str, date: &str, pad: u32, batch: u32) -> Spec {
    Spec::builder(key)
        .prefix(prefix)
        .date(date)
        .pad(pad)
        .batch(batch)
        .build()
        .unwrap()
}

/// The examples of the source designs, with a fixed clock.
fn formats_the_source_examples<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let generator = Generator::builder()
        .clock(clock_at(2025, 7, 2, 10, 30, 0))
        .build();
    let users = spec(&db.key("users"), "U", "%Y%m%d", 6, 100);
    let menus = spec(&db.key("menus"), "MENU", "", 6, 100);
    let orders = spec(&db.key("orders"), "ORD", "%y%m", 4, 100);
    let plain = spec(&db.key("plain"), "", "%Y%m%d", 8, 100);

    assert_eq!(
        generator.next_id(&mut conn, &users).unwrap(),
        "U20250702000001"
    );
    assert_eq!(
        generator.next_id(&mut conn, &users).unwrap(),
        "U20250702000002"
    );
    assert_eq!(generator.next_id(&mut conn, &menus).unwrap(), "MENU000001");
    assert_eq!(
        generator.next_id(&mut conn, &orders).unwrap(),
        "ORD25070001"
    );
    assert_eq!(
        generator.next_id(&mut conn, &plain).unwrap(),
        "2025070200000001"
    );
    assert_eq!(
        generator.next_number(&mut conn, &plain).unwrap(),
        2025070200000002
    );
    let counter = spec(&db.key("counter"), "", "", 6, 100);
    assert_eq!(generator.next_number(&mut conn, &counter).unwrap(), 1);
    assert_eq!(
        generator.next_numbers(&mut conn, &counter, 2).unwrap(),
        [2, 3]
    );
    assert!(matches!(
        generator.next_number(&mut conn, &users),
        Err(Error::NotNumeric { .. })
    ));
}

/// 20 threads x 100 IDs through a pool at batch 7: every ID distinct, and exactly
/// ceil(2000 / 7) reservations: when a block runs dry one thread refills it and the others
/// wait.
fn twenty_threads_share_one_block_at_a_time<C: TestConnection>(db: TestDb<C>) {
    let pool = db.pool(20);
    let generator = Generator::builder().fixed_batch().build();
    let spec = Arc::new(spec(&db.key("threads"), "T", "", 8, 7));
    let start = Arc::new(Barrier::new(20));
    let handles: Vec<_> = (0..20)
        .map(|_| {
            let (pool, generator, spec, start) =
                (pool.clone(), generator.clone(), spec.clone(), start.clone());
            thread::spawn(move || {
                let mut conn = pool.get().unwrap();
                start.wait();
                (0..100)
                    .map(|_| generator.next_id(&mut *conn, &spec).unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let ids: Vec<String> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    assert_eq!(ids.len(), 2000);
    assert_distinct(&ids);
    assert_eq!(generator.reservations(), 2000u64.div_ceil(7));
}

/// 8 threads taking 20,000 IDs each from one key with large blocks, where threads take
/// numbers ahead of need from a key they keep finding locked (leases): every ID distinct,
/// each thread's in increasing order, and once the threads ended and the generator released
/// its blocks, every number reserved is accounted for as served, abandoned or given back.
fn eight_threads_on_one_busy_key_account_for_every_number<C: TestConnection>(db: TestDb<C>) {
    const THREADS: usize = 8;
    const EACH: usize = 20_000;
    let pool = db.pool(THREADS as u32);
    let generator = Generator::new();
    let spec = Arc::new(spec(&db.key("busy"), "B", "", 12, 100_000));
    let start = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let (pool, generator, spec, start) =
                (pool.clone(), generator.clone(), spec.clone(), start.clone());
            thread::spawn(move || {
                let mut conn = pool.get().unwrap();
                start.wait();
                (0..EACH)
                    .map(|_| generator.next_id(&mut *conn, &spec).unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut ids = Vec::new();
    for handle in handles {
        // Joined: the thread has ended, and with it its leases.
        let mine = handle.join().unwrap();
        assert!(
            mine.windows(2).all(|w| w[0] < w[1]),
            "a thread's IDs went back"
        );
        ids.extend(mine);
    }
    assert_distinct(&ids);
    generator.release(&mut *pool.get().unwrap()).unwrap();
    let stats = &generator.stats()[0];
    let served = (THREADS * EACH) as u64;
    // A reservation made in the foreground serves its first number with it.
    assert!(
        served - stats.reservations <= stats.served_from_memory,
        "{stats:?}"
    );
    assert!(stats.served_from_memory <= served, "{stats:?}");
    assert_eq!(
        stats.numbers_reserved,
        served + stats.numbers_abandoned + stats.numbers_given_back,
        "{stats:?}"
    );
}

/// Two generators on one database (two app instances), interleaved: disjoint blocks.
fn two_generators_get_disjoint_blocks<C: TestConnection>(db: TestDb<C>) {
    let (mut a_conn, mut b_conn) = (db.connect(), db.connect());
    let (a, b) = (Generator::new(), Generator::new());
    let spec = spec(&db.key("instances"), "I", "", 6, 10);
    let mut ids = Vec::new();
    for round in 0..50 {
        let n = 1 + round % 7;
        ids.extend(a.next_ids(&mut a_conn, &spec, n).unwrap());
        ids.extend(b.next_ids(&mut b_conn, &spec, n).unwrap());
    }
    assert_distinct(&ids);
    // A holds 1..=10, B 11..=20: their first IDs show the blocks are separate.
    assert_eq!(ids[0], "I000001");
    assert_eq!(ids[1], "I000011");
}

/// At midnight the counter starts again at 1, and the old day's block is abandoned.
fn midnight_starts_a_new_period<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let clock = Arc::new(clock_at(2025, 7, 2, 23, 59, 59));
    let generator = Generator::builder().clock(clock.clone()).build();
    let spec = spec(&db.key("midnight"), "U", "%Y%m%d", 6, 100);
    assert_eq!(
        generator.next_id(&mut conn, &spec).unwrap(),
        "U20250702000001"
    );
    assert_eq!(
        generator.next_id(&mut conn, &spec).unwrap(),
        "U20250702000002"
    );
    clock.advance(TimeDelta::seconds(1));
    // The block cached before midnight still holds 98 numbers: none is stamped with the new day.
    assert_eq!(
        generator.next_id(&mut conn, &spec).unwrap(),
        "U20250703000001"
    );
    assert_eq!(generator.reservations(), 2);
}

/// One instance a day behind another, both busy around midnight: no ID twice, and the
/// instance behind continues its own day's counter instead of resetting anything.
fn a_clock_a_day_behind_never_reissues<C: TestConnection>(db: TestDb<C>) {
    let (mut ahead_conn, mut behind_conn) = (db.connect(), db.connect());
    let ahead_clock = Arc::new(clock_at(2025, 7, 3, 23, 59, 58));
    let behind_clock = Arc::new(clock_at(2025, 7, 2, 23, 59, 58));
    let ahead = Generator::builder().clock(ahead_clock.clone()).build();
    let behind = Generator::builder().clock(behind_clock.clone()).build();
    // `%d%m%Y` as well: a period that does not sort by date must not matter either.
    for (name, date) in [("skew_ymd", "%Y%m%d"), ("skew_dmy", "%d%m%Y")] {
        let spec = spec(&db.key(name), "S", date, 6, 5);
        let mut ids = Vec::new();
        for step in 0..6 {
            ids.extend(ahead.next_ids(&mut ahead_conn, &spec, 3).unwrap());
            ids.extend(behind.next_ids(&mut behind_conn, &spec, 3).unwrap());
            if step % 2 == 1 {
                ahead_clock.advance(TimeDelta::seconds(1));
                behind_clock.advance(TimeDelta::seconds(1));
            }
        }
        assert_distinct(&ids);
    }
}

/// Numbers taken inside a transaction that rolls back are never cached: after the rollback
/// the next callers, on another connection, get numbers that were never committed before.
fn rollback_never_hands_a_number_out_twice<C: TestConnection>(db: TestDb<C>) {
    let (mut caller, mut other) = (db.connect(), db.connect());
    let generator = Generator::new();
    let spec = spec(&db.key("rollback"), "R", "", 6, 10);
    let mut committed = Vec::new();

    let rolled_back: Result<(), diesel::result::Error> = caller.transaction(|conn| {
        let ids = generator.next_ids(conn, &spec, 3).unwrap();
        assert_eq!(ids, ["R000001", "R000002", "R000003"]);
        Err(diesel::result::Error::RollbackTransaction)
    });
    assert!(rolled_back.is_err());

    committed.extend(generator.next_ids(&mut other, &spec, 9).unwrap());
    committed.extend(generator.next_ids(&mut other, &spec, 10).unwrap());
    // A committed transaction: its numbers count too.
    caller
        .transaction(|conn| {
            committed.extend(generator.next_ids(conn, &spec, 2).unwrap());
            Ok::<_, diesel::result::Error>(())
        })
        .unwrap();
    committed.extend(generator.next_ids(&mut other, &spec, 25).unwrap());
    assert_distinct(&committed);
    assert_eq!(committed.len(), 46);
}

/// A bulk request larger than the batch reserves once; 1,000 IDs at batch 100 in bulks of 50
/// cost 10 reservations.
fn bulk_requests_reserve_once<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let generator = Generator::builder().fixed_batch().build();
    let spec = spec(&db.key("bulk"), "B", "", 6, 100);
    let big = generator.next_ids(&mut conn, &spec, 1000).unwrap();
    assert_eq!(generator.reservations(), 1);
    let mut ids = big;
    for _ in 0..20 {
        ids.extend(generator.next_ids(&mut conn, &spec, 50).unwrap());
    }
    assert_eq!(generator.reservations(), 11);
    assert_eq!(ids.len(), 2000);
    assert_distinct(&ids);
    assert_eq!(ids[1999], "B002000");
}

/// A key whose blocks run dry quickly gets bigger ones (seen in the database's counter), up to
/// the bound; the operator's `batch_size` wins over the growth; a big request still makes one
/// reservation.
fn a_busy_key_reserves_growing_blocks<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    // Every block here lasts far less than a minute.
    let generator = Generator::builder()
        .adaptive_batch(std::time::Duration::from_secs(60), 80)
        .build();
    let spec = spec(&db.key("adaptive"), "A", "", 6, 10);
    let mut last_values = Vec::new();
    let mut ids = Vec::new();
    for _ in 0..6 {
        let before = generator.reservations();
        while generator.reservations() == before {
            ids.push(generator.next_id(&mut conn, &spec).unwrap());
        }
        last_values.push(
            diesel_seqgen::global::last_value(&mut conn, &spec)
                .unwrap()
                .unwrap(),
        );
    }
    // Blocks of 10, 20, 40, 80, 80, 80.
    assert_eq!(last_values, [10, 30, 70, 150, 230, 310]);
    assert_distinct(&ids);

    conn.batch_execute(&format!(
        "UPDATE db_key SET batch_size = 5 WHERE key_name = '{}' AND period = ''",
        spec.key()
    ))
    .unwrap();
    generator.next_ids(&mut conn, &spec, 79).unwrap(); // the rest of the block of 80
    let before = generator.reservations();
    generator.next_id(&mut conn, &spec).unwrap();
    assert_eq!(
        diesel_seqgen::global::last_value(&mut conn, &spec).unwrap(),
        Some(315)
    );
    generator.next_ids(&mut conn, &spec, 500).unwrap();
    assert_eq!(
        generator.reservations(),
        before + 2,
        "500 IDs in one reservation"
    );
}

/// With a pool, the next block is reserved in the background once 80 % of the current one is
/// served, and a caller that empties the block first waits for that reservation instead of
/// making its own: after the first block, the caller's connection sends no statement at all
/// (PostgreSQL, MySQL). On SQLite, whose one writer the app's transactions need, the caller's
/// connection refills as before.
fn with_a_pool_the_next_block_is_reserved_ahead<C: TestConnection>(db: TestDb<C>) {
    let generator = Generator::builder().pool(db.pool(2)).fixed_batch().build();
    let spec = spec(&db.key("ahead"), "H", "", 8, 10);
    let mut conn = db.connect();
    let mut ids = vec![generator.next_id(&mut conn, &spec).unwrap()];
    let queries = common::count_queries(&mut conn);
    for _ in 0..299 {
        ids.push(generator.next_id(&mut conn, &spec).unwrap());
    }
    // One instance: its blocks follow one another, so its IDs do too.
    let expected: Vec<String> = (1..=300).map(|n| format!("H{n:08}")).collect();
    assert_eq!(ids, expected);
    let sent = queries.load(std::sync::atomic::Ordering::Relaxed);
    if <C::B as diesel_seqgen::Backend>::RESERVE_BESIDE_TRANSACTION {
        assert_eq!(sent, 0, "the caller's connection reserved");
    } else {
        assert!(sent > 0);
    }
    assert_eq!(generator.reservations(), 30);
}

/// The caller holds the pool's only connection: nothing can be reserved ahead, so the caller
/// refills on its own connection, once per block, and the IDs still follow one another.
fn a_pool_without_an_idle_connection_refills_in_the_foreground<C: TestConnection>(db: TestDb<C>) {
    let pool = db.pool(1);
    let generator = Generator::builder()
        .pool(pool.clone())
        .fixed_batch()
        .build();
    let spec = spec(&db.key("no_idle"), "F", "", 8, 10);
    let mut conn = pool.get().unwrap();
    let ids: Vec<String> = (0..100)
        .map(|_| generator.next_id(&mut conn, &spec).unwrap())
        .collect();
    let expected: Vec<String> = (1..=100).map(|n| format!("F{n:08}")).collect();
    assert_eq!(ids, expected);
    assert_eq!(generator.reservations(), 10);
}

/// What a reservation costs once the key is known: on PostgreSQL one statement reads the
/// database's identity, durability and the key's settings and reserves; SQLite (in-process)
/// reads first, then reserves; MySQL has no RETURNING, so the new value is read back, with
/// the identity. An operator's new `batch_size` is read first on MySQL, once.
fn statements_per_reservation<C: TestConnection>(db: TestDb<C>) {
    let generator = Generator::builder().fixed_batch().build();
    let spec = spec(&db.key("statements"), "S", "", 6, 10);
    let mut conn = db.connect();
    generator.next_ids(&mut conn, &spec, 10).unwrap(); // the key's shape is recorded
    let queries = common::count_queries(&mut conn);
    for round in 1..=3 {
        generator.next_ids(&mut conn, &spec, 10).unwrap(); // one block of 10
        let expected = match C::NAME {
            "postgres" => 1,
            _ => 2,
        };
        assert_eq!(
            queries.load(std::sync::atomic::Ordering::Relaxed),
            expected * round
        );
    }
    assert_eq!(generator.reservations(), 4);
    assert_eq!(
        diesel_seqgen::global::last_value(&mut conn, &spec).unwrap(),
        Some(40)
    );

    // An operator's `batch_size` sizes the block: read first, everywhere but on PostgreSQL.
    conn.batch_execute(&format!(
        "UPDATE db_key SET batch_size = 25 WHERE key_name = '{}' AND period = ''",
        spec.key()
    ))
    .unwrap();
    for (round, last) in [(1, 65), (2, 90)] {
        let queries = common::count_queries(&mut conn);
        generator.next_ids(&mut conn, &spec, 10).unwrap();
        generator.next_ids(&mut conn, &spec, 15).unwrap(); // the rest of the block of 25
        let expected = match (C::NAME, round) {
            ("postgres", _) => 1,
            // The known key's statement finds a block size it was not told, then three.
            ("mysql", 1) => 4,
            _ => 2,
        };
        assert_eq!(queries.load(std::sync::atomic::Ordering::Relaxed), expected);
        assert_eq!(
            diesel_seqgen::global::last_value(&mut conn, &spec).unwrap(),
            Some(last)
        );
    }
    // Cleared: the next block is the spec's again at once.
    conn.batch_execute(&format!(
        "UPDATE db_key SET batch_size = NULL WHERE key_name = '{}' AND period = ''",
        spec.key()
    ))
    .unwrap();
    generator.next_ids(&mut conn, &spec, 10).unwrap();
    assert_eq!(
        diesel_seqgen::global::last_value(&mut conn, &spec).unwrap(),
        Some(100)
    );
}

/// Past `10^pad - 1` the spec cannot format a counter: a clear error, never a truncated or
/// wrapped ID, and the numbers before the limit are all handed out.
fn overflow_is_an_error_naming_key_and_period<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let generator = Generator::builder()
        .clock(clock_at(2025, 7, 2, 0, 0, 0))
        .build();
    let key = db.key("overflow");
    let spec = spec(&key, "O", "%Y", 2, 30);
    let ids = generator.next_ids(&mut conn, &spec, 99).unwrap();
    assert_eq!(ids.last().unwrap(), "O202599");
    match generator.next_id(&mut conn, &spec) {
        Err(Error::Overflow {
            key: k,
            period,
            max: 99,
        }) => assert_eq!((k.as_str(), period.as_str()), (key.as_str(), "2025")),
        other => panic!("expected an overflow error, got {other:?}"),
    }
    let message = generator.next_id(&mut conn, &spec).unwrap_err().to_string();
    assert!(
        message.contains(&key) && message.contains("2025"),
        "{message}"
    );
}

/// Before the migrations run, the error says to run them.
fn missing_table_says_to_migrate<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    // Point the statement at a table that does not exist by using a fresh SQLite file, or,
    // on a server, by checking the wording on a query against a missing db_key schema.
    let spec = spec(&db.key("missing"), "M", "", 6, 10);
    if C::NAME == "sqlite" {
        let dir = tempfile::tempdir().unwrap();
        let mut empty = C::establish(dir.path().join("empty.db").to_str().unwrap()).unwrap();
        let err = Generator::new().next_id(&mut empty, &spec).unwrap_err();
        assert!(matches!(err, Error::MissingTable(_)), "{err:?}");
        assert!(err.to_string().contains("run seqgen's migrations"), "{err}");
    }
    // And with the table there, the same call works.
    Generator::new().next_id(&mut conn, &spec).unwrap();
}

/// The process-wide default keeps one cache per database: two fresh SQLite files both
/// start at 1, and going back and forth between them never mixes their numbers.
fn default_generator_keeps_databases_apart<C: TestConnection>(db: TestDb<C>) {
    if C::NAME != "sqlite" {
        return; // the server backends have one test database
    }
    let other = TestDb::<C>::open("default_generator_other").unwrap();
    let (mut a, mut b) = (db.connect(), other.connect());
    let spec = spec("same_key_in_two_databases", "D", "", 6, 100);
    assert_eq!(
        diesel_seqgen::global::next_id(&mut a, &spec).unwrap(),
        "D000001"
    );
    assert_eq!(
        diesel_seqgen::global::next_id(&mut b, &spec).unwrap(),
        "D000001"
    );
    assert_eq!(
        diesel_seqgen::global::next_id(&mut a, &spec).unwrap(),
        "D000002"
    );
    assert_eq!(
        diesel_seqgen::global::next_ids(&mut b, &spec, 2).unwrap(),
        ["D000002", "D000003"]
    );
}

/// An explicit generator serves one database and says so when handed another.
fn a_generator_refuses_a_second_database<C: TestConnection>(db: TestDb<C>) {
    if C::NAME != "sqlite" {
        return;
    }
    let other = TestDb::<C>::open("refuses_other").unwrap();
    let generator = Generator::new();
    let spec = spec("one_generator_two_databases", "G", "", 6, 1);
    generator.next_id(&mut db.connect(), &spec).unwrap();
    let err = generator.next_id(&mut other.connect(), &spec).unwrap_err();
    assert!(matches!(err, Error::DifferentDatabase), "{err:?}");
}
