//! One thread of a run: its quota, what it takes and inserts, and how it survives a lost
//! connection.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::history::{History, Outcome};
use backon::ExponentialBuilder;
use diesel::result::Error as DieselError;
use diesel_seqgen::{Generator, Spec};

use super::{Args, BoxError, LoadgenConnection, Report};

/// What a run may still take: `--ids` in all, or until `--seconds` have passed.
pub(super) struct Quota {
    pub(super) deadline: Option<Instant>,
    pub(super) claimed: AtomicU64,
    pub(super) ids: u64,
}

impl Quota {
    pub(super) fn new(args: &Args, started: Instant) -> Self {
        Quota {
            deadline: args.seconds.map(|s| started + Duration::from_secs_f64(s)),
            claimed: AtomicU64::new(0),
            ids: args.ids,
        }
    }

    /// Whether one more ID may be taken (and, counting IDs, claims it).
    pub(super) fn more(&self) -> bool {
        match self.deadline {
            Some(deadline) => Instant::now() < deadline,
            None => self.claimed.fetch_add(1, Ordering::Relaxed) < self.ids,
        }
    }
}

/// The `--out` file, opened for appending, if asked for.
pub(super) fn open_out(args: &Args) -> std::io::Result<Option<File>> {
    args.out
        .as_ref()
        .map(|path| OpenOptions::new().create(true).append(true).open(path))
        .transpose()
}

/// Whether `e` says the last series is full: the run is over.
pub(super) fn series_exhausted(e: &BoxError) -> bool {
    matches!(
        e.downcast_ref::<diesel_seqgen::Error>(),
        Some(diesel_seqgen::Error::SeriesExhausted { .. })
    )
}

/// A scope picked at random among `--scopes` (`""` without scopes).
pub(super) fn random_scope(args: &Args) -> String {
    match args.scopes {
        0 => String::new(),
        n => format!("s{}", rand::random_range(0..n)),
    }
}

/// The row key of an ID of `scope`: IDs repeat across scopes, so the key names the scope too.
pub(super) fn row_key(spec: &Spec, scope: &str) -> String {
    match scope {
        "" => spec.key().to_owned(),
        scope => format!("{}/{scope}", spec.key()),
    }
}

/// An `--out` line.
pub(super) fn out_line(args: &Args, scope: &str, id: &str) -> String {
    match args.scopes {
        0 => id.to_owned(),
        _ => format!("{scope} {id}"),
    }
}

/// Up to about a minute of attempts, 20 ms apart at first, then up to 1 s (with jitter, so that
/// the threads of many processes do not come back in lockstep).
pub(super) fn reconnect_backoff() -> ExponentialBuilder {
    ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(20))
        .with_max_delay(Duration::from_secs(1))
        .with_max_times(60)
        .with_jitter()
}

/// What an error says of the server, for whether an app tries again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Said {
    /// The connection is gone or could not be made (a restart, a killed session, a network
    /// cut): a new connection, later, may work.
    ConnectionLost,
    /// The server takes no writes: a replica, or a standby whose promotion is still ending.
    ReadOnly,
    /// The request itself was wrong, or anything else.
    Other,
}

/// Whether `e` says the database connection is gone or could not be made, rather than that
/// the request itself was wrong. A process starting on a read-only server is pointed at a
/// replica: that is not tried again.
pub(super) fn connection_lost(e: &BoxError) -> bool {
    said(e) == Said::ConnectionLost
}

/// [`connection_lost`], or a server that takes no writes, for a process that has been writing:
/// HAProxy routes to a node as soon as Patroni names it the leader, while its promotion may
/// still be ending (once, a leader crash ended a process with "cannot execute INSERT in a
/// read-only transaction"); a moment later it takes writes.
pub(super) fn lost_or_promoting(e: &BoxError) -> bool {
    said(e) != Said::Other
}

fn said(e: &BoxError) -> Said {
    if e.downcast_ref::<diesel::r2d2::PoolError>().is_some() {
        return Said::ConnectionLost; // no connection within the pool's timeout
    }
    match e.downcast_ref::<diesel_seqgen::Error>() {
        // A Galera node cut off or rejoining: a new connection, later, may find it back.
        Some(diesel_seqgen::Error::Pool(_) | diesel_seqgen::Error::NodeOutOfCluster(_)) => {
            Said::ConnectionLost
        }
        Some(diesel_seqgen::Error::Database(e)) => diesel_said(e),
        // Migrations at start-up, while a node restarts.
        Some(diesel_seqgen::Error::Migration(source)) => match source.downcast_ref() {
            Some(e) => diesel_said(e),
            None => message_said(&source.to_string()),
        },
        // Any other error that says so: an app retries what reads as a lost connection,
        // whatever type carried it (once, after a leader crash, one such error ended a
        // process instead; its type was not kept).
        Some(e) => message_said(&e.to_string()),
        None => match e.downcast_ref::<DieselError>() {
            Some(e) => diesel_said(e),
            None => message_said(&e.to_string()),
        },
    }
}

/// [`said`] of Diesel's error.
fn diesel_said(e: &DieselError) -> Said {
    use diesel::result::DatabaseErrorKind;
    match e {
        DieselError::BrokenTransactionManager
        | DieselError::DatabaseError(DatabaseErrorKind::ClosedConnection, _) => {
            Said::ConnectionLost
        }
        DieselError::DatabaseError(DatabaseErrorKind::ReadOnlyTransaction, _) => Said::ReadOnly,
        // A commit that failed with the connection, and the rollback after it too.
        DieselError::RollbackErrorOnCommit { commit_error, .. } => diesel_said(commit_error),
        DieselError::DatabaseError(_, info) => message_said(info.message()),
        _ => Said::Other,
    }
}

/// [`said`] of a server's message.
fn message_said(message: &str) -> Said {
    let message = message.to_ascii_lowercase();
    let says = |words: &[&str]| words.iter().any(|word| message.contains(word));
    if says(&["read-only transaction", "read only transaction"]) {
        Said::ReadOnly
    } else if says(&[
        "connection",
        "gone away",
        "shutting down",
        "starting up",
        "recovery mode",
        "terminating",
        "no more connections",
        // A Galera node out of the cluster's primary component, as the app's own statements
        // meet it ("… provider status: Not connected to Primary Component", once ending a
        // process in a rolling restart): another node, or this one later, takes the write.
        "primary component",
        "wsrep has not yet prepared node",
        // A row another session held past InnoDB's wait (50 s): a writer cut off inside its
        // transaction, whose session the server had not dropped yet (the nemesis, once per
        // 30 minutes on MariaDB and on Galera). An app tries again, as the guide says.
        "lock wait timeout exceeded",
    ]) {
        Said::ConnectionLost
    } else {
        Said::Other
    }
}

/// Takes an ID of `scope` (`""` unscoped) and inserts it in one transaction, run again after
/// an abort with `retry`; `None` when it was rolled back. Every ID handed out is pushed to
/// `handed` (and written to `attempt`'s history as it is, before the commit).
pub(super) fn insert_one<C: LoadgenConnection>(
    conn: &mut C,
    generator: &Generator,
    spec: &Spec,
    scope: &str,
    (roll_back, retry): (bool, bool),
    (handed, attempt): (&mut Vec<String>, Option<(&History, &str)>),
) -> Result<Option<String>, BoxError> {
    let mut work = |conn: &mut C| {
        let id = generator.next_id(conn, spec.scope(scope))?;
        handed.push(id.clone());
        if let Some((history, op)) = attempt {
            history.got(op, std::slice::from_ref(&id)).map_err(|e| {
                diesel_seqgen::Error::Database(DieselError::QueryBuilderError(e.into()))
            })?;
        }
        C::insert_row(conn, &row_key(spec, scope), &id)?;
        if roll_back {
            return Err(diesel_seqgen::Error::Database(
                DieselError::RollbackTransaction,
            ));
        }
        Ok(id)
    };
    let result = if retry {
        diesel_seqgen::retry_transaction(conn, work)
    } else {
        conn.transaction(&mut work)
    };
    match result {
        Ok(id) => Ok(Some(id)),
        Err(diesel_seqgen::Error::Database(DieselError::RollbackTransaction)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// `loadgen_rows` and `loadgen_pending`, created once; several processes may race to create
/// them.
pub(crate) fn create_rows_table<C: LoadgenConnection>(conn: &mut C) -> Result<(), BoxError> {
    let create = format!(
        "CREATE TABLE IF NOT EXISTS loadgen_rows (key_name VARCHAR(191) NOT NULL, \
         id VARCHAR(64) NOT NULL, PRIMARY KEY (key_name, id)); \
         CREATE TABLE IF NOT EXISTS loadgen_pending (id {}, key_name VARCHAR(191) NOT NULL, \
         token VARCHAR(64) NOT NULL UNIQUE, number VARCHAR(64) UNIQUE)",
        C::AUTO_ID
    );
    let mut attempt = 0;
    loop {
        // Durably: a crash right after it (a soak run's, 80 ms later, on a server told not to
        // flush commits) lost the table, and every insert after it failed.
        let created = match C::DURABLE {
            Some(durable) => conn.transaction(|conn| {
                conn.batch_execute(durable)?;
                conn.batch_execute(&create)
            }),
            None => conn.batch_execute(&create),
        };
        match created {
            Ok(()) => return Ok(()),
            // PostgreSQL: two concurrent CREATE TABLE IF NOT EXISTS can collide in pg_type.
            Err(_) if attempt < 5 => {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(50 * attempt));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

pub(super) fn append_line(out: &mut File, id: &str) -> std::io::Result<()> {
    let mut line = String::with_capacity(id.len() + 1);
    line.push_str(id);
    line.push('\n');
    out.write_all(line.as_bytes())
}

pub(super) struct Worker {
    pub(super) ids: u64,
    pub(super) committed: u64,
    pub(super) reconnects: u64,
    /// Latency of one ID (with its insert), in microseconds, to 3 significant digits.
    pub(super) latency_us: hdrhistogram::Histogram<u64>,
}

impl Default for Worker {
    fn default() -> Self {
        Worker {
            ids: 0,
            committed: 0,
            reconnects: 0,
            latency_us: hdrhistogram::Histogram::new(3).expect("3 significant digits is valid"),
        }
    }
}

impl Worker {
    /// Counts the IDs of `scope` one call took in `latency` (`--bulk` of them with `--via
    /// insert-into`, else one); those that committed (`ids`: none when rolled back) are
    /// appended to `out`, one write per line, so that a process killed mid-run leaves whole
    /// lines.
    pub(super) fn took(
        &mut self,
        latency: Duration,
        ids: Vec<String>,
        out: &mut Option<File>,
        args: &Args,
        scope: &str,
    ) -> std::io::Result<()> {
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        // Auto-resizing: a value only fails to record past u64 range.
        let _ = self.latency_us.record(micros);
        self.ids += u64::from(args.bulk);
        self.committed += ids.len() as u64;
        if let Some(out) = out {
            for id in ids {
                append_line(out, &out_line(args, scope, &id))?;
            }
        }
        Ok(())
    }

    pub(super) fn merge(&mut self, other: Worker) {
        self.ids += other.ids;
        self.committed += other.committed;
        self.reconnects += other.reconnects;
        let _ = self.latency_us.add(&other.latency_us);
    }

    /// The report of a run whose workers' sum this is.
    pub(super) fn report(
        &self,
        backend: &'static str,
        args: &Args,
        seconds: f64,
        reservations: u64,
        released: u64,
    ) -> Report {
        let pct = |quantile: f64| self.latency_us.value_at_quantile(quantile);
        Report {
            backend,
            args: args.clone(),
            ids: self.ids,
            committed: self.committed,
            seconds,
            reservations,
            released,
            reconnects: self.reconnects,
            p50_us: pct(0.50),
            p99_us: pct(0.99),
            p999_us: pct(0.999),
        }
    }
}

/// Writes how attempt `op` ended to its history: committed with the IDs it returned, rolled
/// back on purpose, or unknown after an error, with every ID it was `handed`.
pub(super) fn record_end(
    history: &History,
    op: &str,
    result: &Result<Vec<String>, BoxError>,
    handed: &[String],
    roll_back: bool,
) -> std::io::Result<()> {
    match result {
        Ok(ids) if !ids.is_empty() => history.ended(op, Outcome::Committed, ids),
        Ok(_) if roll_back => history.ended(op, Outcome::RolledBack, handed),
        Ok(_) => Ok(()), // nothing taken: the last series was full
        Err(_) => history.ended(op, Outcome::Unknown, handed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use diesel::result::DatabaseErrorKind;

    /// A process that was writing tries a read-only server again (a promotion ending); one
    /// starting does not (a replica), and a wrong request is never tried again.
    #[test]
    fn a_promotion_ending_is_tried_again() {
        let database = |kind, message: &str| -> BoxError {
            Box::new(DieselError::DatabaseError(
                kind,
                Box::new(message.to_owned()),
            ))
        };
        // PostgreSQL's and MariaDB's words, as Diesel classifies them and wrapped by seqgen.
        let pg = "cannot execute INSERT in a read-only transaction";
        let mariadb = "Cannot execute statement in a READ ONLY transaction";
        let wrapped: BoxError = Box::new(diesel_seqgen::Error::Migration(pg.into()));
        for read_only in [
            database(DatabaseErrorKind::ReadOnlyTransaction, pg),
            database(DatabaseErrorKind::ReadOnlyTransaction, mariadb),
            wrapped,
        ] {
            assert!(lost_or_promoting(&read_only), "{read_only}");
            assert!(!connection_lost(&read_only), "{read_only}");
        }
        let closed = database(
            DatabaseErrorKind::ClosedConnection,
            "server closed the connection",
        );
        assert!(connection_lost(&closed) && lost_or_promoting(&closed));
        let wrong = database(DatabaseErrorKind::UniqueViolation, "duplicate key value");
        assert!(!connection_lost(&wrong) && !lost_or_promoting(&wrong));
    }

    /// A Galera node out of the primary component, in the words a write meets while the node
    /// restarts, is a connection to give up for another (a soak run's process ended on it).
    #[test]
    fn a_galera_node_out_is_tried_again() {
        for message in [
            "Error while appending streaming replication fragment(provider status: Not connected to Primary Component)",
            "WSREP has not yet prepared node for application use",
        ] {
            let out: BoxError = Box::new(DieselError::DatabaseError(
                DatabaseErrorKind::Unknown,
                Box::new(message.to_owned()),
            ));
            assert!(connection_lost(&out), "{message}");
        }
    }
}
