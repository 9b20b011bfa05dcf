//! Gapless mode on PostgreSQL beside django-sequences 3.1 doing the same and pgbench's
//! single-row `UPDATE … RETURNING` (the ceiling of any design that commits once per number),
//! rounds interleaved in one run. 8 workers each; in seqgen's and Django's, one transaction
//! in ten rolls back. seqgen twice: the insert inside the caller's transaction, and the insert
//! alone, which is its own transaction (one statement in autocommit), the tenth still in a
//! transaction rolled back.

use std::process::Command;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::r2d2::{ConnectionManager, PooledConnection};
use diesel::{PgConnection, QueryDsl, RunQueryDsl};
use diesel_seqgen::DistributedId;

use super::gapless_steps::{check_numbered, ratio, step, Form, ROLLBACK_EVERY, WORKERS};
use super::inserts::{measure, migrated_pool, spread};
use super::{Args, BoxError};

diesel::table! {
    /// Rows inserted with a gapless ID.
    bench_invoices (id) {
        id -> Text,
        amount -> BigInt,
    }
}

/// An invoice numbered in the caller's transaction.
#[derive(Debug, Clone, diesel::Insertable, DistributedId)]
#[diesel(table_name = bench_invoices)]
pub struct NewInvoice {
    #[distributed_id(key = "bench_invoices", prefix = "INV", date = "", pad = 8, gapless)]
    id: String,
    amount: i64,
}

/// What pgbench runs, once per transaction.
const PGBENCH_SCRIPT: &str = "UPDATE bench_counter SET v = v + 1 WHERE id = 1 RETURNING v;\n";
/// The Django side, run with `--django-python`.
const DJANGO_SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/gapless_django.py");
/// Every side commits durably: seqgen makes a transaction that takes a gapless number wait for
/// its WAL flush whatever the session says, so the others must too.
const PGOPTIONS: &str = "-c synchronous_commit=on";

#[derive(Debug, Clone, Copy, PartialEq)]
enum Side {
    Seqgen,
    SeqgenAlone,
    Django,
    Pgbench,
}

impl Side {
    const ALL: [Side; 4] = [Side::Seqgen, Side::SeqgenAlone, Side::Django, Side::Pgbench];

    fn name(self) -> &'static str {
        match self {
            Side::Seqgen => "seqgen gapless: `diesel_seqgen::insert_into` in a transaction",
            Side::SeqgenAlone => {
                "seqgen gapless: `diesel_seqgen::insert_into` alone (its own transaction; the tenth \
                 in one rolled back)"
            }
            Side::Django => "django-sequences 3.1: `get_next_value` + INSERT in `atomic()`",
            Side::Pgbench => "pgbench: single-row `UPDATE … RETURNING` (ceiling)",
        }
    }

    fn is_seqgen(self) -> bool {
        matches!(self, Side::Seqgen | Side::SeqgenAlone)
    }
}

/// Prints the gapless table for the PostgreSQL database at `url`.
pub(super) fn report(args: &Args, url: &str) -> Result<(), BoxError> {
    let pool = &migrated_pool::<PgConnection>(url, 10)?;
    pool.get()?.batch_execute(
        "DROP TABLE IF EXISTS bench_invoices, bench_counter; \
             CREATE TABLE bench_invoices (id VARCHAR(40) PRIMARY KEY, amount BIGINT NOT NULL); \
             CREATE TABLE bench_counter (id INT PRIMARY KEY, v BIGINT NOT NULL); \
             INSERT INTO bench_counter VALUES (1, 0); \
             DELETE FROM db_key WHERE key_name = 'bench_invoices';",
    )?;
    let pgbench_script = std::env::temp_dir().join("seqgen-bench-update.sql");
    std::fs::write(&pgbench_script, PGBENCH_SCRIPT)?;
    let seconds = args.gapless_seconds;

    let attempts = AtomicU64::new(0);
    let committed = AtomicU64::new(0);
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); Side::ALL.len()];
    for round in 0..args.rounds as usize {
        for i in (0..Side::ALL.len()).map(|i| (i + round) % Side::ALL.len()) {
            let rate = match Side::ALL[i] {
                side @ (Side::Seqgen | Side::SeqgenAlone) => {
                    let form = match side {
                        Side::SeqgenAlone => Form::Alone,
                        _ => Form::InTransaction,
                    };
                    let (transactions, secs) = measure(seconds, WORKERS, pool, |_, conn| {
                        step(conn, form, &attempts, &committed, insert_invoice)
                    })?;
                    Some(transactions as f64 / secs)
                }
                Side::Django => django(args, url, WORKERS, seconds, Duration::ZERO)?,
                Side::Pgbench => pgbench(url, seconds, &pgbench_script)?,
            };
            if let Some(rate) = rate {
                rates[i].push(rate);
            }
        }
    }

    let (count, highest) = bench_invoices::table
        .select((
            diesel::dsl::count_star(),
            diesel::dsl::max(bench_invoices::id),
        ))
        .get_result::<(i64, Option<String>)>(&mut pool.get()?)?;

    println!(
        "\n## postgres: gapless, {WORKERS} workers, transactions/s (committed and rolled back, \
         1 in {ROLLBACK_EVERY} rolled back; median of {} rounds of {seconds} s)",
        args.rounds
    );
    println!(
        "| path | transactions/s (median, range) | ÷ django-sequences (median, range) | \
         ÷ pgbench (median, range) |"
    );
    println!("|---|---|---|---|");
    let ratio = |i: usize, other: Side| {
        ratio(
            &rates[i],
            &rates[Side::ALL.iter().position(|&s| s == other).unwrap_or(0)],
        )
    };
    for (i, side) in Side::ALL.into_iter().enumerate() {
        if rates[i].is_empty() {
            println!("| {} | not run (see above) | | |", side.name());
            continue;
        }
        let (lo, mid, hi) = spread(&rates[i]);
        let (django, pgbench) = match side.is_seqgen() {
            true => (ratio(i, Side::Django), ratio(i, Side::Pgbench)),
            false => Default::default(),
        };
        println!(
            "| {} | {mid:.0} ({lo:.0}–{hi:.0}) | {django} | {pgbench} |",
            side.name()
        );
    }
    check_numbered(count, highest, &committed)
}

/// One invoice inserted by seqgen, numbered by the insert itself, on a pooled connection (the
/// form whose database the default generator remembers).
fn insert_invoice(
    conn: &mut PooledConnection<ConnectionManager<PgConnection>>,
) -> Result<(), diesel_seqgen::Error> {
    let mut rows = vec![NewInvoice {
        id: String::new(),
        amount: 1,
    }];
    diesel_seqgen::insert_into(bench_invoices::table)
        .values(&mut rows)
        .execute(conn)
        .map(drop)
}

/// The Django script's committed rows per second with `workers` workers, each transaction
/// holding `hold` after its insert: see [`django`].
pub(super) fn django_held(
    args: &Args,
    url: &str,
    workers: usize,
    seconds: f64,
    hold: Duration,
) -> Result<Option<f64>, BoxError> {
    let line = run_django(args, url, workers, seconds, hold)?;
    Ok(line.and_then(|line| line["committed_per_second"].as_f64()))
}

/// Runs the Django script for `seconds`: its transactions per second, or `None` (with the
/// reason printed) when it cannot run here.
fn django(
    args: &Args,
    url: &str,
    workers: usize,
    seconds: f64,
    hold: Duration,
) -> Result<Option<f64>, BoxError> {
    let line = run_django(args, url, workers, seconds, hold)?;
    Ok(line.and_then(|line| line["transactions_per_second"].as_f64()))
}

/// The Django script's JSON line, checked gapless; `None` (with the reason printed) when it
/// cannot run here.
fn run_django(
    args: &Args,
    url: &str,
    workers: usize,
    seconds: f64,
    hold: Duration,
) -> Result<Option<serde_json::Value>, BoxError> {
    let output = Command::new(&args.django_python)
        .arg(DJANGO_SCRIPT)
        .args(["--url", url, "--workers", &workers.to_string()])
        .args(["--seconds", &seconds.to_string()])
        .args(["--hold-ms", &hold.as_millis().to_string()])
        .args(["--rollback-every", &ROLLBACK_EVERY.to_string()])
        .env("PGOPTIONS", PGOPTIONS)
        .output();
    let output = match output {
        Ok(output) if output.status.success() => output,
        Ok(output) => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let last = stderr.lines().last().unwrap_or("");
            eprintln!(
                "django-sequences not measured ({}: {last}); set it up as \
                 tools/scripts/gapless_django.py says and pass --django-python",
                args.django_python
            );
            return Ok(None);
        }
        Err(e) => {
            eprintln!("django-sequences not measured: {}: {e}", args.django_python);
            return Ok(None);
        }
    };
    let line: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    if line["gapless"] != serde_json::Value::Bool(true) {
        return Err(format!("django-sequences' rows have a hole: {line}").into());
    }
    Ok(Some(line))
}

/// Runs pgbench for `seconds` (rounded up to whole seconds): its transactions per second, or
/// `None` (with the reason printed) when it cannot run here.
fn pgbench(url: &str, seconds: f64, script: &std::path::Path) -> Result<Option<f64>, BoxError> {
    let output = Command::new("pgbench")
        .args(["-n", "-c", &WORKERS.to_string(), "-j", "2"])
        .args(["-T", &(seconds.ceil() as u64).max(1).to_string(), "-f"])
        .arg(script)
        .arg(url)
        .env("PGOPTIONS", PGOPTIONS)
        .output();
    let output = match output {
        Ok(output) if output.status.success() => output,
        Ok(output) => {
            eprintln!(
                "pgbench not measured: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            );
            return Ok(None);
        }
        Err(e) => {
            eprintln!("pgbench not measured: {e} (it comes with PostgreSQL's client tools)");
            return Ok(None);
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let tps = stdout
        .lines()
        .find_map(|line| line.strip_prefix("tps = "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("no `tps = ` in pgbench's output: {stdout}"))?;
    Ok(Some(tps))
}
