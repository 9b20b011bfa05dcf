//! Obfuscated numbers through the database, on every backend: a whole pad-3 period handed
//! out in batched mode (distinct, same width, parsed back, not in order), gapless numbers in a
//! transaction, the gap report on the underlying numbers, and a wrong or missing key refused.

use crate::common;

use common::{TestConnection, TestDb};
use diesel::Connection;
use diesel_seqgen::admin::{self, IdColumn};
use diesel_seqgen::{DistributedId, Error, Generator, Spec};

backend_tests!(
    a_whole_pad_3_period_obfuscated,
    gapless_obfuscated_numbers_count_without_gaps,
    another_key_is_refused_not_served,
);

const KEY: &str = "0f3a9c1e5b7d2f4a6c8e0b1d3f5a7c9e";

fn orders(key_name: &str, secret: &str) -> Spec {
    Spec::builder(key_name)
        .prefix("ORD")
        .date("")
        .pad(3)
        .obfuscate(secret)
        .build()
        .unwrap()
}

/// All 999 numbers of a pad-3 key, taken in blocks by the defaults: every ID distinct, as wide
/// as a plain one, parsed back to exactly `1..=999`, and not in order.
fn a_whole_pad_3_period_obfuscated<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = orders(&db.key("orders"), KEY);
    let generator = Generator::new();
    let mut ids = Vec::new();
    while ids.len() < 999 {
        ids.extend(generator.next_ids(&mut conn, &spec, 111).unwrap());
    }
    common::assert_distinct(&ids);
    assert!(ids.iter().all(|id| id.len() == "ORD001".len()), "{ids:?}");
    let mut numbers: Vec<u64> = ids
        .iter()
        .map(|id| spec.counter_of(&spec.parse(id).unwrap()).unwrap())
        .collect();
    assert_eq!(numbers[..3], [1, 2, 3], "handed out in counter order");
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=999).collect::<Vec<_>>());
    let ascending = ids.windows(2).filter(|w| w[0] < w[1]).count();
    assert!(
        ascending < 700,
        "{ascending} of 998 steps ascend: {:?}",
        &ids[..10]
    );
    // The next one overflows, as a plain pad-3 key would.
    assert!(matches!(
        generator.next_id(&mut conn, &spec),
        Err(Error::Overflow { .. })
    ));
    println!(
        "{}: 999 obfuscated IDs, all distinct, e.g. {:?}",
        C::NAME,
        &ids[..4]
    );
}

/// Gapless and obfuscated: committed numbers are still exactly 1..=n underneath, a rollback
/// gives its number back, and `gaps` checks the underlying numbers of the IDs in a table.
fn gapless_obfuscated_numbers_count_without_gaps<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let key = db.key("invoices");
    let table = common::table_name(&key);
    let spec = Spec::builder(&key)
        .prefix("INV")
        .date("%Y")
        .pad(4)
        .gapless()
        .obfuscate(KEY)
        .build()
        .unwrap();
    diesel::connection::SimpleConnection::batch_execute(
        &mut conn,
        &format!("CREATE TABLE {table} (id VARCHAR(40) PRIMARY KEY)"),
    )
    .unwrap();
    let take = |conn: &mut C, commit: bool| -> Option<String> {
        let result = conn.transaction::<_, Error, _>(|conn| {
            let id = diesel_seqgen::global::next_id(conn, &spec)?;
            diesel::connection::SimpleConnection::batch_execute(
                conn,
                &format!("INSERT INTO {table} (id) VALUES ('{id}')"),
            )?;
            if commit {
                Ok(id)
            } else {
                Err(Error::Refused {
                    key: String::new(),
                    reason: "roll back".into(),
                })
            }
        });
        result.ok()
    };
    let mut committed = Vec::new();
    for i in 0..12 {
        committed.extend(take(&mut conn, i % 4 != 3));
    }
    let period = spec.period_at(chrono::Utc::now());
    let numbers: Vec<u64> = committed
        .iter()
        .map(|id| spec.counter_of(&spec.parse(id).unwrap()).unwrap())
        .collect();
    assert_eq!(numbers, (1..=9).collect::<Vec<_>>(), "{committed:?}");
    let report = admin::gaps(&mut conn, &spec, IdColumn::new(&table, "id"), &period).unwrap();
    assert_eq!((report.found, report.last), (9, 9));
    assert!(report.is_explained(), "{report:?}");
    let checked = admin::check(&mut conn, &spec, IdColumn::new(&table, "id")).unwrap();
    assert!(!checked.is_behind() && checked.unparsed == 0, "{checked:?}");
    diesel::connection::SimpleConnection::batch_execute(&mut conn, &format!("DROP TABLE {table}"))
        .unwrap();
}

/// A generator given another key for the same `db_key` key is refused at its first number
/// (the shape on the key's row names the first key), never serving other IDs.
fn another_key_is_refused_not_served<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let key = db.key("keyed");
    Generator::new()
        .next_id(&mut conn, &orders(&key, KEY))
        .unwrap();
    let other = orders(&key, "ffffffffffffffffffffffffffffffff");
    let err = Generator::new().next_id(&mut conn, &other).unwrap_err();
    assert!(matches!(err, Error::ShapeChanged { .. }), "{err:?}");
}

/// The derive reads the key from the environment when the model is first used; without it,
/// inserting fails with a clear error and fills nothing.
#[derive(DistributedId, Debug, Default)]
struct Voucher {
    #[distributed_id(
        key = "vouchers",
        date = "",
        pad = 5,
        obfuscate = "SEQGEN_TEST_UNSET_VOUCHER_KEY"
    )]
    code: String,
}

#[cfg(feature = "sqlite")]
#[test]
fn a_missing_key_in_the_environment_fails_the_fill() {
    let mut conn = diesel::SqliteConnection::establish(":memory:").unwrap();
    diesel_seqgen::run_migrations(&mut conn).unwrap();
    let mut voucher = Voucher::default();
    let err = diesel_seqgen::assign_ids(&mut conn, &mut voucher).unwrap_err();
    assert!(matches!(err, Error::InvalidSpec(_)), "{err:?}");
    assert!(
        err.to_string().contains("SEQGEN_TEST_UNSET_VOUCHER_KEY"),
        "{err}"
    );
    assert!(voucher.code.is_empty(), "nothing filled");
}
