//! The reset apart from the printed date on diesel-async's connections: `SO20261231-00002`
//! numbering per year while each ID prints its day, and a key that never resets, batched and
//! gapless, on a generator whose clock crosses New Year, and on the default generator with
//! documents dated across the last one.

use std::sync::Arc;

use chrono::{DateTime, TimeZone, Utc};
use diesel_seqgen::clock::FixedClock;
use diesel_seqgen::nonblocking as sq;
use diesel_seqgen::{Reset, Spec};

#[cfg(feature = "async-sqlite")]
use super::AsyncSqlite;
use super::AsyncTest;
use crate::common::TestDb;

async_tests!(
    the_counter_resets_per_year_and_never_while_ids_print_the_day,
    the_counter_resets_per_year_and_never_on_the_default_generator,
);

fn utc(y: i32, m: u32, d: u32, h: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, h, 0, 0).unwrap()
}

/// `SO…` per year (batched) and `DOC-…` never reset (gapless).
fn specs(db: &TestDb<impl crate::common::TestConnection>) -> [Spec; 2] {
    let spec = |name: &str, prefix: &str, date: &str, reset| {
        Spec::builder(db.key(name))
            .prefix(prefix)
            .date(date)
            .pad(5)
            .reset(reset)
    };
    let yearly = spec("yearly", "SO", "%Y%m%d-", Reset::Year)
        .build()
        .unwrap();
    let never = spec("never", "DOC-", "%Y-%m-%d-", Reset::Never);
    [yearly, never.gapless().build().unwrap()]
}

async fn the_counter_resets_per_year_and_never_while_ids_print_the_day<A: AsyncTest>(
    db: TestDb<A::Sync>,
) {
    let mut conn = A::open(&db.url).await;
    let clock = Arc::new(FixedClock::new(utc(2026, 12, 31, 9)));
    let generator = sq::Generator::from(
        diesel_seqgen::Generator::builder()
            .clock(Arc::clone(&clock))
            .build(),
    );
    let [yearly, never] = specs(&db);
    let mut batched = Vec::new();
    let mut gapless = Vec::new();
    for moment in [utc(2026, 12, 31, 9), utc(2027, 1, 1, 9), utc(2027, 1, 2, 9)] {
        clock.set(moment);
        batched.push(generator.next_id(&mut conn, &yearly).await.unwrap());
        let (generator, never) = (&generator, &never);
        let id = conn
            .transaction(async |conn| generator.next_id(conn, never).await)
            .await;
        gapless.push(id.unwrap());
    }
    assert_eq!(
        batched,
        ["SO20261231-00001", "SO20270101-00001", "SO20270102-00002"]
    );
    assert_eq!(
        gapless,
        [
            "DOC-2026-12-31-00001",
            "DOC-2027-01-01-00002",
            "DOC-2027-01-02-00003"
        ]
    );
}

/// The twin on the default generator: documents dated across the last New Year.
async fn the_counter_resets_per_year_and_never_on_the_default_generator<A: AsyncTest>(
    db: TestDb<A::Sync>,
) {
    let mut conn = A::open(&db.url).await;
    let [yearly, never] = specs(&db);
    let mut batched = Vec::new();
    let mut gapless = Vec::new();
    for moment in [utc(2025, 12, 31, 9), utc(2026, 1, 1, 9), utc(2026, 1, 2, 9)] {
        batched.push(sq::next_id(&mut conn, yearly.dated(moment)).await.unwrap());
        let never = &never;
        let id = conn
            .transaction(async |conn| sq::next_id(conn, never.dated(moment)).await)
            .await;
        gapless.push(id.unwrap());
    }
    assert_eq!(
        batched,
        ["SO20251231-00001", "SO20260101-00001", "SO20260102-00002"]
    );
    assert_eq!(
        gapless,
        [
            "DOC-2025-12-31-00001",
            "DOC-2026-01-01-00002",
            "DOC-2026-01-02-00003"
        ]
    );
}
