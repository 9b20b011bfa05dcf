//! Numbers on a step (`step = 10`: 10, 20, 30): on every door (batched, gapless, scoped, own
//! and default generator, the derive's insert on the default generator as it comes and after
//! `use_pool`), read back to their counter, the capacity counted in IDs, and `set-start` taking
//! a number on the step.

use crate::common;

use common::{TestConnection, TestDb};
use diesel::prelude::*;
use diesel_seqgen::admin::{self, Setting};
use diesel_seqgen::insert::Insert;
use diesel_seqgen::{DistributedId, Error, Generator, Spec};

backend_tests!(
    every_door_goes_by_the_step,
    a_start_is_a_number_on_the_step,
    the_derive_goes_by_the_step_through_insert_into,
    the_derive_goes_by_the_step_through_insert_into_after_use_pool,
);

fn spec(key: &str) -> diesel_seqgen::SpecBuilder {
    Spec::builder(key)
        .prefix("S")
        .date("")
        .pad(4)
        .step(10)
        .start(10)
}

/// Reads `id` back to the counter it was made from, through the spec.
fn counter(spec: &Spec, id: &str) -> u64 {
    spec.counter_of(&spec.parse(id).unwrap()).unwrap()
}

fn every_door_goes_by_the_step<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let own = Generator::new();
    let batched = spec(&db.key("batched")).build().unwrap();
    let ids = own.next_ids(&mut conn, &batched, 3).unwrap();
    assert_eq!(ids, ["S0010", "S0020", "S0030"]);
    assert_eq!(counter(&batched, &ids[2]), 3);
    let default = spec(&db.key("default")).build().unwrap();
    let ids = diesel_seqgen::global::next_ids(&mut conn, &default, 2).unwrap();
    assert_eq!(ids, ["S0010", "S0020"]);
    let scoped = spec(&db.key("scoped")).scoped().build().unwrap();
    for scope in ["acme", "globex"] {
        let id = own.next_id(&mut conn, scoped.scope(scope)).unwrap();
        assert_eq!(id, "S0010");
    }
    let gapless = spec(&db.key("gapless")).gapless().build().unwrap();
    for expected in ["S0010", "S0020", "S0030"] {
        let id = conn
            .transaction(|conn| own.next_id(conn, &gapless))
            .unwrap();
        assert_eq!(id, expected);
    }
    // The counter counts IDs: the database's last value is the third, not 30.
    assert_eq!(own.last_value(&mut conn, &gapless).unwrap(), Some(3));
    // The capacity counts IDs too: 10..=90 in two digits are nine, then the overflow error.
    let narrow = spec(&db.key("narrow")).pad(2).gapless().build().unwrap();
    assert_eq!(narrow.capacity(), 9);
    let mut last = String::new();
    for _ in 0..9 {
        last = conn.transaction(|conn| own.next_id(conn, &narrow)).unwrap();
    }
    assert_eq!(last, "S90");
    let err = conn
        .transaction(|conn| own.next_id(conn, &narrow))
        .unwrap_err();
    assert!(matches!(err, Error::Overflow { .. }), "{err:?}");
}

/// A spec starting at 1000 on the step starts at the counter that prints 1000, and records
/// that counter on the key's row; an operator's start is a number on the step, stored as its
/// counter, and one off the step is refused.
fn a_start_is_a_number_on_the_step<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let late = spec(&db.key("late")).start(1000).gapless().build().unwrap();
    let id = conn
        .transaction(|conn| Generator::new().next_id(conn, &late))
        .unwrap();
    assert_eq!(id, "S1000");
    let rows = admin::counters(&mut conn, Some(late.key())).unwrap();
    assert_eq!(rows[0].start_value, Some(100), "{rows:?}");

    let key = db.key("operator");
    let gapless = spec(&key).gapless().build().unwrap();
    let first = conn
        .transaction(|conn| Generator::new().next_id(conn, &gapless))
        .unwrap();
    assert_eq!(first, "S0010");
    let err = admin::set(&mut conn, &key, Setting::StartValue, Some(1005)).unwrap_err();
    assert!(err.to_string().contains("not on the key's step"), "{err}");
    let change = admin::set(&mut conn, &key, Setting::StartValue, Some(2000)).unwrap();
    assert_eq!(
        change.after,
        Some(200),
        "stored as the counter that prints 2000"
    );
    let next = conn
        .transaction(|conn| Generator::new().next_id(conn, &gapless))
        .unwrap();
    assert_eq!(next, "S2000");
}

diesel::table! {
    step_rows (id) {
        id -> Text,
        gapless_no -> Text,
    }
}

#[derive(Insertable, DistributedId)]
#[diesel(table_name = step_rows)]
struct NewLine {
    #[distributed_id(
        key = "step_lines",
        prefix = "L",
        date = "",
        pad = 5,
        step = 10,
        start = 10
    )]
    id: String,
    #[distributed_id(
        key = "step_gapless",
        prefix = "G",
        date = "%Y",
        pad = 4,
        step = 5,
        gapless
    )]
    gapless_no: String,
}

fn the_derive_goes_by_the_step_through_insert_into<C>(db: TestDb<C>)
where
    C: TestConnection + diesel_seqgen::IdConnection,
    Vec<NewLine>: Insert<step_rows::table, C>,
{
    derive_by_the_step(db, false);
}

fn the_derive_goes_by_the_step_through_insert_into_after_use_pool<C>(db: TestDb<C>)
where
    C: TestConnection + diesel_seqgen::IdConnection,
    Vec<NewLine>: Insert<step_rows::table, C>,
{
    derive_by_the_step(db, true);
}

/// Rows one by one and a bulk, batched and gapless fields (PostgreSQL's one-statement gapless
/// insert cannot print a step: the insert must not take it).
fn derive_by_the_step<C>(db: TestDb<C>, use_pool: bool)
where
    C: TestConnection + diesel_seqgen::IdConnection,
    Vec<NewLine>: Insert<step_rows::table, C>,
{
    let table =
        "CREATE TABLE step_rows (id VARCHAR(20) PRIMARY KEY, gapless_no VARCHAR(20) NOT NULL)";
    let scratch = common::scratch_with_table(&db, "step", table, None);
    if use_pool {
        diesel_seqgen::global::use_pool(scratch.pool(4)).unwrap();
    }
    let mut conn = scratch.connect();
    let new = |n: usize| -> Vec<NewLine> {
        (0..n)
            .map(|_| NewLine {
                id: String::new(),
                gapless_no: String::new(),
            })
            .collect()
    };
    for _ in 0..2 {
        let mut one = new(1);
        conn.transaction(|conn| {
            diesel_seqgen::insert_into(step_rows::table)
                .values(&mut one)
                .execute(conn)
        })
        .unwrap();
    }
    let mut bulk = new(3);
    conn.transaction(|conn| {
        diesel_seqgen::insert_into(step_rows::table)
            .values(&mut bulk)
            .execute(conn)
    })
    .unwrap();
    let mut ids = C::texts(&mut conn, "SELECT id AS text FROM step_rows");
    ids.sort();
    assert_eq!(ids, ["L00010", "L00020", "L00030", "L00040", "L00050"]);
    let mut gapless: Vec<String> = C::texts(&mut conn, "SELECT gapless_no AS text FROM step_rows")
        .into_iter()
        .map(|g| g[g.len() - 4..].to_owned())
        .collect();
    gapless.sort();
    assert_eq!(gapless, ["0001", "0006", "0011", "0016", "0021"]);
    // The shape recorded on the key's row reads every ID back to its counter, 1..=5.
    let recorded = admin::recorded_spec(&mut conn, "step_lines").unwrap();
    assert_eq!(recorded.shape(), "L{date:}{seq:5,step=10}");
    let counters: Vec<u64> = ids.iter().map(|id| counter(&recorded, id)).collect();
    assert_eq!(counters, [1, 2, 3, 4, 5]);
    let recorded = admin::recorded_spec(&mut conn, "step_gapless").unwrap();
    assert_eq!(recorded.shape(), "G{date:%Y}{seq:4,step=5+1}");
}
