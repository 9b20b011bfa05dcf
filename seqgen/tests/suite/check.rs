//! Check characters on every backend: IDs taken from the database carry a check that
//! `Spec::verify` accepts and a typing error breaks, in batched and gapless mode, in the `i64`
//! form, past a widened counter, and through `void` and the gap report, which read them back.

use crate::common;

use common::{generator_on_fixed_clock, TestConnection, TestDb};
use diesel_seqgen::{Check, Overflow, Spec};

backend_tests!(
    ids_from_the_database_carry_their_check,
    voids_and_gap_reports_read_checked_ids,
);

/// Swaps the last two digits before the check: a clerk's typo.
fn swap_before_last(id: &str, check_width: usize) -> String {
    let mut bytes = id.as_bytes().to_vec();
    let at = bytes.len() - check_width - 2;
    bytes.swap(at, at + 1);
    String::from_utf8(bytes).unwrap()
}

fn ids_from_the_database_carry_their_check<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let (_clock, generator) = generator_on_fixed_clock();
    let orders = Spec::builder(db.key("orders"))
        .prefix("ORD")
        .date("%y%m")
        .pad(2)
        .batch(50)
        .overflow(Overflow::Widen)
        .check(Check::Damm)
        .build()
        .unwrap();
    let ids = generator.next_ids(&mut conn, &orders, 101).unwrap();
    assert_eq!(&ids[11][..9], "ORD261112");
    for id in &ids {
        assert!(orders.verify(id), "{id}");
    }
    assert_eq!(
        orders.parse(&ids[100]).unwrap().seq,
        101,
        "past the widened counter"
    );
    assert!(!orders.verify(&swap_before_last(&ids[11], 1)));

    let numbers = Spec::builder(db.key("numbers"))
        .date("%Y")
        .pad(6)
        .check(Check::Iso7064Mod97_10)
        .build()
        .unwrap();
    let n = generator.next_number(&mut conn, &numbers).unwrap();
    assert_eq!(n / 100, 2026_000001, "the number, then two check digits");
    assert_eq!(numbers.parse_number(n).unwrap().seq, 1);
    assert!(numbers.parse_number(n + 1).is_err());
}

fn voids_and_gap_reports_read_checked_ids<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let (_clock, generator) = generator_on_fixed_clock();
    let invoices = Spec::builder(db.key("invoices"))
        .prefix("INV")
        .date("%Y")
        .check(Check::Luhn)
        .gapless()
        .build()
        .unwrap();
    let ids: Vec<String> = (0..3)
        .map(|_| {
            diesel_seqgen::retry_transaction(&mut conn, |conn| generator.next_id(conn, &invoices))
                .unwrap()
        })
        .collect();
    let typo = swap_before_last(&ids[1], 1);
    if typo != ids[1] {
        let err = diesel_seqgen::ledger::void(&mut conn, &invoices, &typo, "x").unwrap_err();
        assert!(
            matches!(err, diesel_seqgen::Error::InvalidId { .. }),
            "{err:?}"
        );
    }
    diesel_seqgen::ledger::void(&mut conn, &invoices, &ids[1], "cancelled").unwrap();
    let table = db.key("checked");
    conn.batch_execute(&format!(
        "CREATE TABLE {table} (number VARCHAR(64)); INSERT INTO {table} (number) VALUES ('{}');",
        ids[0]
    ))
    .unwrap();
    let report = diesel_seqgen::admin::gaps(
        &mut conn,
        &invoices,
        diesel_seqgen::admin::IdColumn::new(&table, "number"),
        "2026",
    )
    .unwrap();
    assert_eq!(
        report.missing,
        [
            diesel_seqgen::admin::Missing::Voided {
                number: 2,
                reason: "cancelled".into()
            },
            diesel_seqgen::admin::Missing::Unexplained { from: 3, to: 3 },
        ]
    );
    conn.batch_execute(&format!("DROP TABLE {table}")).unwrap();
}
