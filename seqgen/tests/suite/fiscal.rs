//! Fiscal years through the derive (`fiscal = "04-01"`): each fiscal year its own counter row,
//! batched and gapless, across the year's first midnight in UTC and in Tokyo; a clock a day
//! behind goes on in the year it shows; the tools read the fiscal year back from the key's
//! shape (`admin::capacity`: the current year and when it ends).

use crate::common;

use std::sync::Arc;

use chrono::{DateTime, TimeZone as _, Utc};
use common::{TestConnection, TestDb};
use diesel::prelude::*;
use diesel_seqgen::clock::FixedClock;
use diesel_seqgen::{admin, DistributedId, Generator, TimeZone};

backend_tests!(fiscal_years_through_the_derive);

diesel::table! {
    fiscal_invoices (id) {
        id -> Text,
        kind -> Text,
    }
}

/// Invoices numbered per fiscal year from April 1st (UTC), gapless.
#[derive(Insertable, DistributedId, Debug)]
#[diesel(table_name = fiscal_invoices)]
struct Invoice {
    #[distributed_id(
        key = "fiscal_invoices",
        prefix = "INV",
        date = "FY%Y-",
        fiscal = "04-01",
        pad = 4,
        gapless
    )]
    id: String,
    kind: String,
}

/// Credit notes per fiscal year from April 1st in Tokyo, named by the year it ends in, batched.
#[derive(Insertable, DistributedId, Debug)]
#[diesel(table_name = fiscal_invoices)]
struct CreditNote {
    #[distributed_id(
        key = "fiscal_credits",
        prefix = "CN",
        date = "%y",
        fiscal = "04-01,end",
        tz = "Asia/Tokyo",
        pad = 4
    )]
    id: String,
    kind: String,
}

fn at(y: i32, m: u32, d: u32, h: u32, min: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, h, min, s).unwrap()
}

fn fiscal_years_through_the_derive<C>(db: TestDb<C>)
where
    C: TestConnection + diesel_seqgen::IdConnection,
    Vec<Invoice>: diesel_seqgen::insert::Insert<fiscal_invoices::table, C>,
    Vec<CreditNote>: diesel_seqgen::insert::Insert<fiscal_invoices::table, C>,
{
    let table =
        "CREATE TABLE fiscal_invoices (id VARCHAR(20) PRIMARY KEY, kind VARCHAR(20) NOT NULL)";
    let scratch = common::scratch_with_table(&db, "fiscal", table, None);
    let mut conn = scratch.connect();
    let clock = Arc::new(FixedClock::new(at(2027, 3, 31, 23, 59, 58)));
    let generator = Generator::builder().clock(clock.clone()).build();

    let invoice = |conn: &mut C, when| {
        clock.set(when);
        let mut rows = vec![Invoice {
            id: String::new(),
            kind: "invoice".into(),
        }];
        conn.transaction(|conn| {
            diesel_seqgen::insert_into(fiscal_invoices::table)
                .values(&mut rows)
                .with_generator(&generator)
                .execute(conn)
        })
        .unwrap();
        rows.remove(0).id
    };
    assert_eq!(
        invoice(&mut conn, at(2027, 3, 31, 23, 59, 58)),
        "INVFY2026-0001"
    );
    assert_eq!(
        invoice(&mut conn, at(2027, 3, 31, 23, 59, 59)),
        "INVFY2026-0002"
    );
    // April 1st: a new fiscal year, from 1.
    assert_eq!(
        invoice(&mut conn, at(2027, 4, 1, 0, 0, 0)),
        "INVFY2027-0001"
    );
    // A clock a day behind: the year it shows, which goes on where it was.
    assert_eq!(
        invoice(&mut conn, at(2027, 3, 31, 0, 0, 0)),
        "INVFY2026-0003"
    );
    assert_eq!(
        invoice(&mut conn, at(2027, 6, 30, 12, 0, 0)),
        "INVFY2027-0002"
    );

    // Tokyo: April 1st begins at 15:00 UTC on March 31st; the year is named by its end.
    let credits = |conn: &mut C, when, n: usize| {
        clock.set(when);
        let mut rows: Vec<CreditNote> = (0..n)
            .map(|_| CreditNote {
                id: String::new(),
                kind: "credit".into(),
            })
            .collect();
        diesel_seqgen::insert_into(fiscal_invoices::table)
            .values(&mut rows)
            .with_generator(&generator)
            .execute(conn)
            .unwrap();
        rows.into_iter().map(|r| r.id).collect::<Vec<_>>()
    };
    assert_eq!(
        credits(&mut conn, at(2027, 3, 31, 14, 59, 59), 2),
        ["CN270001", "CN270002"]
    );
    assert_eq!(
        credits(&mut conn, at(2027, 3, 31, 15, 0, 0), 1),
        ["CN280001"]
    );

    // The tools read the fiscal year from the key's shape: the current counter and when its
    // year ends, in the time zone asked for.
    let rows = admin::capacity(
        &mut conn,
        Some("fiscal_invoices"),
        TimeZone::Utc,
        at(2027, 6, 30, 12, 0, 0),
    )
    .unwrap();
    let current: Vec<_> = rows.iter().filter(|row| row.current).collect();
    assert_eq!(current.len(), 1, "{rows:?}");
    assert_eq!(current[0].period, "FY2027-");
    assert_eq!(current[0].used, 2);
    assert_eq!(current[0].period_ends, Some(at(2028, 4, 1, 0, 0, 0)));
}
