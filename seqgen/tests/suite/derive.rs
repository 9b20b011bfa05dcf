//! `#[derive(DistributedId)]` end to end on SQLite files: IDs filled on the insert's own
//! connection, through `diesel_seqgen::insert_into` and through the explicit hook.
#![cfg(feature = "sqlite")]

use crate::common;

use std::thread;

use common::{assert_distinct, TestDb};
use diesel::prelude::*;
use diesel_seqgen::{DistributedId, Generator};

diesel::table! {
    users (id) {
        id -> Text,
        name -> Text,
    }
}

diesel::table! {
    orders (order_no) {
        order_no -> Text,
        invoice_no -> Nullable<BigInt>,
        amount -> BigInt,
    }
}

#[derive(Insertable, DistributedId, Debug, Clone)]
#[diesel(table_name = users)]
struct NewUser {
    #[distributed_id(prefix = "U", date = "%Y%m%d", pad = 6, batch = 100)]
    id: String,
    name: String,
}

/// Two ID fields, two keys: an order number and a numeric invoice number.
#[derive(Insertable, DistributedId, Debug)]
#[diesel(table_name = orders)]
struct NewOrder {
    #[distributed_id(prefix = "ORD", date = "%y%m", pad = 4, batch = 10)]
    order_no: String,
    #[distributed_id(key = "invoices", date = "", pad = 12, batch = 10)]
    invoice_no: Option<i64>,
    amount: i64,
}

diesel::table! {
    invoices (number) {
        number -> Text,
        order_no -> Text,
    }
}

/// A gapless invoice number beside a batched order number, in one struct.
#[derive(Insertable, DistributedId, Debug)]
#[diesel(table_name = invoices)]
struct NewInvoice {
    #[distributed_id(prefix = "INV", date = "", pad = 6, gapless)]
    number: String,
    #[distributed_id(key = "invoice_orders", prefix = "O", date = "", pad = 6)]
    order_no: String,
}

#[derive(Queryable, Debug)]
struct User {
    id: String,
    name: String,
}

fn open(test: &str) -> (TestDb<SqliteConnection>, SqliteConnection) {
    let db = TestDb::<SqliteConnection>::open(test).unwrap();
    let mut conn = db.connect();
    diesel::sql_query("CREATE TABLE users (id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL)")
        .execute(&mut conn)
        .unwrap();
    diesel::sql_query(
        "CREATE TABLE orders (order_no TEXT PRIMARY KEY NOT NULL, invoice_no BIGINT UNIQUE, amount BIGINT NOT NULL)",
    )
    .execute(&mut conn)
    .unwrap();
    diesel::sql_query(
        "CREATE TABLE invoices (number TEXT PRIMARY KEY NOT NULL, order_no TEXT NOT NULL UNIQUE)",
    )
    .execute(&mut conn)
    .unwrap();
    (db, conn)
}

fn user(name: &str) -> NewUser {
    NewUser {
        id: String::new(),
        name: name.to_owned(),
    }
}

fn stored_ids(conn: &mut SqliteConnection) -> Vec<String> {
    users::table
        .select(users::id)
        .order(users::id)
        .load(conn)
        .unwrap()
}

#[test]
fn insert_into_fills_one_row_and_a_bulk() {
    let (_db, mut conn) = open("insert_into");
    let mut ada = user("Ada");
    let n = diesel_seqgen::insert_into(users::table)
        .values(&mut ada)
        .execute(&mut conn)
        .unwrap();
    assert_eq!(n, 1);
    assert!(
        ada.id.starts_with('U') && ada.id.ends_with("000001"),
        "{}",
        ada.id
    );

    let mut bulk: Vec<NewUser> = (0..5).map(|i| user(&format!("u{i}"))).collect();
    diesel_seqgen::insert_into(users::table)
        .values(&mut bulk)
        .execute(&mut conn)
        .unwrap();
    let slice: &mut [NewUser] = &mut [user("s1"), user("s2")];
    diesel_seqgen::insert_into(users::table)
        .values(slice)
        .execute(&mut conn)
        .unwrap();

    let mut expected: Vec<String> = std::iter::once(ada.id.clone())
        .chain(bulk.iter().map(|u| u.id.clone()))
        .collect();
    expected.sort();
    assert!(expected[5].ends_with("000006"));
    let stored = stored_ids(&mut conn);
    assert_eq!(stored.len(), 8);
    assert!(expected.iter().all(|id| stored.contains(id)));
}

#[test]
fn explicit_hook_then_plain_diesel() {
    let (_db, mut conn) = open("explicit_hook");
    let mut grace = user("Grace");
    diesel_seqgen::assign_ids(&mut conn, &mut grace).unwrap();
    diesel::insert_into(users::table)
        .values(&grace)
        .execute(&mut conn)
        .unwrap();

    let mut rows = vec![user("a"), user("b"), user("c")];
    diesel_seqgen::assign_ids(&mut conn, &mut rows).unwrap();
    diesel::insert_into(users::table)
        .values(&rows)
        .execute(&mut conn)
        .unwrap();

    let mut all: Vec<String> = rows.iter().map(|u| u.id.clone()).collect();
    all.push(grace.id.clone());
    all.sort();
    assert_eq!(stored_ids(&mut conn), all);
}

#[test]
fn ids_set_by_the_caller_are_kept() {
    let (_db, mut conn) = open("caller_set");
    let mut rows = vec![
        NewUser {
            id: "IMPORTED-1".into(),
            name: "kept".into(),
        },
        user("filled"),
    ];
    diesel_seqgen::insert_into(users::table)
        .values(&mut rows)
        .execute(&mut conn)
        .unwrap();
    assert_eq!(rows[0].id, "IMPORTED-1");
    assert!(rows[1].id.ends_with("000001"));

    // A numeric field: 0 and None are unset, anything else is kept.
    let mut order = NewOrder {
        order_no: "ORD-MANUAL".into(),
        invoice_no: Some(42),
        amount: 0,
    };
    diesel_seqgen::assign_ids(&mut conn, &mut order).unwrap();
    assert_eq!(
        (order.order_no.as_str(), order.invoice_no),
        ("ORD-MANUAL", Some(42))
    );
}

#[test]
fn two_fields_draw_from_two_keys() {
    let (_db, mut conn) = open("two_keys");
    let mut orders: Vec<NewOrder> = (1..=3)
        .map(|amount| NewOrder {
            order_no: String::new(),
            invoice_no: None,
            amount,
        })
        .collect();
    let stored: Vec<(String, Option<i64>, i64)> = diesel_seqgen::insert_into(orders::table)
        .values(&mut orders)
        .get_results(&mut conn)
        .unwrap();
    assert_eq!(stored.len(), 3);
    assert_eq!(
        orders.iter().map(|o| o.invoice_no).collect::<Vec<_>>(),
        [Some(1), Some(2), Some(3)]
    );
    assert!(orders[2].order_no.starts_with("ORD") && orders[2].order_no.ends_with("0003"));
    assert_eq!(stored[0].0, orders[0].order_no);
}

#[test]
fn get_result_returns_the_inserted_row() {
    let (_db, mut conn) = open("get_result");
    let mut ada = user("Ada");
    let row: User = diesel_seqgen::insert_into(users::table)
        .values(&mut ada)
        .get_result(&mut conn)
        .unwrap();
    assert_eq!((row.id, row.name), (ada.id, "Ada".to_owned()));
}

#[test]
fn a_thousand_rows_at_batch_100_cost_at_most_ten_reservations() {
    let (_db, mut conn) = open("thousand");
    let generator = Generator::new();
    let mut ids = Vec::new();
    for chunk in 0..10 {
        let mut rows: Vec<NewUser> = (0..100).map(|i| user(&format!("{chunk}-{i}"))).collect();
        diesel_seqgen::insert_into(users::table)
            .values(&mut rows)
            .with_generator(&generator)
            .execute(&mut conn)
            .unwrap();
        ids.extend(rows.into_iter().map(|u| u.id));
    }
    assert!(
        generator.reservations() <= 10,
        "{}",
        generator.reservations()
    );
    assert_distinct(&ids);
    assert_eq!(stored_ids(&mut conn).len(), 1000);
}

/// 8 threads inserting through a pool into a table whose ID is the primary key: no constraint
/// violation, every row there.
#[test]
fn eight_threads_insert_without_a_constraint_violation() {
    let (db, _conn) = open("eight_threads");
    let pool = db.pool(8);
    let generator = Generator::new();
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let (pool, generator) = (pool.clone(), generator.clone());
            thread::spawn(move || {
                let mut conn = pool.get().unwrap();
                for i in 0..125 {
                    let mut rows = vec![user(&format!("{t}-{i}"))];
                    if i % 5 == 0 {
                        rows.push(user(&format!("{t}-{i}-extra")));
                    }
                    diesel_seqgen::insert_into(users::table)
                        .values(&mut rows)
                        .with_generator(&generator)
                        .execute(&mut *conn)
                        .unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let rows: i64 = users::table
        .count()
        .get_result(&mut pool.get().unwrap())
        .unwrap();
    assert_eq!(rows, 8 * (125 + 25));
}

/// `insert_into` opens a transaction around a gapless fill and its insert: when the insert
/// fails, the number goes back and the next invoice gets it.
#[test]
fn gapless_and_batched_fields_in_one_struct() {
    let (_db, mut conn) = open("gapless_insert");
    let invoice = |order_no: &str| NewInvoice {
        number: String::new(),
        order_no: order_no.to_owned(),
    };
    let mut first = invoice("");
    diesel_seqgen::insert_into(invoices::table)
        .values(&mut first)
        .execute(&mut conn)
        .unwrap();
    assert_eq!(first.number, "INV000001");
    assert!(first.order_no.starts_with('O'));

    // The same order number again: the insert fails, and its invoice number is given back.
    let mut clash = invoice(&first.order_no);
    let err = diesel_seqgen::insert_into(invoices::table)
        .values(&mut clash)
        .execute(&mut conn)
        .unwrap_err();
    assert!(matches!(err, diesel_seqgen::Error::Database(_)), "{err:?}");
    // The record is as it was given: a retry must not reuse a number the rollback gave back.
    assert_eq!(clash.number, "");
    assert_eq!(clash.order_no, first.order_no);

    // A statement that skips the record: the closure says so, and the number goes back too.
    let mut skipped = invoice(&first.order_no);
    let err = diesel_seqgen::insert_into(invoices::table)
        .values(&mut skipped)
        .execute_with(&mut conn, |table, row, conn| {
            match diesel::insert_into(table)
                .values(row)
                .on_conflict_do_nothing()
                .execute(conn)?
            {
                0 => Err(diesel::result::Error::RollbackTransaction),
                n => Ok(n),
            }
        })
        .unwrap_err();
    assert!(matches!(err, diesel_seqgen::Error::Database(_)), "{err:?}");
    assert_eq!(skipped.number, "");

    let mut bulk = vec![invoice(""), invoice("")];
    diesel_seqgen::insert_into(invoices::table)
        .values(&mut bulk)
        .execute(&mut conn)
        .unwrap();
    assert_eq!(
        (bulk[0].number.as_str(), bulk[1].number.as_str()),
        ("INV000002", "INV000003")
    );

    // The explicit hook refuses to take a gapless number outside a transaction.
    let mut lone = invoice("");
    let err = diesel_seqgen::assign_ids(&mut conn, &mut lone).unwrap_err();
    assert!(
        matches!(err, diesel_seqgen::Error::OutsideTransaction { .. }),
        "{err:?}"
    );
    assert!(
        lone.number.is_empty() && lone.order_no.is_empty(),
        "nothing filled"
    );
}

/// Every policy attribute reaches the runtime: a ticket number that cycles, a template with a
/// series, a date in a fixed time zone, letters after the digits run out.
#[derive(DistributedId, Debug)]
struct Ticket {
    #[distributed_id(
        key = "tickets",
        date = "",
        pad = 2,
        batch = 50,
        overflow = "cycle",
        max = 3
    )]
    ticket: String,
    #[distributed_id(
        key = "boxes",
        format = "BOX/{date}/{series}-{seq}",
        date = "%Y",
        tz = "+08:00",
        pad = 1,
        series = ["A", "B"],
        max = 2
    )]
    r#box: String,
    #[distributed_id(key = "codes", date = "", pad = 1, overflow = "letters")]
    code: String,
}

#[test]
fn policies_through_the_derive() {
    let (_db, mut conn) = open("policies");
    let mut tickets: Vec<Ticket> = (0..4)
        .map(|_| Ticket {
            ticket: String::new(),
            r#box: String::new(),
            code: String::new(),
        })
        .collect();
    diesel_seqgen::assign_ids(&mut conn, &mut tickets).unwrap();
    let year = chrono::Utc::now()
        .with_timezone(&chrono::FixedOffset::east_opt(8 * 3600).unwrap())
        .format("%Y")
        .to_string();
    let got: Vec<(&str, &str, &str)> = tickets
        .iter()
        .map(|t| (t.ticket.as_str(), t.r#box.as_str(), t.code.as_str()))
        .collect();
    let boxes: Vec<String> = ["A-1", "A-2", "B-1", "B-2"]
        .iter()
        .map(|s| format!("BOX/{year}/{s}"))
        .collect();
    assert_eq!(
        got,
        [
            ("01", boxes[0].as_str(), "1"),
            ("02", boxes[1].as_str(), "2"),
            ("03", boxes[2].as_str(), "3"),
            ("01", boxes[3].as_str(), "4"),
        ]
    );
    let mut more: Vec<Ticket> = (0..6)
        .map(|_| Ticket {
            ticket: "kept".into(),
            r#box: "kept".into(),
            code: String::new(),
        })
        .collect();
    diesel_seqgen::assign_ids(&mut conn, &mut more).unwrap();
    assert_eq!(more.last().unwrap().code, "A", "after 9 comes A");
    let mut full = Ticket {
        ticket: "kept".into(),
        r#box: String::new(),
        code: "kept".into(),
    };
    let err = diesel_seqgen::assign_ids(&mut conn, &mut full).unwrap_err();
    assert!(
        matches!(err, diesel_seqgen::Error::SeriesExhausted { .. }),
        "{err:?}"
    );
}

/// A plain `i64` field: 0 means unset and gets an ID, anything else is kept.
#[derive(DistributedId, Debug)]
struct Counter {
    #[distributed_id(key = "plain_numbers", date = "", pad = 10)]
    n: i64,
}

#[test]
fn a_plain_i64_field_is_unset_at_zero() {
    let (_db, mut conn) = open("plain_i64");
    let mut rows = vec![Counter { n: 0 }, Counter { n: 77 }, Counter { n: 0 }];
    diesel_seqgen::assign_ids(&mut conn, &mut rows).unwrap();
    assert_eq!(rows.iter().map(|r| r.n).collect::<Vec<_>>(), [1, 77, 2]);
}

/// Field types by trait, not by spelling: a type alias, a newtype of the app's own, and a
/// numeric newtype, all through `IdValue`.
type TicketNo = Option<String>;

#[derive(Debug, Default, PartialEq)]
struct Serial(i64);

impl diesel_seqgen::IdValue for Serial {
    const NUMERIC: bool = true;
    fn id_slot(&mut self) -> diesel_seqgen::IdSlot<'_> {
        self.0.id_slot()
    }
}

#[derive(DistributedId, Debug)]
struct Pass {
    #[distributed_id(key = "tickets", prefix = "T", date = "", pad = 4)]
    no: TicketNo,
    #[distributed_id(key = "serials", date = "", pad = 8)]
    serial: Serial,
}

#[test]
fn aliases_and_newtypes_are_filled_through_id_value() {
    let (_db, mut conn) = open("id_value");
    let mut rows = vec![
        Pass {
            no: None,
            serial: Serial(0),
        },
        Pass {
            no: Some("KEPT".into()),
            serial: Serial(0),
        },
    ];
    diesel_seqgen::assign_ids(&mut conn, &mut rows).unwrap();
    assert_eq!(rows[0].no.as_deref(), Some("T0001"));
    assert_eq!(rows[1].no.as_deref(), Some("KEPT"));
    assert_eq!((rows[0].serial.0, rows[1].serial.0), (1, 2));
}

/// `#[distributed_id(crate = "...")]`: a crate that re-exports seqgen names it by its path.
mod reexported {
    pub use diesel_seqgen as ids;
}

#[derive(DistributedId, Debug)]
#[distributed_id(crate = "reexported::ids")]
struct Receipt {
    #[distributed_id(key = "receipts", prefix = "R", date = "", pad = 3)]
    no: String,
}

#[test]
fn the_crate_path_can_be_renamed() {
    let (_db, mut conn) = open("crate_path");
    let mut receipt = Receipt { no: String::new() };
    diesel_seqgen::assign_ids(&mut conn, &mut receipt).unwrap();
    assert_eq!(receipt.no, "R001");
}
