//! Numbering from a given number at go-live: `start` on the builder and in the derive, on every
//! door (batched, gapless, scoped, dated, own and default generator, the derive's insert), the
//! start recorded on the key's row for the tools, an operator's `start_value` winning, and
//! `set-start` before a key's first use.

use crate::common;

use common::{TestConnection, TestDb};
use diesel::prelude::*;
use diesel_seqgen::admin::{self, Setting};
use diesel_seqgen::{DistributedId, Error, Generator, Spec};

backend_tests!(
    every_door_starts_at_the_start,
    the_start_is_recorded_and_an_operators_wins,
    set_start_before_the_first_use_creates_the_key,
    the_derives_start_through_insert_into,
);

fn spec(key: &str) -> diesel_seqgen::SpecBuilder {
    Spec::builder(key).prefix("S").date("").pad(6).start(1000)
}

/// The first number of each door is 1000, the next ones follow, and a peek before the first
/// use says 1000 too.
fn every_door_starts_at_the_start<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let own = Generator::new();
    let batched = spec(&db.key("batched")).build().unwrap();
    assert_eq!(own.peek_next(&mut conn, &batched).unwrap(), 1000);
    assert_eq!(own.next_id(&mut conn, &batched).unwrap(), "S001000");
    assert_eq!(own.next_id(&mut conn, &batched).unwrap(), "S001001");
    let default = spec(&db.key("default")).build().unwrap();
    let ids = diesel_seqgen::global::next_ids(&mut conn, &default, 2).unwrap();
    assert_eq!(ids, ["S001000", "S001001"]);
    let dated = spec(&db.key("dated")).date("%Y").build().unwrap();
    let id = own.next_id(&mut conn, &dated).unwrap();
    assert!(id.ends_with("001000"), "{id}");
    let scoped = spec(&db.key("scoped")).scoped().build().unwrap();
    for scope in ["acme", "globex"] {
        assert_eq!(
            own.next_id(&mut conn, scoped.scope(scope)).unwrap(),
            "S001000"
        );
    }
    let gapless = spec(&db.key("gapless")).gapless().build().unwrap();
    for expected in ["S001000", "S001001"] {
        let id = conn
            .transaction(|conn| own.next_id(conn, &gapless))
            .unwrap();
        assert_eq!(id, expected);
    }
    // Inside a transaction without a pool, batched numbers are taken in it: the same start.
    let in_transaction = spec(&db.key("in_transaction")).build().unwrap();
    let id = conn
        .transaction(|conn| Generator::new().next_id(conn, &in_transaction))
        .unwrap();
    assert_eq!(id, "S001000");
    // Out of range: a spec error, never numbers it cannot print.
    let err = spec("k").pad(3).build().unwrap_err();
    assert!(err.to_string().contains("at most 999"), "{err}");
    assert!(spec("k").start(0).build().is_err());
}

/// The key's first use records the spec's start on its row (`seqgen gaps` and `peek` read it
/// there); an operator's `start_value` wins over the spec's, and numbers never go back.
fn the_start_is_recorded_and_an_operators_wins<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = spec(&db.key("recorded")).build().unwrap();
    Generator::new().next_id(&mut conn, &spec).unwrap();
    let rows = admin::counters(&mut conn, Some(spec.key())).unwrap();
    assert_eq!(rows[0].start_value, Some(1000), "{rows:?}");
    // A dated key: new periods start at the operator's value.
    let dated = Spec::builder(db.key("operator"))
        .date("%Y")
        .pad(6)
        .start(1000)
        .build()
        .unwrap();
    Generator::new().next_id(&mut conn, &dated).unwrap();
    admin::set(&mut conn, dated.key(), Setting::StartValue, Some(5000)).unwrap();
    let next_year = admin::peek(&mut conn, &dated, "2999").unwrap();
    assert_eq!(next_year.next, 5000);
    // A spec starting lower does not take the counter back.
    let lower = Spec::builder(spec.key())
        .prefix("S")
        .date("")
        .pad(6)
        .build()
        .unwrap();
    let id = Generator::new().next_id(&mut conn, &lower).unwrap();
    assert!(id.as_str() >= "S001100", "{id}");
}

/// `seqgen set-start` on a key no instance used yet creates its row, and its first number is
/// that start; a batch size for an unknown key is still refused (a typo creates nothing).
fn set_start_before_the_first_use_creates_the_key<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let key = db.key("go_live");
    let change = admin::set(&mut conn, &key, Setting::StartValue, Some(1000)).unwrap();
    assert!(change.created);
    let plain = Spec::builder(key.as_str())
        .prefix("G")
        .date("")
        .pad(6)
        .build()
        .unwrap();
    assert_eq!(
        Generator::new().next_id(&mut conn, &plain).unwrap(),
        "G001000"
    );
    let typo = db.key("go_liev");
    let err = admin::set(&mut conn, &typo, Setting::BatchSize, Some(10)).unwrap_err();
    assert!(matches!(err, Error::UnknownKey { .. }), "{err:?}");
}

diesel::table! {
    tickets (id) {
        id -> Text,
        name -> Text,
    }
}

#[derive(Insertable, DistributedId)]
#[diesel(table_name = tickets)]
struct NewTicket {
    #[distributed_id(key = "start_tickets", prefix = "T", date = "", pad = 5, start = 1000)]
    id: String,
    name: String,
}

#[derive(Insertable, DistributedId)]
#[diesel(table_name = tickets)]
struct NewReceipt {
    #[distributed_id(
        key = "start_receipts",
        prefix = "R",
        date = "",
        pad = 5,
        start = 500,
        gapless
    )]
    id: String,
    name: String,
}

/// `#[distributed_id(start = 1000)]` through `diesel_seqgen::insert_into`, batched and gapless
/// (PostgreSQL's one-statement insert from the second receipt on).
fn the_derives_start_through_insert_into<C>(db: TestDb<C>)
where
    C: TestConnection + diesel_seqgen::IdConnection,
    Vec<NewTicket>: diesel_seqgen::insert::Insert<tickets::table, C>,
    Vec<NewReceipt>: diesel_seqgen::insert::Insert<tickets::table, C>,
{
    let table = "CREATE TABLE tickets (id VARCHAR(20) PRIMARY KEY, name VARCHAR(20) NOT NULL)";
    let scratch = common::scratch_with_table(&db, "start", table, None);
    let mut conn = scratch.connect();
    let mut tickets: Vec<NewTicket> = (0..2)
        .map(|_| NewTicket {
            id: String::new(),
            name: "t".into(),
        })
        .collect();
    diesel_seqgen::insert_into(tickets::table)
        .values(&mut tickets)
        .execute(&mut conn)
        .unwrap();
    assert_eq!(
        [tickets[0].id.as_str(), &tickets[1].id],
        ["T01000", "T01001"]
    );
    for expected in ["R00500", "R00501", "R00502"] {
        let mut receipt = vec![NewReceipt {
            id: String::new(),
            name: "r".into(),
        }];
        conn.transaction(|conn| {
            diesel_seqgen::insert_into(tickets::table)
                .values(&mut receipt)
                .execute(conn)
        })
        .unwrap();
        assert_eq!(receipt[0].id, expected);
    }
}
