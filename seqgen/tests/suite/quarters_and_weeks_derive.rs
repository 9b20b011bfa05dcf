//! `Q3-2026-0001` and `2026-W53-001` out of derive attributes: documents dated across a quarter
//! that begins at local midnight at +09:00, and across New Year where 31 December 2026 and 1
//! January 2027 share ISO week 53 of 2026, inserted with `diesel_seqgen::insert_into` on the
//! default generator (as it comes and after `use_pool`), batched and gapless fields on one
//! model; every ID parses back, through the shape recorded on its key, to its counter.

use crate::common;

use chrono::NaiveDate;
use common::{TestConnection, TestDb};
use diesel::prelude::*;
use diesel_seqgen::admin;
use diesel_seqgen::insert::Insert;
use diesel_seqgen::DistributedId;

backend_tests!(
    quarters_and_iso_weeks_through_the_derive,
    quarters_and_iso_weeks_through_the_derive_after_use_pool,
);

diesel::table! {
    qw_docs (id) {
        id -> Text,
        week_no -> Text,
        issued_on -> Date,
    }
}

/// A quarter's number (batched) and an ISO week's (gapless), from the document's date; the
/// documents of New Year 2027 are a month ahead of the clock, which `max_days_ahead` allows.
#[derive(Insertable, DistributedId)]
#[diesel(table_name = qw_docs)]
struct Doc {
    #[distributed_id(
        key = "qw_quarters",
        format = "Q{date}-{seq}",
        date = "%q-%Y",
        pad = 4,
        tz = "+09:00",
        period_from = "issued_on",
        max_days_ahead = 400
    )]
    id: String,
    #[distributed_id(
        key = "qw_weeks",
        format = "{date}-{seq}",
        date = "%G-W%V",
        pad = 3,
        gapless,
        period_from = "issued_on",
        max_days_ahead = 400
    )]
    week_no: String,
    issued_on: NaiveDate,
}

fn quarters_and_iso_weeks_through_the_derive<C>(db: TestDb<C>)
where
    C: TestConnection + diesel_seqgen::IdConnection,
    Vec<Doc>: Insert<qw_docs::table, C>,
{
    through_the_derive(db, false);
}

fn quarters_and_iso_weeks_through_the_derive_after_use_pool<C>(db: TestDb<C>)
where
    C: TestConnection + diesel_seqgen::IdConnection,
    Vec<Doc>: Insert<qw_docs::table, C>,
{
    through_the_derive(db, true);
}

fn through_the_derive<C>(db: TestDb<C>, use_pool: bool)
where
    C: TestConnection + diesel_seqgen::IdConnection,
    Vec<Doc>: Insert<qw_docs::table, C>,
{
    let table = "CREATE TABLE qw_docs (id VARCHAR(20) PRIMARY KEY, \
                 week_no VARCHAR(20) NOT NULL, issued_on DATE NOT NULL)";
    let scratch = common::scratch_with_table(&db, "quarters_weeks", table, None);
    if use_pool {
        diesel_seqgen::global::use_pool(scratch.pool(4)).unwrap();
    }
    let mut conn = scratch.connect();
    let on = |y, m, d| Doc {
        id: String::new(),
        week_no: String::new(),
        issued_on: NaiveDate::from_ymd_opt(y, m, d).unwrap(),
    };
    // One by one across the quarter's end, then a bulk across New Year.
    let mut docs = Vec::new();
    for doc in [on(2026, 9, 29), on(2026, 9, 30), on(2026, 10, 1)] {
        let mut one = vec![doc];
        conn.transaction(|conn| {
            diesel_seqgen::insert_into(qw_docs::table)
                .values(&mut one)
                .execute(conn)
        })
        .unwrap();
        docs.extend(one);
    }
    let mut bulk = vec![on(2026, 12, 31), on(2027, 1, 1), on(2027, 1, 4)];
    conn.transaction(|conn| {
        diesel_seqgen::insert_into(qw_docs::table)
            .values(&mut bulk)
            .execute(conn)
    })
    .unwrap();
    docs.extend(bulk);
    let quarters: Vec<&str> = docs.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(
        &quarters[..3],
        ["Q3-2026-0001", "Q3-2026-0002", "Q4-2026-0001"]
    );
    assert_eq!(&quarters[3][..8], "Q4-2026-", "{quarters:?}");
    assert_eq!(&quarters[4][..8], "Q1-2027-", "{quarters:?}");
    let weeks: Vec<&str> = docs.iter().map(|d| d.week_no.as_str()).collect();
    assert_eq!(
        weeks,
        [
            "2026-W40-001",
            "2026-W40-002",
            "2026-W40-003",
            "2026-W53-001",
            "2026-W53-002",
            "2027-W01-001"
        ]
    );
    // Each ID parses back to its counter with the spec its key recorded.
    for (key, id, counter) in [
        ("qw_quarters", "Q4-2026-0001", 1),
        ("qw_quarters", "Q3-2026-0002", 2),
        ("qw_weeks", "2026-W53-002", 2),
    ] {
        let spec = admin::recorded_spec(&mut conn, key).unwrap();
        let parts = spec.parse(id).unwrap();
        assert_eq!(spec.counter_of(&parts), Some(counter), "{id}");
        assert_eq!(spec.format(&parts.period, counter), id);
    }
}
