//! Numbering pending rows as they commit: a loop on one connection ([`follow`]), on a thread
//! of its own ([`spawn_follower`]), woken on PostgreSQL by `NOTIFY` ([`notify_on_commit`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use diesel_seqgen_core::Spec;

use super::{number_pending, PendingRows};
use crate::backend::IdConnection;
use crate::error::Result;

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
/// ([`notify_on_commit`]). Returns how many rows it numbered; an error ends it (a
/// [`spawn_follower`] reconnects).
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
    conn.listen()?;
    let mut numbered = 0;
    while !stop.load(Ordering::Relaxed) {
        numbered += number_pending(conn, spec, rows)?.rows;
        conn.wait(poll)?;
    }
    Ok(numbered)
}

/// A follower on a thread of its own: see [`spawn_follower`].
#[derive(Debug)]
pub struct Follower {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<u64>,
}

impl Follower {
    /// Stops it after its current round, and returns how many rows it numbered.
    pub fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or(0)
    }
}

/// Runs [`follow`] on a thread of its own, on connections from `connect`: after an error (a
/// lost connection, a failover) it logs a warning (with the `tracing` feature), waits `poll`,
/// connects again and goes on. The background task of a service that numbers its own rows.
pub fn spawn_follower<C, F>(
    mut connect: F,
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
        let mut numbered = 0;
        while !stopped.load(Ordering::Relaxed) {
            let round =
                connect().and_then(|mut conn| follow(&mut conn, &spec, rows, poll, &stopped));
            match round {
                Ok(rows) => numbered += rows,
                Err(error) => {
                    crate::trace::event!(warn, key = spec.key(), %error, "a follower's round failed; it connects again");
                    let _ = &error;
                    std::thread::sleep(poll);
                }
            }
        }
        numbered
    });
    Follower { stop, thread }
}
