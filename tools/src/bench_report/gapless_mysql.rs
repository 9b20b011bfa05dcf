//! Gapless mode on MySQL/MariaDB: what PostgreSQL's comparison (`gapless.rs`) costs there.
//! Neither django-sequences' PostgreSQL statement nor pgbench applies, so the baseline is the
//! same work written by hand with Diesel, the least a design that takes the number inside the
//! caller's transaction sends on MySQL: `UPDATE … SET v = LAST_INSERT_ID(v + 1)`,
//! `SELECT LAST_INSERT_ID()` and the `INSERT`, in a transaction. seqgen twice, as on
//! PostgreSQL: the insert in a transaction, and the insert alone (MySQL has no one-statement
//! form: seqgen opens the transaction itself). 8 workers, one transaction in ten rolled back,
//! rounds interleaved; every side durable (the server's `innodb_flush_log_at_trx_commit = 1`,
//! which seqgen requires).

use std::sync::atomic::AtomicU64;

use diesel::connection::SimpleConnection;
use diesel::r2d2::{ConnectionManager, PooledConnection};
use diesel::result::Error as DieselError;
use diesel::sql_types::BigInt;
use diesel::{MysqlConnection, QueryDsl, RunQueryDsl};
use diesel_seqgen::DistributedId;

use super::gapless_steps::{check_numbered, ratio, step, Form, ROLLBACK_EVERY, WORKERS};
use super::inserts::{measure, migrated_pool, spread};
use super::{Args, BoxError};

diesel::table! {
    /// Rows inserted with a gapless ID by seqgen.
    bench_invoices_my (id) {
        id -> Text,
        amount -> BigInt,
    }
}

diesel::table! {
    /// Rows inserted by hand, numbered from `bench_counter_my`.
    bench_invoices_by_hand (id) {
        id -> Text,
        amount -> BigInt,
    }
}

diesel::table! {
    /// The hand-written counter.
    bench_counter_my (id) {
        id -> Integer,
        v -> BigInt,
    }
}

diesel::define_sql_function! {
    /// `v`, remembered as this connection's `LAST_INSERT_ID()`.
    #[sql_name = "LAST_INSERT_ID"]
    fn remember(v: BigInt) -> BigInt;
}

diesel::define_sql_function! {
    /// The value this connection last remembered.
    #[sql_name = "LAST_INSERT_ID"]
    fn last_insert_id() -> diesel::sql_types::Unsigned<BigInt>;
}

/// An invoice numbered in the caller's transaction.
#[derive(Debug, Clone, diesel::Insertable, DistributedId)]
#[diesel(table_name = bench_invoices_my)]
struct NewInvoice {
    #[distributed_id(key = "bench_invoices_my", prefix = "INV", date = "", pad = 8, gapless)]
    id: String,
    amount: i64,
}

type Pooled = PooledConnection<ConnectionManager<MysqlConnection>>;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Side {
    Seqgen,
    SeqgenAlone,
    ByHand,
}

impl Side {
    const ALL: [Side; 3] = [Side::Seqgen, Side::SeqgenAlone, Side::ByHand];

    fn name(self) -> &'static str {
        match self {
            Side::Seqgen => "seqgen gapless: `diesel_seqgen::insert_into` in a transaction",
            Side::SeqgenAlone => "seqgen gapless: `diesel_seqgen::insert_into` alone",
            Side::ByHand => {
                "by hand: `UPDATE … LAST_INSERT_ID(v + 1)`, `SELECT LAST_INSERT_ID()`, \
                 `INSERT` in a transaction (baseline)"
            }
        }
    }
}

/// Prints the gapless table for the MySQL/MariaDB database at `url`.
pub(super) fn report(args: &Args, url: &str) -> Result<(), BoxError> {
    let pool = &migrated_pool::<MysqlConnection>(url, 10)?;
    pool.get()?.batch_execute(
        "DROP TABLE IF EXISTS bench_invoices_my, bench_invoices_by_hand, bench_counter_my; \
         CREATE TABLE bench_invoices_my (id VARCHAR(40) PRIMARY KEY, amount BIGINT NOT NULL); \
         CREATE TABLE bench_invoices_by_hand (id VARCHAR(40) PRIMARY KEY, amount BIGINT NOT NULL); \
         CREATE TABLE bench_counter_my (id INT PRIMARY KEY, v BIGINT NOT NULL); \
         INSERT INTO bench_counter_my VALUES (1, 0); \
         DELETE FROM db_key WHERE key_name = 'bench_invoices_my';",
    )?;
    let seconds = args.gapless_seconds;
    let attempts = AtomicU64::new(0);
    let (committed, by_hand) = (AtomicU64::new(0), AtomicU64::new(0));
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); Side::ALL.len()];
    for round in 0..args.rounds as usize {
        for i in (0..Side::ALL.len()).map(|i| (i + round) % Side::ALL.len()) {
            let side = Side::ALL[i];
            let (transactions, secs) = measure(seconds, WORKERS, pool, |_, conn| match side {
                Side::Seqgen => step(
                    conn,
                    Form::InTransaction,
                    &attempts,
                    &committed,
                    insert_invoice,
                ),
                Side::SeqgenAlone => step(conn, Form::Alone, &attempts, &committed, insert_invoice),
                // Its rows are not seqgen's: counted apart, and not checked.
                Side::ByHand => step(
                    conn,
                    Form::InTransaction,
                    &attempts,
                    &by_hand,
                    insert_by_hand,
                ),
            })?;
            rates[i].push(transactions as f64 / secs);
        }
    }

    let (count, highest) = bench_invoices_my::table
        .select((
            diesel::dsl::count_star(),
            diesel::dsl::max(bench_invoices_my::id),
        ))
        .get_result::<(i64, Option<String>)>(&mut pool.get()?)?;
    println!(
        "\n## mysql: gapless, {WORKERS} workers, transactions/s (committed and rolled back, \
         1 in {ROLLBACK_EVERY} rolled back; median of {} rounds of {seconds} s)",
        args.rounds
    );
    println!("| path | transactions/s (median, range) | ÷ by hand (median, range) |");
    println!("|---|---|---|");
    for (i, side) in Side::ALL.into_iter().enumerate() {
        let (lo, mid, hi) = spread(&rates[i]);
        let ratio = match side {
            Side::ByHand => String::new(),
            _ => ratio(&rates[i], &rates[2]),
        };
        println!("| {} | {mid:.0} ({lo:.0}–{hi:.0}) | {ratio} |", side.name());
    }
    check_numbered(count, highest, &committed)
}

/// One invoice inserted by seqgen on a pooled connection.
fn insert_invoice(conn: &mut Pooled) -> Result<(), diesel_seqgen::Error> {
    let mut rows = vec![NewInvoice {
        id: String::new(),
        amount: 1,
    }];
    diesel_seqgen::insert_into(bench_invoices_my::table)
        .values(&mut rows)
        .execute(conn)
        .map(drop)
}

/// The same by hand, inside the caller's transaction: Diesel's query builder, so that each
/// statement is prepared once per connection, as seqgen's are.
fn insert_by_hand(conn: &mut Pooled) -> Result<(), DieselError> {
    use diesel::ExpressionMethods;
    diesel::update(bench_counter_my::table.find(1))
        .set(bench_counter_my::v.eq(remember(bench_counter_my::v + 1)))
        .execute(conn)?;
    let n: u64 = diesel::select(last_insert_id()).get_result(conn)?;
    diesel::insert_into(bench_invoices_by_hand::table)
        .values((
            bench_invoices_by_hand::id.eq(format!("INV{n:08}")),
            bench_invoices_by_hand::amount.eq(1),
        ))
        .execute(conn)?;
    Ok(())
}
