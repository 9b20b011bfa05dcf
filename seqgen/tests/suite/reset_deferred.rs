//! The reset apart from the printed date on the follower's door (`gapless = "deferred"`):
//! rows dated on days of two years, committed without a number (one in five rolled back),
//! then numbered by `pending::number_pending`, as it comes and after `use_pool`. Each ID
//! prints its row's day, and each year's numbers are exactly 1..N over the committed rows.

use crate::common;

use std::collections::BTreeMap;

use chrono::NaiveDate;
use common::{TestConnection, TestDb};
use diesel_seqgen::insert::Insert;
use diesel_seqgen::{pending, Error};

backend_tests!(
    the_follower_numbers_the_days_of_a_year_from_its_counter,
    the_follower_numbers_the_days_of_a_year_from_its_counter_after_use_pool,
);

diesel::table! {
    reset_pend (id) {
        id -> BigInt,
        number -> Nullable<Text>,
        issued_on -> Date,
    }
}

#[derive(diesel::Insertable, diesel_seqgen::DistributedId)]
#[diesel(table_name = reset_pend)]
struct DeferredOrder {
    #[distributed_id(
        key = "reset_deferred",
        prefix = "SO",
        date = "%Y%m%d-",
        pad = 5,
        gapless = "deferred",
        reset = "year",
        period_from = "issued_on"
    )]
    number: Option<String>,
    issued_on: NaiveDate,
}

fn the_follower_numbers_the_days_of_a_year_from_its_counter<C>(db: TestDb<C>)
where
    C: TestConnection,
    DeferredOrder: Insert<reset_pend::table, C>,
{
    numbered_after_the_commit(db, false);
}

fn the_follower_numbers_the_days_of_a_year_from_its_counter_after_use_pool<C>(db: TestDb<C>)
where
    C: TestConnection,
    DeferredOrder: Insert<reset_pend::table, C>,
{
    numbered_after_the_commit(db, true);
}

fn numbered_after_the_commit<C>(db: TestDb<C>, use_pool: bool)
where
    C: TestConnection,
    DeferredOrder: Insert<reset_pend::table, C>,
{
    let id = match C::NAME {
        "sqlite" => "id INTEGER PRIMARY KEY",
        "postgres" => "id BIGSERIAL PRIMARY KEY",
        _ => "id BIGINT AUTO_INCREMENT PRIMARY KEY",
    };
    let table = format!(
        "CREATE TABLE reset_pend ({id}, number VARCHAR(30) UNIQUE, issued_on DATE NOT NULL)"
    );
    let scratch = common::scratch_with_table(&db, "reset_deferred", &table, None);
    if use_pool {
        diesel_seqgen::global::use_pool(scratch.pool(4)).unwrap();
    }
    let mut conn = scratch.connect();
    let days = [(2025, 12, 30), (2025, 12, 31), (2026, 1, 1), (2026, 1, 2)]
        .map(|(y, m, d)| NaiveDate::from_ymd_opt(y, m, d).unwrap());
    let mut committed = 0;
    for i in 0..24 {
        let mut order = DeferredOrder {
            number: None,
            issued_on: days[i % days.len()],
        };
        let result = diesel::Connection::transaction(&mut conn, |conn| {
            diesel_seqgen::insert_into(reset_pend::table)
                .values(&mut order)
                .execute(conn)?;
            if i % 5 == 3 {
                return Err(Error::Database(diesel::result::Error::RollbackTransaction));
            }
            Ok(())
        });
        committed += usize::from(result.is_ok());
    }
    let (spec, rows) = pending::rows_of::<DeferredOrder>(reset_pend::id).unwrap();
    let done = pending::number_pending(&mut conn, spec, rows).unwrap();
    assert_eq!(done.rows as usize, committed);
    let numbered = "FROM reset_pend ORDER BY id";
    let numbers = C::texts(&mut conn, &format!("SELECT number AS text {numbered}"));
    let dates = C::texts(
        &mut conn,
        &format!("SELECT CAST(issued_on AS CHAR(10)) AS text {numbered}"),
    );
    let mut years: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for (number, date) in numbers.iter().zip(&dates) {
        let day = date.get(..10).unwrap().replace('-', "");
        assert!(
            number.starts_with(&format!("SO{day}-")),
            "{number} dated {date}"
        );
        years
            .entry(&number[2..6])
            .or_default()
            .push(number[11..].parse().unwrap());
    }
    assert_eq!(years.len(), 2, "{years:?}");
    for (year, mut numbers) in years {
        numbers.sort_unstable();
        let n = numbers.len() as u64;
        assert_eq!(numbers, (1..=n).collect::<Vec<_>>(), "{year}");
    }
}
