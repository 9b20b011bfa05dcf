//! Which database a connection talks to, so that cached numbers of one database are never
//! served to another.
//!
//! Taking one database for two is always safe (two caches of disjoint blocks); taking two for
//! one hands out numbers twice. So an identity is made of everything that tells databases
//! apart, and two are the same only when all of it matches:
//!
//! - the **fingerprint**, read live from the server at every look-up: PostgreSQL's cluster
//!   system identifier and the database's oid; MySQL/MariaDB's host, port, data directory,
//!   server id and schema; SQLite's main file with its device and inode. A copy (a copied
//!   file, `CREATE DATABASE … TEMPLATE`, a dump restored elsewhere) differs here even though
//!   it carries the original's rows;
//! - the **token**, a random number stored in the reserved `db_key` row `('', '')` at the
//!   first reservation: it tells apart databases that look alike from outside (a database
//!   dropped and created again under the same name, a new SQLite file where an old one was).
//!
//! A failover keeps both: a PostgreSQL standby promoted in its primary's place is the same
//! database, with every committed reservation (a synchronous standby) or nearly every one (an
//! asynchronous one). What tells them apart is the **timeline**, one more at each promotion,
//! read with every reservation (`timeline.rs`).

use crate::backend::Found;
use crate::driver::Driver;
use crate::error::Result;

/// One database, as told apart by [`identify`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
// `pub` in a private module: unnameable outside, as the pools' sealed trait needs.
pub struct Identity {
    fingerprint: Box<str>,
    token: i64,
}

impl Identity {
    /// The identity of a database whose fingerprint and token were read.
    pub(crate) fn new(fingerprint: &str, token: i64) -> Self {
        Identity {
            fingerprint: fingerprint.into(),
            token,
        }
    }

    /// Whether `found` (a look-up that may have no token yet) could be this database. Without
    /// a token only the fingerprint can tell.
    pub(crate) fn matches(&self, found: &Found) -> bool {
        *self.fingerprint == *found.fingerprint && found.token.is_none_or(|t| t == self.token)
    }
}

/// Reads the database's identity and the key's row in one query. With `create`, a database
/// without a token gets one first (never inside a transaction: a rollback would take it
/// back); without, its identity is `None`.
pub(crate) async fn identify<D: Driver>(
    db: &mut D,
    key: &str,
    create: bool,
) -> Result<(Found, Option<Identity>)> {
    let mut found = db.identify(key).await?;
    if found.token.is_none() && create {
        crate::reserve::retry::retrying!(
            D,
            db.create_token(crate::reserve::retry::random_token()).await
        )?;
        found = db.identify(key).await?;
    }
    let identity = found
        .token
        .map(|token| Identity::new(&found.fingerprint, token));
    Ok((found, identity))
}
