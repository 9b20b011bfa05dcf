//! seqgen's migrations on MySQL and MariaDB: on a Galera cluster, one process at a time.
//!
//! MariaDB's Galera hangs a node when a session creates a trigger while another node's DDL on
//! the same table is being applied there: `CREATE TRIGGER` takes its metadata locks before it
//! waits for its turn in the cluster's total order, and the applier of the earlier DDL waits
//! for those locks ("Waiting for trigger metadata lock" against "Waiting to execute in
//! isolation", for ever). Percona fixed the same cycle in its cluster (PXC-4397); MariaDB
//! 10.11 has it. Several app instances starting at once on a new cluster run seqgen's
//! migrations (`600`'s trigger) at once, so there a process first takes a lease: the one row
//! of `db_key_migration_lease`, which only one process of the cluster can insert (two nodes'
//! inserts of one key conflict at certification, and one fails), and which it deletes when it
//! is done. The others wait for it, then find nothing pending. A lease whose holder died
//! expires after [`LEASE_SECONDS`].
//!
//! Elsewhere (a single server, MySQL), and when nothing is pending, no lease is taken.

use std::time::{Duration, Instant};

use diesel::connection::LoadConnection;
use diesel::migration::MigrationConnection;
use diesel::mysql::Mysql;
use diesel::prelude::*;
use diesel::sql_types::{Integer, Text};
use diesel_migrations::MigrationHarness;

/// seqgen's migrations for MySQL and MariaDB.
const MIGRATIONS: diesel_migrations::EmbeddedMigrations =
    <Mysql as super::super::Backend>::MIGRATIONS;

/// How long a lease holds: seqgen's migrations take well under a second; a holder killed
/// midway leaves the others waiting this long.
const LEASE_SECONDS: u32 = 60;

/// How long a process waits for the others' lease before it gives up.
const WAIT: Duration = Duration::from_secs(3 * LEASE_SECONDS as u64);

/// Runs seqgen's pending migrations, under the cluster's lease on a Galera node.
pub(super) fn run_pending<C>(conn: &mut C) -> diesel::migration::Result<()>
where
    C: LoadConnection<Backend = Mysql> + MigrationConnection + 'static,
{
    if !conn.has_pending_migration(MIGRATIONS)? {
        return Ok(());
    }
    if !on_galera(conn)? {
        return conn.run_pending_migrations(MIGRATIONS).map(drop);
    }
    let started = Instant::now();
    // A name no other process has: std's hasher keys are random per process and per call.
    let holder = format!(
        "{:x}",
        std::hash::BuildHasher::hash_one(&std::collections::hash_map::RandomState::new(), 0)
    );
    loop {
        if take_lease(conn, &holder)? {
            let migrated = conn.run_pending_migrations(MIGRATIONS).map(drop);
            return migrated.and(give_back(conn, &holder).map_err(Into::into));
        }
        if !conn.has_pending_migration(MIGRATIONS)? {
            return Ok(()); // another process migrated
        }
        if started.elapsed() > WAIT {
            return Err(format!(
                "another process holds db_key_migration_lease for over {} s: if it died, \
                 delete the row and start again",
                WAIT.as_secs()
            )
            .into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Deletes `holder`'s lease, again while another node's attempt to take it wins certification
/// against the delete.
fn give_back<C: LoadConnection<Backend = Mysql>>(conn: &mut C, holder: &str) -> QueryResult<()> {
    let mut attempts = 0;
    loop {
        let deleted = diesel::sql_query("DELETE FROM db_key_migration_lease WHERE holder = ?")
            .bind::<Text, _>(holder)
            .execute(conn);
        match deleted {
            Err(e) if super::super::is_conflict(&e) && attempts < 50 => {
                attempts += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            done => return done.map(drop),
        }
    }
}

/// Whether the connection reaches a Galera node (`wsrep_on`, read by MariaDB only).
fn on_galera<C: LoadConnection<Backend = Mysql>>(conn: &mut C) -> QueryResult<bool> {
    diesel::select(diesel::dsl::sql::<Integer>("0 /*M! + @@GLOBAL.wsrep_on */"))
        .get_result::<i32>(conn)
        .map(|on| on != 0)
}

/// Takes the lease for `holder`, dropping an expired one first; `false` while another holds
/// it (its row exists, or another node's statement won certification against this one's).
fn take_lease<C: LoadConnection<Backend = Mysql>>(conn: &mut C, holder: &str) -> QueryResult<bool> {
    let taken = conn
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS db_key_migration_lease (
                id TINYINT NOT NULL PRIMARY KEY,
                holder VARCHAR(32) NOT NULL,
                expires_at TIMESTAMP(6) NOT NULL
            ) ENGINE = InnoDB",
        )
        .and_then(|()| {
            diesel::sql_query(
                "DELETE FROM db_key_migration_lease WHERE expires_at < CURRENT_TIMESTAMP(6)",
            )
            .execute(conn)
        })
        .and_then(|_| {
            diesel::sql_query(format!(
                "INSERT INTO db_key_migration_lease (id, holder, expires_at) \
                 VALUES (1, ?, CURRENT_TIMESTAMP(6) + INTERVAL {LEASE_SECONDS} SECOND)"
            ))
            .bind::<Text, _>(holder)
            .execute(conn)
        });
    match taken {
        Ok(_) => Ok(true),
        Err(diesel::result::Error::DatabaseError(
            diesel::result::DatabaseErrorKind::UniqueViolation,
            _,
        )) => Ok(false),
        Err(e) if super::super::is_conflict(&e) => Ok(false),
        Err(e) => Err(e),
    }
}
