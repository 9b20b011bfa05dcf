//! Giving unused numbers back on a clean shutdown (`Generator::release`, `diesel_seqgen::release`):
//! only the instance that reserved last can, and nothing is ever issued twice.

use crate::common;

use common::{assert_distinct, TestConnection, TestDb};
use diesel_seqgen::{Error, Generator, Spec};

backend_tests!(
    a_released_block_is_where_the_next_instance_continues,
    only_the_last_reservation_goes_back,
    the_default_generator_releases_too,
    another_database_is_refused,
    the_block_reserved_ahead_goes_back_too,
);

fn spec(key: &str) -> Spec {
    Spec::builder(key)
        .prefix("N")
        .date("")
        .pad(6)
        .batch(10)
        .build()
        .unwrap()
}

/// One instance takes 3 of a block of 10 and shuts down cleanly: the next continues at 4.
/// The releasing generator itself can go on too (it reserves again, without a false "counter
/// went back").
fn a_released_block_is_where_the_next_instance_continues<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = spec(&db.key("released"));
    let first = Generator::new();
    let mut ids = first.next_ids(&mut conn, &spec, 3).unwrap();
    assert_eq!(first.release(&mut conn).unwrap(), 7);
    assert_eq!(
        first.release(&mut conn).unwrap(),
        0,
        "nothing left to give back"
    );
    let next = Generator::new();
    ids.push(next.next_id(&mut conn, &spec).unwrap());
    assert_eq!(ids.last().unwrap(), "N000004");
    ids.extend(first.next_ids(&mut conn, &spec, 2).unwrap());
    ids.extend(next.next_ids(&mut conn, &spec, 12).unwrap());
    assert_distinct(&ids);
}

/// With a pool, a generator 80 % into its block holds the next one too (reserved ahead):
/// both go back, the spare first, so the next instance continues at the first unused number.
fn the_block_reserved_ahead_goes_back_too<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = spec(&db.key("ahead"));
    let first = Generator::builder().pool(db.pool(2)).fixed_batch().build();
    let mut ids = first.next_ids(&mut conn, &spec, 8).unwrap();
    ids.push(first.next_id(&mut conn, &spec).unwrap()); // 80 % served: 11..=20 reserved ahead
                                                        // 10 and the spare 11..=20 held (on SQLite nothing is reserved ahead: 10 alone); release
                                                        // waits for the reservation under way.
    let ahead = <C::B as diesel_seqgen::Backend>::RESERVE_BESIDE_TRANSACTION;
    assert_eq!(
        first.release(&mut conn).unwrap(),
        if ahead { 11 } else { 1 }
    );
    let next = Generator::new();
    ids.push(next.next_id(&mut conn, &spec).unwrap());
    assert_eq!(ids.last().unwrap(), "N000010");
    assert_distinct(&ids);
}

/// Two instances interleaved: the one that did not reserve last cannot give back (its numbers
/// stay holes); the last one can. No number is ever issued twice.
fn only_the_last_reservation_goes_back<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = spec(&db.key("interleaved"));
    let (a, b) = (Generator::new(), Generator::new());
    let mut ids = vec![a.next_id(&mut conn, &spec).unwrap()]; // 1..=10
    ids.push(b.next_id(&mut conn, &spec).unwrap()); // 11..=20
    assert_eq!(a.release(&mut conn).unwrap(), 0, "b reserved after a");
    assert_eq!(b.release(&mut conn).unwrap(), 9);
    let c = Generator::new();
    ids.push(c.next_id(&mut conn, &spec).unwrap());
    assert_eq!(ids.last().unwrap(), "N000012");
    for generator in [&a, &b, &c] {
        ids.extend(generator.next_ids(&mut conn, &spec, 15).unwrap());
    }
    assert_distinct(&ids);
}

/// `diesel_seqgen::release` gives back what the process-wide default generator holds for the
/// connection's database: a database of its own, as other tests of this binary hold blocks
/// of the default generator in the shared one.
fn the_default_generator_releases_too<C: TestConnection>(db: TestDb<C>) {
    let own = db.scratch("default_release");
    let mut conn = own.connect();
    diesel_seqgen::run_migrations(&mut conn).unwrap();
    let spec = spec(&db.key("default_release"));
    let first = diesel_seqgen::global::next_id(&mut conn, &spec).unwrap();
    assert_eq!(first, "N000001");
    assert_eq!(diesel_seqgen::global::release(&mut conn).unwrap(), 9);
    assert_eq!(
        Generator::new().next_id(&mut conn, &spec).unwrap(),
        "N000002"
    );
    // The default generator reserves again afterwards, past what the other one took.
    let again = diesel_seqgen::global::next_id(&mut conn, &spec).unwrap();
    assert_distinct(&[first, again]);
}

/// Releasing through a connection to another database would lower a counter there that this
/// generator never advanced: refused, and that counter is untouched.
fn another_database_is_refused<C: TestConnection>(db: TestDb<C>) {
    let other = db.scratch("other");
    let mut other_conn = other.connect();
    diesel_seqgen::run_migrations(&mut other_conn).unwrap();
    let (mut conn, spec) = (db.connect(), spec(&db.key("elsewhere")));
    let generator = Generator::new();
    generator.next_id(&mut conn, &spec).unwrap();
    // The other database has the same key, at the value our block ended at.
    let elsewhere = Generator::new();
    elsewhere.next_ids(&mut other_conn, &spec, 10).unwrap();
    let err = generator.release(&mut other_conn).unwrap_err();
    assert!(matches!(err, Error::DifferentDatabase), "{err:?}");
    assert_eq!(
        Generator::new().next_id(&mut other_conn, &spec).unwrap(),
        "N000011"
    );
}
