//! The risks seqgen refuses by default, and who may accept them: a server that does not commit
//! durably (a crash can lose reservations whose numbers instances still hold) and gapless
//! numbers on a primary that replicates asynchronously (a failover can lose the last ones
//! taken). Each is refused unless a generator's builder, or the process for its default
//! generator, accepts it.

use std::sync::atomic::{AtomicBool, Ordering};

use std::time::{Duration, Instant};

use crate::backend::{Backend, Found, Replication, SETTLING_SECONDS};
use crate::driver::Driver;
use crate::error::{Error, Result};

/// How often a settling primary's replication is asked again (see
/// [`Acceptance::check_replication`]).
const REPLICATION_POLL: Duration = Duration::from_millis(200);

/// Whether the process-wide default generator accepts a server that does not commit durably.
static ACCEPT_NON_DURABLE: AtomicBool = AtomicBool::new(false);

/// Lets the process-wide default generator (behind [`next_id`](crate::global::next_id), the derive and
/// [`insert_into`](crate::insert_into)) reserve blocks on a server that does not commit
/// durably (MySQL/MariaDB with `innodb_flush_log_at_trx_commit` other than 1, PostgreSQL with
/// `fsync = off`), which it refuses otherwise ([`Error::NotDurable`]). Only for development
/// databases: a server crash can then lose reservations whose numbers instances still hold,
/// and hand them out again.
pub fn accept_non_durable_server() {
    ACCEPT_NON_DURABLE.store(true, Ordering::Relaxed);
}

/// Whether the process-wide default generator takes gapless numbers on a primary that
/// replicates asynchronously.
static ACCEPT_ASYNC_REPLICATION: AtomicBool = AtomicBool::new(false);

/// Lets the process-wide default generator take gapless numbers on a PostgreSQL primary whose
/// commits do not wait for a standby, which it refuses otherwise
/// ([`Error::AsyncReplication`]): a failover to a standby can then lose the last numbers
/// taken, and the promoted server hands them out again.
pub fn accept_async_replication() {
    ACCEPT_ASYNC_REPLICATION.store(true, Ordering::Relaxed);
}

/// Who decides whether a risk seqgen refuses by default (a server that does not commit
/// durably, gapless numbers on an asynchronous primary) is accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acceptance {
    Refuse,
    Accept,
    /// The process-wide setting ([`accept_non_durable_server`],
    /// [`accept_async_replication`]).
    AsProcess,
}

impl Acceptance {
    fn accepts(self, process: &AtomicBool) -> bool {
        match self {
            Acceptance::Refuse => false,
            Acceptance::Accept => true,
            Acceptance::AsProcess => process.load(Ordering::Relaxed),
        }
    }

    /// Refuses gapless numbers of `key` on a primary whose commits do not wait for its
    /// connected standbys, unless accepted. While the standbys have just connected (right
    /// after a failover, before a manager such as Patroni names a synchronous standby, which
    /// it does within its loop: 10 s by default), it asks again every
    /// [`REPLICATION_POLL`] for up to [`SETTLING_SECONDS`] first: accepted as soon as commits
    /// wait, refused if they still do not. A primary whose standbys have been connected
    /// longer is refused at once.
    pub(crate) async fn check_replication<D: Driver>(self, db: &mut D, key: &str) -> Result<()> {
        if self.accepts(&ACCEPT_ASYNC_REPLICATION) {
            return Ok(());
        }
        let started = Instant::now();
        loop {
            match db.replication().await? {
                Replication::Waited => return Ok(()),
                Replication::Asynchronous { settling: true }
                    if started.elapsed() < Duration::from_secs(SETTLING_SECONDS) =>
                {
                    D::pause(REPLICATION_POLL).await;
                }
                Replication::Asynchronous { .. } => break,
            }
        }
        crate::trace::event!(
            error,
            key,
            "a gapless key on a PostgreSQL primary whose commits do not wait for a standby was refused"
        );
        Err(Error::AsyncReplication {
            key: key.to_owned(),
        })
    }

    /// Refuses a server that does not commit durably, unless accepted.
    pub(crate) fn check<B: Backend>(self, found: &Found) -> Result<()> {
        let accepted = self.accepts(&ACCEPT_NON_DURABLE);
        if found.durability == B::DURABLE || accepted {
            Ok(())
        } else {
            Err(Error::NotDurable {
                setting: B::DURABILITY_SETTING,
                value: found.durability.clone(),
                durable: B::DURABLE,
            })
        }
    }
}
