//! Scoped counters: each scope value (a company, an order) has its own counter in both modes,
//! a bulk makes one reservation per scope, gapless scopes never wait for each other, and a key
//! never switches between one counter and counters per scope.

use crate::common;

use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use common::{TestConnection, TestDb};
use diesel::prelude::*;
use diesel_seqgen::{DistributedId, Error, Generator, Spec};

backend_tests!(
    each_scope_counts_on_its_own,
    a_bulk_reserves_once_per_scope,
    gapless_scopes_count_one_to_n_and_roll_back_alone,
    gapless_scopes_never_wait_for_each_other,
    a_key_never_switches_between_one_counter_and_scopes,
    a_scope_is_required_and_checked,
    release_preview_and_void_per_scope,
    prune_keeps_each_scopes_newest_period,
    a_generator_keeps_a_bounded_number_of_scopes,
    idle_scopes_give_their_numbers_back,
    a_sequence_counts_per_scope,
    batched_in_a_transaction_per_scope,
);

fn scoped(key: &str, batch: u32) -> Spec {
    Spec::builder(key)
        .prefix("INV")
        .date("")
        .pad(4)
        .batch(batch)
        .scoped()
        .build()
        .unwrap()
}

fn gapless(key: &str) -> Spec {
    Spec::builder(key)
        .prefix("G")
        .date("")
        .pad(4)
        .gapless_nowait()
        .scoped()
        .build()
        .unwrap()
}

/// Batched: every scope starts at 1 and continues where its own counter is, in every instance;
/// a dated key starts each scope at 1 in every period too.
fn each_scope_counts_on_its_own<C: TestConnection>(db: TestDb<C>) {
    let spec = scoped(&db.key("per_scope"), 10);
    let mut conn = db.connect();
    let (first, second) = (Generator::new(), Generator::new());
    let take =
        |g: &Generator, conn: &mut C, scope: &str| g.next_id(conn, spec.scope(scope)).unwrap();
    assert_eq!(take(&first, &mut conn, "acme"), "INV0001");
    assert_eq!(take(&first, &mut conn, "acme"), "INV0002");
    assert_eq!(take(&first, &mut conn, "globex"), "INV0001");
    assert_eq!(take(&first, &mut conn, "42"), "INV0001");
    // Another instance gets the next block of each scope, never one of the first's numbers (a
    // scope's first block is a few numbers: `batch::SCOPE_FIRST_BLOCK`).
    assert_eq!(take(&second, &mut conn, "acme"), "INV0005");
    assert_eq!(take(&second, &mut conn, "globex"), "INV0005");
    assert_eq!(take(&first, &mut conn, "acme"), "INV0003");
    assert_eq!(first.reservations(), 3);

    let (clock, generator) = common::generator_on_fixed_clock();
    let dated = Spec::builder(db.key("per_scope_dated"))
        .date("%Y%m")
        .pad(3)
        .scoped()
        .build()
        .unwrap();
    let id = |conn: &mut C, scope| generator.next_id(conn, dated.scope(scope)).unwrap();
    assert_eq!(id(&mut conn, "acme"), "202611001");
    assert_eq!(id(&mut conn, "globex"), "202611001");
    clock.advance(chrono::TimeDelta::days(31));
    assert_eq!(id(&mut conn, "acme"), "202612001");
    assert_eq!(id(&mut conn, "acme"), "202612002");
}

diesel::table! {
    scoped_lines (order_no, line_no) {
        order_no -> Text,
        year -> Integer,
        line_no -> BigInt,
    }
}

/// Order lines numbered per order and year: `scope` names two fields.
#[derive(Insertable, DistributedId)]
#[diesel(table_name = scoped_lines)]
struct NewLine {
    order_no: String,
    year: i32,
    #[distributed_id(
        key = "scoped_lines",
        date = "",
        pad = 4,
        batch = 5,
        scope = "order_no, year"
    )]
    line_no: i64,
}

/// A bulk of 12 records over 3 scopes takes 3 reservations, and each scope's records get that
/// scope's numbers in record order.
fn a_bulk_reserves_once_per_scope<C: TestConnection>(db: TestDb<C>) {
    let (a, b) = (db.key("a"), db.key("b/2"));
    let scopes = [(&a, 2026), (&b, 2026), (&a, 2025)];
    let mut lines: Vec<NewLine> = (0..12)
        .map(|i| {
            let (order, year) = scopes[i % 3];
            NewLine {
                order_no: order.clone(),
                year,
                line_no: 0,
            }
        })
        .collect();
    let generator = Generator::new();
    let mut conn = db.connect();
    generator.assign_ids(&mut conn, &mut lines).unwrap();
    assert_eq!(generator.reservations(), 3);
    for scope in scopes {
        let numbers: Vec<i64> = lines
            .iter()
            .filter(|l| (&l.order_no, l.year) == scope)
            .map(|l| l.line_no)
            .collect();
        assert_eq!(numbers, [1, 2, 3, 4], "{scope:?}");
    }
    // The scope as the derive names it: values joined by `/`, a `/` inside one escaped.
    let spec = &NewLine::__id_fields()[0].spec;
    let escaped = format!("{}/2026", b.replace('/', "\\/"));
    assert_eq!(
        generator
            .next_number(&mut conn, spec.scope(&escaped))
            .unwrap(),
        5
    );
    // Two empty-looking values still name a scope ("/2026"); one empty value does not, and
    // nothing is filled.
    let mut blank_order = [NewLine {
        order_no: String::new(),
        year: 2026,
        line_no: 0,
    }];
    generator.assign_ids(&mut conn, &mut blank_order).unwrap();
    assert!(blank_order[0].line_no >= 1);
    let mut empty = [Ticket {
        company: String::new(),
        number: String::new(),
    }];
    let mut conn = db.connect();
    conn.begin_test_transaction().unwrap(); // gapless: inside a transaction
    let err = generator.assign_ids(&mut conn, &mut empty).unwrap_err();
    assert!(matches!(err, Error::InvalidScope { .. }), "{err:?}");
    assert!(empty[0].number.is_empty());
}

#[derive(DistributedId)]
struct Ticket {
    company: String,
    #[distributed_id(
        key = "scoped_tickets",
        prefix = "T",
        date = "",
        pad = 4,
        gapless,
        scope = "company"
    )]
    number: String,
}

/// Gapless per scope: three scopes written in turns, every fourth transaction rolled back;
/// each scope's committed numbers are exactly 1..N, whatever the others did.
fn gapless_scopes_count_one_to_n_and_roll_back_alone<C: TestConnection>(db: TestDb<C>) {
    let companies: Vec<String> = (0..3).map(|i| db.key(&format!("co{i}"))).collect();
    let mut committed: Vec<Vec<String>> = vec![Vec::new(); 3];
    let mut conn = db.connect();
    for i in 0..30 {
        let mut ticket = Ticket {
            company: companies[i % 3].clone(),
            number: String::new(),
        };
        let result = conn.transaction(|conn| {
            diesel_seqgen::assign_ids(conn, &mut ticket)?;
            if i % 4 == 3 {
                return Err(Error::Database(diesel::result::Error::RollbackTransaction));
            }
            Ok(())
        });
        if result.is_ok() {
            committed[i % 3].push(ticket.number);
        }
    }
    let spec = &Ticket::__id_fields()[0].spec;
    for (company, numbers) in companies.iter().zip(&committed) {
        let expected: Vec<String> = (1..=numbers.len()).map(|n| format!("T{n:04}")).collect();
        assert_eq!(numbers, &expected, "{company}");
        assert!(numbers.len() >= 7);
        let next = diesel_seqgen::global::peek_next(&mut conn, spec.scope(company)).unwrap();
        assert_eq!(next, numbers.len() as u64 + 1);
    }
}

/// A transaction holding scope A's counter does not hold up scope B (row locks, PostgreSQL
/// and MySQL), while scope A itself is busy. SQLite has one writer for the whole database:
/// there scope B waits like any other writer.
fn gapless_scopes_never_wait_for_each_other<C: TestConnection>(db: TestDb<C>) {
    if C::NAME == "sqlite" {
        return;
    }
    let spec = gapless(&db.key("gapless_scopes"));
    let (mut holder, mut other) = (db.connect(), db.connect());
    // Both rows exist, so that neither transaction creates one.
    for scope in ["a", "b"] {
        other
            .transaction(|conn| Generator::new().next_id(conn, spec.scope(scope)))
            .unwrap();
    }
    let (held_tx, held_rx) = mpsc::channel::<()>();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let holder_thread = {
        let spec = spec.clone();
        thread::spawn(move || {
            holder
                .transaction(|conn| {
                    let id = Generator::new().next_id(conn, spec.scope("a"))?;
                    held_tx.send(()).unwrap();
                    done_rx.recv().unwrap();
                    Ok::<_, Error>(id)
                })
                .unwrap()
        })
    };
    held_rx.recv().unwrap();
    let started = Instant::now();
    let b = other
        .transaction(|conn| Generator::new().next_id(conn, spec.scope("b")))
        .unwrap();
    assert_eq!(b, "G0002");
    assert!(started.elapsed() < Duration::from_secs(2));
    let busy = other
        .transaction(|conn| Generator::new().next_id(conn, spec.scope("a")))
        .unwrap_err();
    assert!(matches!(busy, Error::Busy { .. }), "{busy:?}");
    done_tx.send(()).unwrap();
    assert_eq!(holder_thread.join().unwrap(), "G0002");
    let a = other
        .transaction(|conn| Generator::new().next_id(conn, spec.scope("a")))
        .unwrap();
    assert_eq!(a, "G0003");
}

/// One counter and counters per scope print the same IDs (scope 1's first is the key's
/// first): the shape records which a key has, and the other is refused, either way round.
fn a_key_never_switches_between_one_counter_and_scopes<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let key = db.key("switch");
    let one = Spec::builder(&key)
        .prefix("INV")
        .date("")
        .pad(4)
        .build()
        .unwrap();
    assert_eq!(
        Generator::new().next_id(&mut conn, &one).unwrap(),
        "INV0001"
    );
    let err = Generator::new()
        .next_id(&mut conn, scoped(&key, 10).scope("acme"))
        .unwrap_err();
    assert!(matches!(err, Error::ShapeChanged { .. }), "{err:?}");

    let key = db.key("switch_back");
    let per_scope = scoped(&key, 10);
    Generator::new()
        .next_id(&mut conn, per_scope.scope("acme"))
        .unwrap();
    let one = Spec::builder(&key)
        .prefix("INV")
        .date("")
        .pad(4)
        .build()
        .unwrap();
    let err = Generator::new().next_id(&mut conn, &one).unwrap_err();
    assert!(matches!(err, Error::ShapeChanged { .. }), "{err:?}");
    // In a transaction too (the shape is checked before the number is taken there).
    let err = conn
        .transaction(|conn| Generator::new().next_id(conn, &one))
        .unwrap_err();
    assert!(matches!(err, Error::ShapeChanged { .. }), "{err:?}");
}

/// Two ID fields, the first (by key) unscoped, the second scoped by `order`.
#[derive(DistributedId)]
struct Receipt {
    order: String,
    #[distributed_id(key = "scoped_receipt_a", date = "")]
    a: String,
    #[distributed_id(key = "scoped_receipt_b", date = "", scope = "order")]
    b: String,
}

/// A scoped spec needs a scope, an unscoped one takes none, and a scope `db_key.scope` cannot
/// hold exactly (too long, white space at an end, a control character) is refused before
/// anything is reserved.
fn a_scope_is_required_and_checked<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let generator = Generator::new();
    let spec = scoped(&db.key("required"), 10);
    let err = generator.next_id(&mut conn, &spec).unwrap_err();
    assert!(
        matches!(err, Error::ScopeMismatch { scoped: true, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("spec.scope(value)"), "{err}");
    let one = Spec::builder(db.key("unscoped")).date("").build().unwrap();
    let err = generator.next_id(&mut conn, one.scope("acme")).unwrap_err();
    assert!(
        matches!(err, Error::ScopeMismatch { scoped: false, .. }),
        "{err:?}"
    );
    // MariaDB would take "acme " for "acme": both would share a counter.
    for bad in [
        "x".repeat(192),
        "acme ".to_owned(),
        " acme".to_owned(),
        "a\0b".to_owned(),
    ] {
        let err = generator.next_id(&mut conn, spec.scope(&bad)).unwrap_err();
        assert!(
            matches!(err, Error::InvalidScope { .. }),
            "{bad:?}: {err:?}"
        );
    }
    // A record whose scope cannot be is refused before any of its fields is filled.
    let mut receipt = Receipt {
        order: "A-1 ".into(),
        a: String::new(),
        b: String::new(),
    };
    let err = generator.assign_ids(&mut conn, &mut receipt).unwrap_err();
    assert!(matches!(err, Error::InvalidScope { .. }), "{err:?}");
    assert_eq!((receipt.a.as_str(), receipt.b.as_str()), ("", ""));
    let widest = "é".repeat(191);
    assert_eq!(
        generator.next_id(&mut conn, spec.scope(&widest)).unwrap(),
        "INV0001"
    );
    assert_eq!(generator.reservations(), 1);
}

/// `release` gives each scope's unused numbers back to that scope; `last_value_in`,
/// `peek_next_in`, `void_in` and `voided_in` read and write that scope's counter alone.
fn release_preview_and_void_per_scope<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = scoped(&db.key("release"), 10);
    let generator = Generator::new();
    for scope in ["acme", "globex", "globex"] {
        generator.next_id(&mut conn, spec.scope(scope)).unwrap();
    }
    // A scope's first block is a few numbers (`batch::SCOPE_FIRST_BLOCK`, 4), whatever the
    // spec's batch: 3 of acme's and 2 of globex's go back.
    assert_eq!(generator.release(&mut conn).unwrap(), 3 + 2);
    let next = Generator::new();
    assert_eq!(
        next.next_id(&mut conn, spec.scope("acme")).unwrap(),
        "INV0002"
    );
    assert_eq!(
        next.next_id(&mut conn, spec.scope("globex")).unwrap(),
        "INV0003"
    );
    assert_eq!(
        next.last_value(&mut conn, spec.scope("acme")).unwrap(),
        Some(5)
    );
    assert_eq!(next.peek_next(&mut conn, spec.scope("initech")).unwrap(), 1);
    assert_eq!(
        diesel_seqgen::global::last_value(&mut conn, spec.scope("initech")).unwrap(),
        None
    );

    let invoices = gapless(&db.key("void"));
    let id = conn
        .transaction(|conn| diesel_seqgen::global::next_id(conn, invoices.scope("acme")))
        .unwrap();
    diesel_seqgen::ledger::void(&mut conn, invoices.scope("acme"), &id, "cancelled").unwrap();
    // Never issued in globex: refused, and nothing recorded there.
    let err =
        diesel_seqgen::ledger::void(&mut conn, invoices.scope("globex"), &id, "typo").unwrap_err();
    assert!(matches!(err, Error::NotIssued { .. }), "{err:?}");
    let ledger = diesel_seqgen::ledger::voided(&mut conn, invoices.scope("acme"), "").unwrap();
    assert_eq!(ledger.len(), 1);
    assert!(
        diesel_seqgen::ledger::voided(&mut conn, invoices.scope("globex"), "")
            .unwrap()
            .is_empty()
    );
}

/// `admin::prune` deletes past periods in every scope, but keeps each scope's newest period
/// (an instance on a late clock may still be numbering there), not only the key's newest.
fn prune_keeps_each_scopes_newest_period<C: TestConnection>(db: TestDb<C>) {
    use chrono::TimeZone as _;
    let mut conn = db.connect();
    let (clock, generator) = common::generator_on_fixed_clock();
    let spec = Spec::builder(db.key("prune"))
        .date("%Y%m")
        .scoped()
        .build()
        .unwrap();
    generator.next_id(&mut conn, spec.scope("a")).unwrap();
    generator.next_id(&mut conn, spec.scope("b")).unwrap(); // b is quiet after November
    clock.advance(chrono::TimeDelta::days(31));
    generator.next_id(&mut conn, spec.scope("a")).unwrap();
    let now = chrono::Utc.with_ymd_and_hms(2026, 12, 15, 0, 0, 0).unwrap();
    let deleted = diesel_seqgen::admin::prune(
        &mut conn,
        spec.key(),
        "202612",
        now,
        diesel_seqgen::TimeZone::Utc,
        Duration::ZERO,
    )
    .unwrap();
    assert_eq!(deleted, ["202611"]);
    let rows: Vec<(String, String)> = diesel_seqgen::admin::counters(&mut conn, Some(spec.key()))
        .unwrap()
        .into_iter()
        .map(|r| (r.scope, r.period))
        .collect();
    let expected = [("", ""), ("a", "202612"), ("b", "202611")];
    assert_eq!(rows, expected.map(|(s, p)| (s.to_owned(), p.to_owned())));
}

/// A generator keeps blocks for at most `max_scopes` scopes of a spec (line numbers per order
/// would otherwise grow without end): past it the least recently used eighth goes, its unused
/// numbers go back to their counters (16 scopes at each later reservation), and a dropped scope
/// used again reserves a new block, never repeating a number. (64 scopes, blocks of 10 and a
/// clock that moves a second per scope: the setting is the point; the default, 65,536, fits a
/// SaaS's tenants.)
fn a_generator_keeps_a_bounded_number_of_scopes<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = scoped(&db.key("bounded"), 10);
    let clock = monday_ten();
    let generator = Generator::builder()
        .clock(std::sync::Arc::clone(&clock))
        .fixed_batch()
        .max_scopes(64)
        .build();
    for order in 0..64 {
        generator
            .next_id(&mut conn, spec.scope(&order.to_string()))
            .unwrap();
        clock.advance(chrono::TimeDelta::seconds(1));
    }
    // Scope 63 is the most recent: it stays. Scopes 0 to 7 are the least: they go with the new
    // one, and their blocks go back at its reservation.
    generator.next_id(&mut conn, spec.scope("new")).unwrap();
    assert_eq!(generator.reservations(), 65);
    assert_eq!(
        generator.next_id(&mut conn, spec.scope("63")).unwrap(),
        "INV0002"
    );
    assert_eq!(generator.reservations(), 65, "served from its block");
    // Scope 0's 2..=10 went back: it continues without a hole.
    assert_eq!(
        generator.next_id(&mut conn, spec.scope("0")).unwrap(),
        "INV0002"
    );
    assert_eq!(generator.reservations(), 66);
    let stats = &generator.stats()[0];
    assert_eq!(stats.numbers_abandoned, 0);
    assert_eq!(stats.numbers_given_back, 8 * 9);
    // `release` gives back the rest: of 66 blocks of 10 (64 orders, "new", "0" again), 66 + 1
    // numbers were served, and nothing else of any scope is lost.
    let given_back = generator.release(&mut conn).unwrap();
    let stats = &generator.stats()[0];
    assert_eq!(stats.numbers_abandoned, 0);
    assert_eq!(stats.numbers_given_back, 8 * 9 + given_back);
    assert_eq!(stats.numbers_given_back, 66 * 10 - (66 + 1));
}

/// On the defaults (but a clock the test moves): a scope nobody used for five minutes is
/// dropped at the next call that serves a scope, its unused numbers go back to their counter at
/// the next reservations, 16 scopes at each, and served again it continues without a hole. A
/// scope's first block is a few numbers, not the spec's batch: a crash before they went back
/// would have lost 3 numbers per scope, not 99.
fn idle_scopes_give_their_numbers_back<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = scoped(&db.key("idle"), 100);
    let clock = monday_ten();
    let generator = Generator::builder()
        .clock(std::sync::Arc::clone(&clock))
        .build();
    for tenant in 0..20 {
        let id = generator
            .next_id(&mut conn, spec.scope(&format!("t{tenant}")))
            .unwrap();
        assert_eq!(id, "INV0001");
    }
    assert_eq!(generator.stats()[0].numbers_reserved, 20 * 4, "blocks of 4");
    clock.advance(chrono::TimeDelta::minutes(6));
    // Both reserve, and give back (16 idle scopes, then the other 4) first.
    generator.next_id(&mut conn, spec.scope("late")).unwrap();
    generator.next_id(&mut conn, spec.scope("later")).unwrap();
    let stats = &generator.stats()[0];
    assert_eq!(
        (stats.numbers_given_back, stats.numbers_abandoned),
        (20 * 3, 0)
    );
    // Back in use, each continues where it was.
    for tenant in [0, 19] {
        let id = generator
            .next_id(&mut conn, spec.scope(&format!("t{tenant}")))
            .unwrap();
        assert_eq!(id, "INV0002", "t{tenant}");
    }
    generator.release(&mut conn).unwrap();
    assert_eq!(generator.stats()[0].numbers_abandoned, 0);
}

/// `Sequence::scoped`: plain gapless counters per scope, and never both kinds on one key.
fn a_sequence_counts_per_scope<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let key = db.key("sequence");
    let receipts = diesel_seqgen::sequence::Sequence::new(&key)
        .unwrap()
        .scoped()
        .unwrap();
    let mut take = |shop: &str| {
        conn.transaction(|conn| receipts.scope(shop).next_value(conn))
            .unwrap()
    };
    assert_eq!((take("north"), take("north"), take("south")), (1, 2, 1));
    let nowait = diesel_seqgen::sequence::Sequence::new(&key)
        .unwrap()
        .nowait()
        .unwrap()
        .scoped()
        .unwrap();
    let values = conn
        .transaction(|conn| nowait.scope("south").next_values(conn, 2))
        .unwrap();
    assert_eq!(values, [2, 3]);
    let err = conn
        .transaction(|conn| diesel_seqgen::sequence::next_value(conn, &key))
        .unwrap_err();
    assert!(matches!(err, Error::ShapeChanged { .. }), "{err:?}");
}

/// Batched IDs of a scope inside the caller's transaction: without a pool they are taken in
/// that transaction (a rollback gives them back to that scope alone); with a pool they are
/// reserved beside it, in the scope's own block.
fn batched_in_a_transaction_per_scope<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = scoped(&db.key("in_tx"), 10);
    let generator = Generator::new();
    let rolled_back = conn.transaction(|conn| {
        assert_eq!(generator.next_id(conn, spec.scope("a"))?, "INV0001");
        assert_eq!(generator.next_id(conn, spec.scope("b"))?, "INV0001");
        Err::<(), _>(Error::Database(diesel::result::Error::RollbackTransaction))
    });
    assert!(rolled_back.is_err());
    let (a, b) = conn
        .transaction(|conn| {
            let a = generator.next_id(conn, spec.scope("a"))?;
            let b = generator.next_ids(conn, spec.scope("b"), 2)?;
            Ok::<_, Error>((a, b))
        })
        .unwrap();
    assert_eq!(
        (a.as_str(), b.as_slice()),
        ("INV0001", &["INV0001".to_owned(), "INV0002".to_owned()][..])
    );
    if C::NAME == "sqlite" {
        return; // one writer: no reservation beside the caller's transaction
    }
    let pooled = Generator::builder().pool(db.pool(2)).build();
    let ids = conn
        .transaction(|conn| {
            let first = pooled.next_id(conn, spec.scope("a"))?;
            let second = pooled.next_id(conn, spec.scope("a"))?;
            Ok::<_, Error>([first, second])
        })
        .unwrap();
    // A block of the scope reserved beside the transaction: cached, consecutive.
    assert_eq!(ids, ["INV0002", "INV0003"]);
    assert_eq!(pooled.reservations(), 1);
}

/// A clock stopped on 2026-11-23 at 10:00 UTC, for tests that move it.
fn monday_ten() -> std::sync::Arc<diesel_seqgen::clock::FixedClock> {
    use chrono::TimeZone as _;
    std::sync::Arc::new(diesel_seqgen::clock::FixedClock::new(
        chrono::Utc
            .with_ymd_and_hms(2026, 11, 23, 10, 0, 0)
            .unwrap(),
    ))
}
