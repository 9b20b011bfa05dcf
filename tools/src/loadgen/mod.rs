//! The load generator behind `tools/src/bin/loadgen.rs` and the multi-process tests.
//!
//! Threads share one `diesel_seqgen::Generator` (one app instance per process) and an
//! r2d2 pool; each takes IDs `L` + 12-digit counter (optionally with a date part), optionally
//! inserting each into `loadgen_rows` (primary key: key and ID) inside a transaction and rolling back a fraction. At the
//! end it prints one JSON line.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use backon::BlockingRetryable;
use chrono::TimeDelta;
use diesel::r2d2::{ConnectionManager, Pool};
use diesel_seqgen::clock::OffsetClock;
use diesel_seqgen::{Generator, Spec};

mod args;
mod connection;
mod report;
pub mod rows;
mod through_insert;
mod worker;

use crate::history::History;
pub use args::{parse, Args, Form, Mode, Via};
pub use connection::LoadgenConnection;
use connection::Setup;
pub use report::Report;
use worker::{
    connection_lost, create_rows_table, insert_one, lost_or_promoting, open_out, random_scope,
    reconnect_backoff, record_end, series_exhausted, Quota, Worker,
};

/// Runs loadgen with command-line arguments: its exit status, 2 (and the usage) on bad
/// arguments, 1 on a failed run, 0 after printing the JSON line. A process that runs it ends
/// with [`crate::exit_at_once`].
pub fn status_with(args: impl IntoIterator<Item = String>) -> u8 {
    let args = match parse(args) {
        Ok(args) => args,
        Err(e) => {
            // Usage errors exit with 2; --help and --version print and exit with 0.
            let _ = e.print();
            return e.exit_code() as u8;
        }
    };
    match run(&args) {
        Ok(report) => {
            println!("{}", report.json());
            0
        }
        Err(e) => {
            eprintln!("loadgen: {}", with_causes(&*e));
            1
        }
    }
}

/// `e` and each error that caused it, `: `-separated ("running seqgen's migrations failed" says
/// nothing of why without its cause).
fn with_causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Runs a load against the database the URL names.
pub fn run(args: &Args) -> Result<Report, BoxError> {
    if args.run_async {
        #[cfg(any(
            feature = "async-sqlite",
            feature = "async-postgres",
            feature = "async-mysql"
        ))]
        return nonblocking::run(args);
        #[cfg(not(any(
            feature = "async-sqlite",
            feature = "async-postgres",
            feature = "async-mysql"
        )))]
        return Err("built without an async backend: add --features async-sqlite (or async-postgres, async-mysql)".into());
    }
    let url = args.url.as_str();
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        #[cfg(feature = "postgres")]
        return run_on::<diesel::PgConnection>(args, "postgres");
        #[cfg(not(feature = "postgres"))]
        return Err("built without PostgreSQL: add --features postgres".into());
    }
    if url.starts_with("mysql://") {
        #[cfg(feature = "mysql")]
        return run_on::<diesel::MysqlConnection>(args, "mysql");
        #[cfg(not(feature = "mysql"))]
        return Err("built without MySQL: add --features mysql".into());
    }
    #[cfg(feature = "sqlite")]
    return run_on::<diesel::SqliteConnection>(args, "sqlite");
    #[cfg(not(feature = "sqlite"))]
    Err("built without SQLite: add --features sqlite".into())
}

fn run_on<C: LoadgenConnection>(args: &Args, backend: &'static str) -> Result<Report, BoxError> {
    let url = args.url.strip_prefix("sqlite://").unwrap_or(&args.url);
    let pool = Pool::builder()
        .max_size(args.threads + 2)
        // One connection per thread up front; the two spare (reservations ahead, on the pool)
        // on demand: sixteen processes of four threads fit PostgreSQL's default 100.
        .min_idle(Some(args.threads))
        // While the database is away, fail fast and let the backoff decide when to try again.
        .connection_timeout(Duration::from_secs(2))
        .connection_customizer(Box::new(Setup))
        // Not `build`, which fails when no connection comes within the timeout: a process
        // (re)started while no server takes writes (a Patroni failover) waits below instead.
        .build_unchecked(ConnectionManager::<C>::new(url));
    // A process starting while its node restarts (a rolling restart) tries again, as an app
    // starting beside a failover would.
    (|| -> Result<(), BoxError> {
        let mut conn = pool.get()?;
        diesel_seqgen::run_migrations(&mut *conn)?;
        if args.insert {
            create_rows_table(&mut *conn)?;
        }
        if args.via == Via::InsertInto {
            // The default generator, as the README starts an app. `use_pool` asks the pool
            // which database it reaches: a query, which a cut session fails like any other.
            diesel_seqgen::global::use_pool(pool.clone())?;
        }
        Ok(())
    })
    .retry(reconnect_backoff())
    .sleep(std::thread::sleep)
    .when(connection_lost)
    .notify(|e, after| eprintln!("loadgen: setting up: {e}; trying again in {after:?}"))
    .call()?;
    let spec = Arc::new(spec_of(args)?);
    let generator = generator_of(args).pool(pool.clone()).build();
    if args.via == Via::InsertInto && args.accept_non_durable_server {
        diesel_seqgen::global::accept_non_durable_server();
    }

    // `--mode deferred`: the follower a service runs beside its writers, on connections of
    // its own, reconnecting after any failure a new attempt can fix.
    let follower = match args.mode {
        Mode::Deferred => {
            let (spec, rows) =
                diesel_seqgen::pending::rows_of::<rows::DeferredRow>(rows::loadgen_pending::id)?;
            let url = url.to_owned();
            let connect = move || -> diesel_seqgen::Result<C> {
                let mut conn = C::establish(&url)?;
                <C as LoadgenConnection>::setup(&mut conn)?;
                Ok(conn)
            };
            let poll = Duration::from_millis(20);
            Some(diesel_seqgen::pending::spawn_follower(
                connect,
                spec.clone(),
                rows,
                poll,
            ))
        }
        _ => None,
    };
    let history = args
        .history
        .as_deref()
        .map(History::open)
        .transpose()?
        .map(Arc::new);
    let started = Instant::now();
    let quota = Arc::new(Quota::new(args, started));
    let failed = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..args.threads)
        .map(|_| {
            let (pool, spec, generator, args) =
                (pool.clone(), spec.clone(), generator.clone(), args.clone());
            let (quota, failed, history) = (quota.clone(), failed.clone(), history.clone());
            let url = url.to_owned();
            std::thread::spawn(move || -> Result<Worker, BoxError> {
                let url = url.as_str();
                // Taken in the retried call below: a server that restarts between the set-up
                // and a thread's first ID is waited for as any later restart is (once, a
                // thread that took it here ended its process in a crash test).
                let mut conn = None;
                let mut plain = None; // `--form plain`'s connection
                let _ = &mut plain;
                let mut out = open_out(&args)?;
                let mut done = Worker::default();
                loop {
                    if !quota.more() || failed.load(Ordering::Relaxed) {
                        return Ok(done);
                    }
                    let scope = random_scope(&args);
                    let t0 = Instant::now();
                    let roll_back = args.insert && rand::random_bool(args.rollback);
                    // What an app does when the database restarts: the library returns the
                    // error; the app tries again on a new connection, a bounded number of
                    // times. A retried reservation may leave a hole, never a repeat.
                    let result = (|| {
                        let live = match conn.as_mut() {
                            Some(live) => live,
                            None => conn.insert(pool.get()?),
                        };
                        let op = history.as_deref().map(History::invoke).transpose()?;
                        let attempt = history.as_deref().zip(op.as_deref());
                        let mut handed = Vec::new();
                        let result = match args.via {
                            Via::InsertInto => through_insert::insert(
                                live,
                                &mut plain,
                                url,
                                &generator,
                                &args,
                                roll_back,
                                &mut handed,
                            ),
                            Via::NextId if args.insert => insert_one(
                                &mut **live,
                                &generator,
                                &spec,
                                &scope,
                                (roll_back, args.retry_conflicts),
                                (&mut handed, attempt),
                            )
                            .map(|id| id.into_iter().collect()),
                            Via::NextId => generator
                                .next_id(&mut **live, spec.scope(&scope))
                                .map(|id| vec![id])
                                .map_err(BoxError::from),
                        };
                        if let Some((history, op)) = attempt {
                            record_end(history, op, &result, &handed, roll_back)?;
                        }
                        if result.as_ref().is_err_and(lost_or_promoting) {
                            conn.take(); // the pool tests it before handing it out again
                        }
                        result
                    })
                    .retry(reconnect_backoff())
                    .sleep(std::thread::sleep)
                    .when(lost_or_promoting)
                    .notify(|e, after| {
                        done.reconnects += 1;
                        eprintln!("loadgen: {e}; trying again in {after:?}");
                    })
                    .call();
                    let ids = match result {
                        Ok(ids) => ids,
                        // The last series is full: the run is over, for every thread.
                        Err(e) if series_exhausted(&e) => return Ok(done),
                        Err(e) => {
                            failed.store(true, Ordering::Relaxed);
                            return Err(e);
                        }
                    };
                    done.took(t0.elapsed(), ids, &mut out, &args, &scope)?;
                }
            })
        })
        .collect();
    let mut total = Worker::default();
    let mut first_error = None;
    for worker in workers {
        match worker.join().expect("worker panicked") {
            Ok(w) => total.merge(w),
            Err(e) => first_error = first_error.or(Some(e)),
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    if let Some(follower) = follower {
        follower.stop()?;
    }
    let seconds = started.elapsed().as_secs_f64();
    let released = if args.release_on_exit {
        generator.release(&mut *pool.get()?)?
    } else {
        0
    };
    Ok(total.report(backend, args, seconds, generator.reservations(), released))
}

/// The spec the arguments describe: `L` + 12-digit counter, with the date part, series,
/// scopes and mode asked for.
fn spec_of(args: &Args) -> Result<Spec, BoxError> {
    let spec = Spec::builder(args.key.clone())
        .prefix("L")
        .date(args.date.clone())
        .pad(12)
        .batch(args.batch);
    let spec = if args.series.is_empty() {
        spec
    } else {
        spec.series(args.series.clone(), args.series_max)
    };
    let spec = if args.scopes > 0 { spec.scoped() } else { spec };
    Ok(match args.mode {
        // `--mode deferred` goes through `insert_into`, whose model has its own spec.
        Mode::Batched | Mode::Deferred => spec.build()?,
        Mode::Gapless => spec.gapless().build()?,
    })
}

/// The generator the arguments describe, but for its pool.
fn generator_of(args: &Args) -> diesel_seqgen::GeneratorBuilder {
    let generator =
        Generator::builder().clock(OffsetClock(TimeDelta::seconds(args.clock_offset_secs)));
    let generator = if args.accept_non_durable_server {
        generator.accept_non_durable_server()
    } else {
        generator
    };
    if args.fixed_batch {
        generator.fixed_batch()
    } else {
        generator
    }
}

#[cfg(any(
    feature = "async-sqlite",
    feature = "async-postgres",
    feature = "async-mysql"
))]
mod nonblocking;

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<Args, clap::Error> {
        parse(list.iter().map(|s| s.to_string()))
    }

    #[test]
    fn parses_and_refuses_bad_arguments() {
        let a = args(&[
            "--url",
            "x.db",
            "--threads",
            "8",
            "--seconds",
            "2",
            "--insert",
            "--rollback",
            "0.1",
        ])
        .unwrap();
        assert_eq!(
            (a.threads, a.seconds, a.insert, a.rollback),
            (8, Some(2.0), true, 0.1)
        );
        assert!(args(&[]).is_err());
        assert!(args(&["--url", "x", "--ids", "5", "--seconds", "1"]).is_err());
        assert!(args(&["--url", "x", "--threads", "many"]).is_err());
        assert!(args(&["--url", "x", "--rollback", "0.5"]).is_err());
        assert!(args(&["--url", "x", "--mode", "fast"]).is_err());
        assert!(args(&["--url", "x", "--bogus"]).is_err());
        assert!(args(&["--url", "x", "--threads", "0"]).is_err());
        assert!(args(&["--url", "x", "--insert", "--rollback", "1.5"]).is_err());
        assert!(
            args(&["--url", "x", "--retry-conflicts"]).is_err(),
            "needs --insert"
        );
        assert!(args(&["--url", "x", "--insert", "--retry-conflicts", "--async"]).is_err());
        assert!(
            args(&["--url", "x", "--insert", "--retry-conflicts"]).is_ok_and(|a| a.retry_conflicts)
        );
        assert!(args(&["--url", "x", "--series", "A,B"]).is_err());
        assert!(
            args(&["--url", "x", "--mode", "deferred"]).is_err(),
            "needs insert-into"
        );
        let deferred = [
            "--url",
            "x",
            "--insert",
            "--via",
            "insert-into",
            "--mode",
            "deferred",
        ];
        assert!(args(&deferred).is_ok());
        assert!(args(&[&deferred[..], &["--async"]].concat()).is_err());
        let b = args(&[
            "--url",
            "x",
            "--series",
            "A,B",
            "--series-max",
            "9",
            "--clock-offset-secs",
            "-86400",
        ])
        .unwrap();
        assert_eq!(
            (b.series, b.series_max, b.clock_offset_secs),
            (vec!["A".to_owned(), "B".to_owned()], 9, -86400)
        );
        assert_eq!(args(&["--url", "x", "--bogus"]).unwrap_err().exit_code(), 2);
        // An error's causes are printed with it.
        let cause: Box<dyn std::error::Error + Send + Sync> = "the lock wait timed out".into();
        let e = diesel_seqgen::Error::Migration(cause);
        assert_eq!(
            super::with_causes(&e),
            "running seqgen's migrations failed: the lock wait timed out"
        );
        // A clock shift chrono cannot add is a usage error, not a panic.
        for huge in ["9223372036854775807", "-9223372036854775808", "3162240001"] {
            let err = args(&["--url", "x", "--clock-offset-secs", huge]).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{huge}: {err}");
        }
    }
}
