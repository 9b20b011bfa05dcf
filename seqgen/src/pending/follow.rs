//! Numbering pending rows as they commit: a loop on one connection ([`follow`]), one that
//! connects again after what a new attempt can fix ([`keep_following`]), the same on a
//! thread of its own ([`spawn_follower`]), woken on PostgreSQL by `NOTIFY`
//! ([`notify_on_commit`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use backon::BackoffBuilder;
use diesel_seqgen_core::Spec;

use super::{number_pending, Numbered, PendingRows};
use crate::backend::{is_missing_object, IdConnection};
use crate::error::{Error, Result};

/// The channel [`notify_on_commit`]'s trigger notifies and followers on PostgreSQL listen to.
#[cfg(feature = "postgres")]
pub const CHANNEL: &str = "seqgen_pending";

/// A connection a follower waits on between two rounds. On PostgreSQL it listens to
/// [`CHANNEL`] and wakes when a notification arrives; elsewhere it sleeps.
pub trait FollowConnection: IdConnection {
    /// Starts listening, where the database can tell of commits.
    fn listen(&mut self) -> Result<()> {
        Ok(())
    }

    /// Waits until `timeout` passes, or (PostgreSQL) a notification arrives.
    fn wait(&mut self, timeout: Duration) -> Result<()> {
        std::thread::sleep(timeout);
        Ok(())
    }
}

#[cfg(feature = "sqlite")]
impl FollowConnection for diesel::SqliteConnection {}

#[cfg(feature = "mysql")]
impl FollowConnection for diesel::MysqlConnection {}

#[cfg(feature = "postgres")]
impl FollowConnection for diesel::PgConnection {
    fn listen(&mut self) -> Result<()> {
        use diesel::RunQueryDsl;
        diesel::sql_query(format!("LISTEN {CHANNEL}")).execute(self)?;
        Ok(())
    }

    fn wait(&mut self, timeout: Duration) -> Result<()> {
        // libpq reads notifications off the socket without a query; a look every 2 ms costs
        // a system call, not a round trip.
        let until = std::time::Instant::now() + timeout;
        loop {
            let mut woken = false;
            for notification in self.notifications_iter() {
                notification?;
                woken = true;
            }
            let now = std::time::Instant::now();
            if woken || now >= until {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(2).min(until - now));
        }
    }
}

/// Makes every insert into `table` notify [`CHANNEL`] at its commit (a statement trigger,
/// `seqgen_pending`), so that followers on PostgreSQL number the rows at once instead of at
/// their next poll. Run it once per table, e.g. in a migration of the app's; running it again
/// changes nothing.
#[cfg(feature = "postgres")]
pub fn notify_on_commit(conn: &mut diesel::PgConnection, table: &str) -> Result<()> {
    use diesel::connection::SimpleConnection;
    use diesel::pg::Pg;
    use diesel::query_builder::QueryBuilder;

    let mut quoted = <Pg as diesel::backend::Backend>::QueryBuilder::default();
    for (i, part) in table.split('.').enumerate() {
        if i > 0 {
            quoted.push_sql(".");
        }
        quoted.push_identifier(part)?;
    }
    let table = quoted.finish();
    conn.batch_execute(&format!(
        "CREATE OR REPLACE FUNCTION seqgen_pending_notify() RETURNS trigger LANGUAGE plpgsql AS $$ \
         BEGIN PERFORM pg_notify('{CHANNEL}', TG_TABLE_NAME); RETURN NULL; END $$; \
         DROP TRIGGER IF EXISTS seqgen_pending ON {table}; \
         CREATE TRIGGER seqgen_pending AFTER INSERT ON {table} \
         FOR EACH STATEMENT EXECUTE FUNCTION seqgen_pending_notify();"
    ))?;
    Ok(())
}

/// Numbers `rows` with `spec` ([`number_pending`]) now and then again after each wait, until
/// `stop` is set: at most `poll` apart, sooner on PostgreSQL when a commit notifies
/// ([`notify_on_commit`]). Returns how many rows it numbered; an error ends it
/// ([`keep_following`] connects again).
pub fn follow<C>(
    conn: &mut C,
    spec: &Spec,
    rows: PendingRows<'_>,
    poll: Duration,
    stop: &AtomicBool,
) -> Result<u64>
where
    C: FollowConnection,
{
    let mut numbered = 0;
    follow_reporting(conn, spec, rows, poll, stop, &mut |done| {
        numbered += done.rows
    })?;
    Ok(numbered)
}

/// [`follow`], handing each round's outcome to `round`.
fn follow_reporting<C>(
    conn: &mut C,
    spec: &Spec,
    rows: PendingRows<'_>,
    poll: Duration,
    stop: &AtomicBool,
    round: &mut dyn FnMut(Numbered),
) -> Result<()>
where
    C: FollowConnection,
{
    conn.listen()?;
    while !stop.load(Ordering::Relaxed) {
        round(number_pending(conn, spec, rows)?);
        conn.wait(poll)?;
    }
    Ok(())
}

/// What a follower ([`keep_following`]) met, for whoever runs it to report.
#[derive(Debug)]
#[non_exhaustive]
pub enum FollowEvent<'a> {
    /// A round numbered rows, or left some (dated too far ahead, or without a valid scope).
    Numbered(Numbered),
    /// A round failed with what a new attempt can fix: the follower connects again after
    /// `retry_in`.
    Failed {
        /// What failed.
        error: &'a Error,
        /// How long the follower waits before it connects again.
        retry_in: Duration,
    },
}

/// Numbers `rows` with `spec` as they commit, on a connection from `connect`, until `stop` is
/// set ([`follow`]); after a failure a new attempt can fix (a lost connection, a server that
/// restarts, a failover, a lock wait that timed out, a deadlock, rows another writer numbered
/// meanwhile) it connects again after a growing pause (100 ms, doubling to 10 s, with jitter;
/// back to 100 ms after a round that succeeds). `report` hears of every round that numbered
/// or left rows, and of every failure. Returns how many rows it numbered once stopped, or the
/// first error no new attempt can fix: a table or column that does not exist, `db_key`
/// missing, a spec the key refuses (another shape, another mode), bad settings.
///
/// ```no_run
/// use std::sync::atomic::AtomicBool;
/// use std::time::Duration;
/// use diesel::prelude::*;
/// use diesel_seqgen::pending::{self, FollowEvent, PendingRows};
///
/// let invoices = diesel_seqgen::Spec::builder("invoices").prefix("INV").date("").gapless().build()?;
/// let rows = PendingRows::new("invoices", "number", "id");
/// let stop = AtomicBool::new(false); // set it from a signal handler to stop
/// let url = "shop.db"; // or PostgreSQL's, or MySQL's, with their connection types
/// let connect = || {
///     let mut conn = SqliteConnection::establish(url)?;
///     diesel_seqgen::sqlite::configure(&mut conn)?;
///     Ok(conn)
/// };
/// let numbered = pending::keep_following(connect, &invoices, rows, Duration::from_millis(50), &stop, |event| {
///     if let FollowEvent::Failed { error, retry_in } = event {
///         eprintln!("{error}; connecting again in {retry_in:?}");
///     }
/// })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn keep_following<C, F>(
    mut connect: F,
    spec: &Spec,
    rows: PendingRows<'_>,
    poll: Duration,
    stop: &AtomicBool,
    mut report: impl FnMut(FollowEvent<'_>),
) -> Result<u64>
where
    C: FollowConnection,
    F: FnMut() -> Result<C>,
{
    let backoff = || {
        backon::ExponentialBuilder::new()
            .with_min_delay(Duration::from_millis(100))
            .with_max_delay(Duration::from_secs(10))
            .with_jitter()
            .without_max_times()
            .build()
    };
    let mut pauses = backoff();
    let mut numbered = 0;
    while !stop.load(Ordering::Relaxed) {
        let mut round = |done: Numbered| {
            numbered += done.rows;
            pauses = backoff();
            if done.rows > 0 || done.left > 0 {
                report(FollowEvent::Numbered(done));
            }
        };
        let followed = connect()
            .and_then(|mut conn| follow_reporting(&mut conn, spec, rows, poll, stop, &mut round));
        match followed {
            Ok(()) => {}
            Err(error) if !worth_another_attempt(&error) => return Err(error),
            Err(error) => {
                let retry_in = pauses.next().unwrap_or(Duration::from_secs(10));
                report(FollowEvent::Failed {
                    error: &error,
                    retry_in,
                });
                pause_unless_stopped(retry_in, stop);
            }
        }
    }
    Ok(numbered)
}

/// Whether a follower's round that failed with `error` may succeed on a new connection a
/// moment later. Not: what the settings, the table or `db_key` say, which stay as they are
/// until someone changes them.
fn worth_another_attempt(error: &Error) -> bool {
    match error {
        Error::MissingTable(_)
        | Error::Migration(_)
        | Error::InvalidSpec(_)
        | Error::ShapeChanged { .. }
        | Error::ScopeMismatch { .. }
        | Error::InvalidScope { .. }
        | Error::NotNumeric { .. }
        | Error::Refused { .. }
        | Error::UnknownKey { .. }
        | Error::NotDurable { .. }
        | Error::CounterWentBack { .. }
        | Error::CounterOutOfRange { .. }
        | Error::Overflow { .. }
        | Error::SeriesExhausted { .. } => false,
        Error::Database(e) => !is_missing_object(e),
        _ => true,
    }
}

/// Sleeps `pause`, in steps short enough to see `stop` soon.
fn pause_unless_stopped(pause: Duration, stop: &AtomicBool) {
    let until = std::time::Instant::now() + pause;
    while !stop.load(Ordering::Relaxed) {
        let left = until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

/// A follower on a thread of its own: see [`spawn_follower`].
#[derive(Debug)]
pub struct Follower {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Result<u64>>,
}

impl Follower {
    /// Stops it after its current round: how many rows it numbered, or the error no new
    /// attempt could fix that ended it early.
    pub fn stop(self) -> Result<u64> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or(Ok(0))
    }

    /// Whether it ended by itself, on an error no new attempt can fix ([`stop`](Self::stop)
    /// returns it).
    pub fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }
}

/// Runs [`keep_following`] on a thread of its own, on connections from `connect`: after a
/// failure a new attempt can fix (a lost connection, a failover) it logs a warning (with the
/// `tracing` feature) and connects again after a growing pause. The background task of a
/// service that numbers its own rows.
pub fn spawn_follower<C, F>(
    connect: F,
    spec: Spec,
    rows: PendingRows<'static>,
    poll: Duration,
) -> Follower
where
    C: FollowConnection,
    F: FnMut() -> Result<C> + Send + 'static,
{
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    let thread = std::thread::spawn(move || {
        let followed = keep_following(connect, &spec, rows, poll, &stopped, |event| {
            if let FollowEvent::Failed { error, retry_in } = event {
                crate::trace::event!(warn, key = spec.key(), %error, ?retry_in, "a follower's round failed; it connects again");
                let _ = (error, retry_in);
            }
        });
        if let Err(error) = &followed {
            crate::trace::event!(error, key = spec.key(), %error, "a follower stopped: no new attempt can fix this");
            let _ = error;
        }
        followed
    });
    Follower { stop, thread }
}
