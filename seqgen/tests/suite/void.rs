//! The void ledger: a cancelled number is recorded with its reason, in the caller's
//! transaction, and only a number that was handed out can be voided, once.

use crate::common;

use common::{TestConnection, TestDb};
use diesel_seqgen::{Error, Spec};

backend_tests!(
    a_voided_number_is_recorded_with_its_transaction,
    only_issued_numbers_are_voided_once,
);

fn invoices(db: &TestDb<impl TestConnection>) -> Spec {
    Spec::builder(db.key("void"))
        .prefix("INV")
        .date("%Y")
        .gapless()
        .build()
        .unwrap()
}

/// Three invoices (taken with `retry_transaction`: without a pool, MySQL may deadlock
/// creating a new key's rows beside another test); number 2 is cancelled. A void inside a transaction that rolls back is not
/// recorded; one that commits is, with its reason, in the period of the ID.
fn a_voided_number_is_recorded_with_its_transaction<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = invoices(&db);
    let ids: Vec<String> = (0..3)
        .map(|_| {
            diesel_seqgen::retry_transaction(&mut conn, |conn| {
                diesel_seqgen::global::next_id(conn, &spec)
            })
            .unwrap()
        })
        .collect();
    let period = &ids[1][3..7];
    let rolled_back = conn.transaction(|conn| {
        diesel_seqgen::ledger::void(conn, &spec, &ids[1], "typo")?;
        Err::<(), _>(Error::Database(diesel::result::Error::RollbackTransaction))
    });
    assert!(rolled_back.is_err());
    assert!(diesel_seqgen::ledger::voided(&mut conn, &spec, period)
        .unwrap()
        .is_empty());
    conn.transaction(|conn| {
        diesel_seqgen::ledger::void(conn, &spec, &ids[1], "customer cancelled")
    })
    .unwrap();
    let ledger = diesel_seqgen::ledger::voided(&mut conn, &spec, period).unwrap();
    assert_eq!(ledger.len(), 1);
    assert_eq!(
        (ledger[0].number, ledger[0].reason.as_str()),
        (2, "customer cancelled")
    );
    // Voiding explains the gap; it does not fill it.
    let next = diesel_seqgen::retry_transaction(&mut conn, |conn| {
        diesel_seqgen::global::next_id(conn, &spec)
    })
    .unwrap();
    assert!(next.ends_with("000004"), "{next}");
}

/// Not an ID of the spec, a number never handed out, a number voided twice: clear errors,
/// nothing recorded.
fn only_issued_numbers_are_voided_once<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = invoices(&db);
    // A period's first number, without a pool: MySQL may deadlock on creating its rows
    // beside another test doing the same (gap locks), and asks to run it again.
    let id = diesel_seqgen::retry_transaction(&mut conn, |conn| {
        diesel_seqgen::global::next_id(conn, &spec)
    })
    .unwrap();
    let year = &id[3..7];
    let err = diesel_seqgen::ledger::void(&mut conn, &spec, "ORD-1", "x").unwrap_err();
    assert!(matches!(err, Error::InvalidId { .. }), "{err:?}");
    let unissued = format!("INV{year}000009");
    let err = diesel_seqgen::ledger::void(&mut conn, &spec, &unissued, "x").unwrap_err();
    assert!(matches!(err, Error::NotIssued { number: 9, .. }), "{err:?}");
    diesel_seqgen::ledger::void(&mut conn, &spec, &id, "first").unwrap();
    let err = diesel_seqgen::ledger::void(&mut conn, &spec, &id, "second").unwrap_err();
    assert!(
        matches!(err, Error::AlreadyVoided { number: 1, .. }),
        "{err:?}"
    );
    let ledger = diesel_seqgen::ledger::voided(&mut conn, &spec, year).unwrap();
    assert_eq!(ledger.len(), 1);
    assert_eq!(ledger[0].reason, "first");
}
