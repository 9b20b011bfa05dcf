//! Gapless numbers inside the transaction or after the commit (`gapless = "deferred"`), under
//! transactions that hold 20 ms of other work after their insert (lines, stock moves, a
//! payment call), one in ten rolled back: committed rows per second of each, and for the
//! deferred mode the time from a row's commit to its number, with a follower running
//! (`diesel_seqgen::pending`). On PostgreSQL also django-sequences under the same load. Sides
//! interleaved per round.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use diesel::connection::SimpleConnection;
use diesel::r2d2::{ConnectionManager, Pool, PooledConnection};
use diesel::Connection;
use diesel_seqgen::pending::{self, FollowConnection};
use diesel_seqgen::DistributedId;
use hdrhistogram::Histogram;
use std::ops::DerefMut;

#[cfg(feature = "postgres")]
use super::gapless::django_held;
use super::gapless_steps::{ratio, step, Form, ROLLBACK_EVERY};
use super::inserts::{measure, spread};
use super::{Args, BenchConnection, BoxError};

diesel::table! {
    /// Invoices numbered inside their transaction.
    bench_held (id) {
        id -> Text,
        amount -> BigInt,
    }
}

diesel::table! {
    /// Invoices numbered after their commit.
    bench_deferred (id) {
        id -> BigInt,
        number -> Nullable<Text>,
        amount -> BigInt,
    }
}

/// Numbered inside the caller's transaction: its counter row stays locked until the commit.
#[derive(Debug, diesel::Insertable, DistributedId)]
#[diesel(table_name = bench_held)]
pub struct HeldInvoice {
    #[distributed_id(key = "bench_held", prefix = "INV", date = "", pad = 8, gapless)]
    id: String,
    amount: i64,
}

/// Numbered after the commit by a follower.
#[derive(Debug, diesel::Insertable, DistributedId)]
#[diesel(table_name = bench_deferred)]
pub struct DeferredInvoice {
    #[distributed_id(
        key = "bench_deferred",
        prefix = "INV",
        date = "",
        pad = 8,
        gapless = "deferred"
    )]
    number: Option<String>,
    amount: i64,
}

/// The other work each transaction does after its insert.
const HOLD: Duration = Duration::from_millis(20);

/// What differs per server.
pub(super) struct Server {
    pub name: &'static str,
    /// The tables, created anew, with `numbered_at` set when a row gets its number.
    pub tables: &'static str,
    /// The id the session inserted last.
    pub last_id: &'static str,
    /// `numbered_at` as seconds since 1970.
    pub numbered_at: &'static str,
    /// The follower's longest wait between two looks.
    pub poll: Duration,
}

#[cfg(feature = "postgres")]
pub(super) const POSTGRES: Server = Server {
    name: "postgres",
    tables: "DROP TABLE IF EXISTS bench_held, bench_deferred; \
        CREATE TABLE bench_held (id VARCHAR(40) PRIMARY KEY, amount BIGINT NOT NULL); \
        CREATE TABLE bench_deferred (id BIGSERIAL PRIMARY KEY, number VARCHAR(40) UNIQUE, \
            amount BIGINT NOT NULL, numbered_at TIMESTAMPTZ); \
        CREATE INDEX bench_deferred_pending ON bench_deferred (id) WHERE number IS NULL; \
        CREATE OR REPLACE FUNCTION bench_numbered_at() RETURNS trigger LANGUAGE plpgsql AS $$ \
            BEGIN NEW.numbered_at = clock_timestamp(); RETURN NEW; END $$; \
        CREATE TRIGGER bench_numbered_at BEFORE UPDATE OF number ON bench_deferred \
            FOR EACH ROW EXECUTE FUNCTION bench_numbered_at();",
    last_id: "lastval()",
    numbered_at: "EXTRACT(EPOCH FROM numbered_at)::float8",
    // Woken by NOTIFY (`pending::notify_on_commit`); the poll is the fallback.
    poll: Duration::from_secs(1),
};

#[cfg(feature = "mysql")]
pub(super) const MYSQL: Server = Server {
    name: "mysql",
    tables: "DROP TABLE IF EXISTS bench_held, bench_deferred; \
        CREATE TABLE bench_held (id VARCHAR(40) PRIMARY KEY, amount BIGINT NOT NULL); \
        CREATE TABLE bench_deferred (id BIGINT AUTO_INCREMENT PRIMARY KEY, \
            number VARCHAR(40) UNIQUE, amount BIGINT NOT NULL, \
            numbered_at TIMESTAMP(6) NULL DEFAULT NULL ON UPDATE CURRENT_TIMESTAMP(6), \
            INDEX bench_deferred_pending (number, id));",
    last_id: "CAST(LAST_INSERT_ID() AS SIGNED)",
    numbered_at: "UNIX_TIMESTAMP(numbered_at) + 0e0",
    poll: Duration::from_millis(10),
};

type Pooled<C> = PooledConnection<ConnectionManager<C>>;

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Prints the comparison for `server` at `url`, with `args.workers` workers.
pub(super) fn report<C>(
    args: &Args,
    url: &str,
    server: &Server,
    prepare: impl Fn(&mut C) -> Result<(), BoxError>,
) -> Result<(), BoxError>
where
    C: BenchConnection + FollowConnection,
    HeldInvoice: diesel_seqgen::insert::Insert<bench_held::table, Pooled<C>>,
    DeferredInvoice: diesel_seqgen::insert::Insert<bench_deferred::table, Pooled<C>>,
{
    let workers = args.workers;
    let pool = Pool::builder()
        .max_size(workers as u32 + 2)
        .build(ConnectionManager::<C>::new(url))?;
    {
        let mut conn = pool.get()?;
        diesel_seqgen::run_migrations(&mut *conn)?;
        conn.batch_execute(server.tables)?;
        conn.batch_execute(
            "DELETE FROM db_key WHERE key_name IN ('bench_held', 'bench_deferred')",
        )?;
        prepare(&mut conn)?;
    }
    let (spec, rows) = pending::rows_of::<DeferredInvoice>(bench_deferred::id)?;
    let seconds = args.gapless_seconds;
    let (attempts, committed) = (AtomicU64::new(0), AtomicU64::new(0));
    let deferred_committed = AtomicU64::new(0);
    let commits: Mutex<HashMap<i64, f64>> = Mutex::new(HashMap::new());
    const SIDES: [&str; 3] = [
        "seqgen `gapless`: the number inside the transaction",
        "seqgen `gapless = \"deferred\"`: numbered after the commit",
        "django-sequences 3.1: `get_next_value` in `atomic()`",
    ];
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); SIDES.len()];
    for round in 0..args.rounds as usize {
        for side in (0..SIDES.len()).map(|i| (i + round) % SIDES.len()) {
            let rate = match side {
                0 => Some(held(&pool, workers, seconds, &attempts, &committed)?),
                1 => {
                    let url = url.to_owned();
                    let connect = move || -> diesel_seqgen::Result<C> { Ok(C::establish(&url)?) };
                    let follower =
                        pending::spawn_follower(connect, spec.clone(), rows, server.poll);
                    let rate = deferred(
                        &pool,
                        server,
                        workers,
                        seconds,
                        &deferred_committed,
                        &commits,
                    );
                    wait_until_numbered(&mut pool.get()?)?;
                    follower.stop()?;
                    Some(rate?)
                }
                #[cfg(feature = "postgres")]
                _ if server.name == "postgres" => django_held(args, url, workers, seconds, HOLD)?,
                _ => None,
            };
            if let Some(rate) = rate {
                rates[side].push(rate);
            }
        }
    }
    let latency = latency(
        &mut pool.get()?,
        server,
        &commits.into_inner().unwrap_or_default(),
    )?;
    println!(
        "\n## {}: gapless, {workers} workers, each transaction {} ms of other work after its insert, \
         1 in {ROLLBACK_EVERY} rolled back: committed rows/s (median, range of {} rounds of {seconds} s)",
        server.name,
        HOLD.as_millis(),
        args.rounds
    );
    println!("| mode | committed rows/s | ÷ inside the transaction |");
    println!("|---|---|---|");
    for (side, name) in SIDES.iter().enumerate() {
        if rates[side].is_empty() {
            continue;
        }
        let (lo, mid, hi) = spread(&rates[side]);
        let versus = if side == 0 {
            String::new()
        } else {
            ratio(&rates[side], &rates[0])
        };
        println!("| {name} | {mid:.0} ({lo:.0}–{hi:.0}) | {versus} |");
    }
    println!(
        "\ncommit to number (deferred, follower {}): p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms over {} rows",
        if server.name == "postgres" { "woken by NOTIFY" } else { "polling every 10 ms" },
        latency.value_at_quantile(0.5) as f64 / 1000.0,
        latency.value_at_quantile(0.99) as f64 / 1000.0,
        latency.max() as f64 / 1000.0,
        latency.len()
    );
    check(&mut pool.get()?, &committed, &deferred_committed)
}

/// The number inside the transaction: `workers` writers for `seconds`; committed rows/s.
fn held<C>(
    pool: &Pool<ConnectionManager<C>>,
    workers: usize,
    seconds: f64,
    attempts: &AtomicU64,
    committed: &AtomicU64,
) -> Result<f64, BoxError>
where
    C: BenchConnection,
    HeldInvoice: diesel_seqgen::insert::Insert<bench_held::table, Pooled<C>>,
{
    let before = committed.load(Ordering::Relaxed);
    let (_, secs) = measure(seconds, workers, pool, |_, conn| {
        step(
            conn,
            Form::InTransaction,
            attempts,
            committed,
            |conn: &mut Pooled<C>| {
                let mut row = HeldInvoice {
                    id: String::new(),
                    amount: 1,
                };
                diesel_seqgen::insert_into(bench_held::table)
                    .values(&mut row)
                    .execute(conn)?;
                std::thread::sleep(HOLD);
                Ok::<_, diesel_seqgen::Error>(())
            },
        )
    })?;
    Ok((committed.load(Ordering::Relaxed) - before) as f64 / secs)
}

/// The number after the commit: `workers` writers for `seconds`, each commit's time recorded
/// by the row's id; committed rows/s.
fn deferred<C>(
    pool: &Pool<ConnectionManager<C>>,
    server: &Server,
    workers: usize,
    seconds: f64,
    committed: &AtomicU64,
    commits: &Mutex<HashMap<i64, f64>>,
) -> Result<f64, BoxError>
where
    C: BenchConnection,
    DeferredInvoice: diesel_seqgen::insert::Insert<bench_deferred::table, Pooled<C>>,
{
    let attempts = AtomicU64::new(0);
    let before = committed.load(Ordering::Relaxed);
    let (_, secs) = measure(seconds, workers, pool, |_, conn| {
        let roll_back =
            attempts.fetch_add(1, Ordering::Relaxed) % ROLLBACK_EVERY == ROLLBACK_EVERY - 1;
        let result = conn.transaction(|conn| {
            let mut row = DeferredInvoice {
                number: None,
                amount: 1,
            };
            diesel_seqgen::insert_into(bench_deferred::table)
                .values(&mut row)
                .execute(conn)?;
            let id = C::integer(conn.deref_mut(), &format!("SELECT {}", server.last_id))?;
            std::thread::sleep(HOLD);
            if roll_back {
                return Err(diesel_seqgen::Error::Database(
                    diesel::result::Error::RollbackTransaction,
                ));
            }
            Ok(id)
        });
        match result {
            Ok(id) => {
                commits.lock().unwrap().insert(id, now());
                committed.fetch_add(1, Ordering::Relaxed);
            }
            Err(_) if roll_back => {}
            Err(e) => return Err(e.into()),
        }
        Ok(1)
    })?;
    Ok((committed.load(Ordering::Relaxed) - before) as f64 / secs)
}

/// Waits (up to 30 s) until the follower numbered every committed row.
fn wait_until_numbered<C: BenchConnection>(conn: &mut Pooled<C>) -> Result<(), BoxError> {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let left = C::integer(
            conn.deref_mut(),
            "SELECT COUNT(*) FROM bench_deferred WHERE number IS NULL",
        )?;
        if left == 0 {
            return Ok(());
        }
        if Instant::now() > until {
            return Err(format!("{left} committed rows still without a number after 30 s").into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Each committed row's time from its commit to its number, in microseconds.
fn latency<C: BenchConnection>(
    conn: &mut Pooled<C>,
    server: &Server,
    commits: &HashMap<i64, f64>,
) -> Result<Histogram<u64>, BoxError> {
    let numbered = C::pairs(
        conn.deref_mut(),
        &format!("SELECT id, {} FROM bench_deferred", server.numbered_at),
    )?;
    let mut histogram = Histogram::<u64>::new(3)?;
    for (id, at) in numbered {
        if let Some(committed) = commits.get(&id) {
            // The trigger's time is the update's, inside the follower's transaction: a row
            // numbered before the writer saw its own commit return counts as 0.
            histogram.record(((at - committed).max(0.0) * 1e6) as u64)?;
        }
    }
    Ok(histogram)
}

/// Both tables' committed rows hold exactly 1..N.
fn check<C: BenchConnection>(
    conn: &mut Pooled<C>,
    held: &AtomicU64,
    deferred: &AtomicU64,
) -> Result<(), BoxError> {
    for (table, column, committed) in [
        ("bench_held", "id", held),
        ("bench_deferred", "number", deferred),
    ] {
        let count = C::integer(conn.deref_mut(), &format!("SELECT COUNT(*) FROM {table}"))?;
        let highest = C::text(
            conn.deref_mut(),
            &format!("SELECT MAX({column}) FROM {table}"),
        )?;
        let exact = count as u64 == committed.load(Ordering::Relaxed)
            && highest.as_deref().unwrap_or("INV00000000") == format!("INV{count:08}");
        println!(
            "{table}: {count} committed rows, numbered exactly 1..={count}: {}",
            if exact { "yes" } else { "NO" }
        );
        if !exact {
            return Err(format!("{table}'s numbers have a hole or a repeat").into());
        }
    }
    Ok(())
}
