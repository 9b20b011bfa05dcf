//! Adopting a table that already has IDs (`admin::adopt`), and checking counters against a
//! table (`admin::check`), on every backend: several periods and scopes, a second instance
//! inserting meanwhile, a counter behind its table after an import, IDs that do not parse.

use crate::common;

use std::sync::{Arc, Barrier};
use std::thread;

use common::{TestConnection, TestDb};
use diesel_seqgen::admin::{self, IdColumn};
use diesel_seqgen::{Generator, Spec};

backend_tests!(
    adoption_raises_every_period_and_scope,
    check_catches_a_counter_behind_its_table,
    adoption_while_an_instance_inserts,
    adoption_never_lowers_and_refuses_another_shape,
);

/// A table of `ids` and each row's company (a scoped key's IDs repeat across companies),
/// named after `key` ([`common::table_name`]).
fn table_with<C: TestConnection>(conn: &mut C, key: &str, rows: &[(&str, &str)]) -> String {
    let table = common::table_name(key);
    conn.batch_execute(&format!(
        "CREATE TABLE {table} (company VARCHAR(40) NOT NULL, id VARCHAR(40) NOT NULL, \
         PRIMARY KEY (company, id))"
    ))
    .unwrap();
    insert(conn, &table, rows);
    table
}

fn insert<C: TestConnection>(conn: &mut C, table: &str, rows: &[(&str, &str)]) {
    for chunk in rows.chunks(500) {
        let values: Vec<String> = chunk
            .iter()
            .map(|(id, company)| format!("('{id}', '{company}')"))
            .collect();
        conn.batch_execute(&format!(
            "INSERT INTO {table} (id, company) VALUES {}",
            values.join(", ")
        ))
        .unwrap();
    }
}

/// IDs `U{period}{n:04}` for `n` in `1..=last`, of `company`.
fn old_ids(period: &str, last: u64, company: &str) -> Vec<(String, String)> {
    (1..=last)
        .map(|n| (format!("U{period}{n:04}"), company.to_owned()))
        .collect()
}

fn refs(rows: &[(String, String)]) -> Vec<(&str, &str)> {
    rows.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect()
}

/// A scoped key over three periods and two companies, written by an app's old code (and a
/// value that is no ID of it): `adopt` raises all six counters, and seqgen continues past
/// every existing ID in each.
fn adoption_raises_every_period_and_scope<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let key = db.key("users");
    let spec = Spec::builder(&key)
        .prefix("U")
        .date("%Y%m")
        .pad(4)
        .scoped()
        .build()
        .unwrap();
    let mut rows = Vec::new();
    for (period, acme, globex) in [("202609", 523, 17), ("202610", 9, 1200), ("202611", 40, 41)] {
        rows.extend(old_ids(period, acme, "acme"));
        rows.extend(old_ids(period, globex, "globex"));
    }
    rows.push(("legacy-1".to_owned(), "acme".to_owned()));
    let table = table_with(&mut conn, &key, &refs(&rows));
    let ids = IdColumn::new(&table, "id").scoped_by("company");

    assert!(
        admin::adopt(&mut conn, &spec, IdColumn::new(&table, "id")).is_err(),
        "a scoped key needs its scope column"
    );
    let found = admin::check(&mut conn, &spec, ids).unwrap();
    assert_eq!((found.ids, found.unparsed), (rows.len() as u64, 1));
    assert_eq!(found.unparsed_examples, ["legacy-1"]);
    assert_eq!(found.counters.len(), 6);
    assert!(found
        .counters
        .iter()
        .all(|c| c.is_behind() && c.counter == 0 && !c.in_use));

    let adopted = admin::adopt(&mut conn, &spec, ids).unwrap();
    assert_eq!(adopted, found, "adopt reports what it found before raising");
    let after = admin::check(&mut conn, &spec, ids).unwrap();
    assert!(!after.is_behind(), "{after:?}");
    for c in &after.counters {
        assert_eq!(c.counter, c.highest, "{c:?}");
    }
    // Each counter continues past its highest ID: the next numbers insert without a clash.
    let (_, generator) = common::generator_on_fixed_clock(); // in 2026-11
    let mut next = Vec::new();
    for (period, company) in [
        ("202609", "acme"),
        ("202610", "globex"),
        ("202611", "globex"),
    ] {
        let n = diesel_seqgen::admin::peek(&mut conn, spec.scope(company), period)
            .unwrap()
            .next;
        let highest = after
            .counters
            .iter()
            .find(|c| c.period == period && c.scope == company)
            .unwrap()
            .highest;
        assert_eq!(n, highest + 1);
        next.push((spec.format(period, n), company.to_owned()));
    }
    let now = generator
        .next_ids(&mut conn, spec.scope("acme"), 50)
        .unwrap();
    assert_eq!(now[0], "U2026110041");
    next.extend(now.into_iter().map(|id| (id, "acme".to_owned())));
    insert(&mut conn, &table, &refs(&next)); // a duplicate would fail the primary key
    conn.batch_execute(&format!("DROP TABLE {table}")).unwrap();
}

/// After an import (rows written past the counter, not by seqgen), `check` reports the
/// counter behind with its numbers, and `adopt` fixes it.
fn check_catches_a_counter_behind_its_table<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let key = db.key("invoices");
    let spec = Spec::builder(&key)
        .prefix("INV")
        .date("")
        .pad(6)
        .build()
        .unwrap();
    let issued = Generator::new().next_ids(&mut conn, &spec, 30).unwrap();
    let mut rows: Vec<(String, String)> =
        issued.into_iter().map(|id| (id, String::new())).collect();
    let table = table_with(&mut conn, &key, &refs(&rows));
    let ids = IdColumn::new(&table, "id");
    let fine = admin::check(&mut conn, &spec, ids).unwrap();
    assert!(!fine.is_behind(), "{fine:?}");
    assert!(fine.counters[0].in_use);

    rows = vec![("INV004180".to_owned(), String::new())];
    insert(&mut conn, &table, &refs(&rows)); // the import
    let found = admin::check(&mut conn, &spec, ids).unwrap();
    assert!(found.is_behind());
    let counter = &found.counters[0];
    assert_eq!((counter.highest, counter.period.as_str()), (4180, ""));
    assert!(
        counter.counter >= 30 && counter.counter < 4180 && counter.in_use,
        "{counter:?}"
    );

    admin::adopt(&mut conn, &spec, ids).unwrap();
    assert!(!admin::check(&mut conn, &spec, ids).unwrap().is_behind());
    assert_eq!(
        Generator::new().next_id(&mut conn, &spec).unwrap(),
        "INV004181"
    );
    conn.batch_execute(&format!("DROP TABLE {table}")).unwrap();
}

/// A running instance inserts through seqgen (retrying an ID the old rows already hold, as an
/// app would after a unique-key error) while `adopt` runs: both finish, no ID is held twice,
/// and nothing is behind afterwards.
fn adoption_while_an_instance_inserts<C: TestConnection>(db: TestDb<C>) {
    let db = Arc::new(db);
    let mut conn = db.connect();
    let key = db.key("orders");
    let spec = Arc::new(
        Spec::builder(&key)
            .prefix("U")
            .date("%Y%m")
            .pad(4)
            .build()
            .unwrap(),
    );
    let period = spec.period_at(chrono::Utc::now());
    let table = table_with(&mut conn, &key, &refs(&old_ids(&period, 700, "")));
    let start = Arc::new(Barrier::new(2));
    let instance = {
        let (db, spec, table, start) = (db.clone(), spec.clone(), table.clone(), start.clone());
        thread::spawn(move || {
            let mut conn = db.connect();
            let generator = Generator::new();
            start.wait();
            let (mut inserted, mut clashes) = (0, 0);
            while inserted < 300 {
                let id = generator.next_id(&mut conn, &*spec).unwrap();
                let sql = format!("INSERT INTO {table} (id, company) VALUES ('{id}', '')");
                match conn.batch_execute(&sql) {
                    Ok(()) => inserted += 1,
                    Err(_) => clashes += 1, // an old row holds it: take the next number
                }
                assert!(clashes <= 700, "the instance never got past the old IDs");
            }
            clashes
        })
    };
    start.wait();
    let ids = IdColumn::new(&table, "id");
    let found = admin::adopt(&mut conn, &spec, ids).unwrap();
    let clashes = instance.join().unwrap();
    assert!(found.counters[0].highest >= 700);
    let after = admin::check(&mut conn, &spec, ids).unwrap();
    assert!(!after.is_behind(), "{after:?}");
    assert_eq!(after.ids, 1000);
    println!(
        "{}: adopted while an instance inserted 300 rows ({clashes} clashed with old IDs)",
        C::NAME
    );
    conn.batch_execute(&format!("DROP TABLE {table}")).unwrap();
}

/// A counter ahead of its table stays where it is; a spec of another shape than the key
/// recorded is refused, and changes nothing.
fn adoption_never_lowers_and_refuses_another_shape<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let key = db.key("ahead");
    let spec = Spec::builder(&key)
        .prefix("A")
        .date("")
        .pad(5)
        .build()
        .unwrap();
    Generator::new().next_ids(&mut conn, &spec, 500).unwrap();
    let table = table_with(&mut conn, &key, &[("A00007", "")]);
    let ids = IdColumn::new(&table, "id");
    let found = admin::adopt(&mut conn, &spec, ids).unwrap();
    assert!(!found.is_behind());
    let peek = admin::peek(&mut conn, &spec, "").unwrap();
    assert!(peek.next > 500, "{peek:?}");

    let other = Spec::builder(&key)
        .prefix("A")
        .date("")
        .pad(6)
        .build()
        .unwrap();
    let err = admin::adopt(&mut conn, &other, ids).unwrap_err();
    assert!(
        matches!(err, diesel_seqgen::Error::ShapeChanged { .. }),
        "{err:?}"
    );
    let missing = admin::check(&mut conn, &spec, IdColumn::new("no_such_table", "id")).unwrap_err();
    assert!(missing.to_string().contains("no_such_table"), "{missing}");
    conn.batch_execute(&format!("DROP TABLE {table}")).unwrap();
}
