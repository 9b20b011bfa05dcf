//! PostgreSQL: one `INSERT … SELECT … ON CONFLICT DO UPDATE … RETURNING` per reservation. The
//! conflicting row is locked and re-read at its latest committed value, so under READ
//! COMMITTED concurrent reservations queue on the row and never overlap.

use diesel::connection::LoadConnection;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::Text;

use diesel_migrations::{embed_migrations, EmbeddedMigrations};

use super::statement::{LockNowait, Statement};
use crate::schema::db_key;

impl super::sealed::Sealed for Pg {}

impl super::Backend for Pg {
    const INSERT_IGNORING: (&'static str, &'static str) =
        ("INSERT INTO", " ON CONFLICT DO NOTHING");
    const GREATEST: &'static str = "GREATEST";
    const CREATE_ROWS_BESIDE_TRANSACTION: bool = false;
    const READS_FIRST_IN_TRANSACTION: bool = true;
    const RESERVE_BESIDE_TRANSACTION: bool = true;
    #[cfg(feature = "r2d2")]
    type Connection = diesel::PgConnection;
    const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");
    // The cluster (its system identifier, new for every initdb) and the database in it (its
    // oid, new for a `CREATE DATABASE … TEMPLATE` copy or a restore into a new database).
    const FINGERPRINT: &'static str =
        "'pg:' || (SELECT system_identifier::text FROM pg_control_system()) \
         || '/' || (SELECT oid::text FROM pg_database WHERE datname = current_database())";
    // Every reservation sets `synchronous_commit = on` for its own transaction (see
    // `DURABLE_COMMIT`); with `fsync = off` no commit survives a crash of the machine or an
    // immediate shutdown, whatever the session says.
    const DURABILITY: &'static str = "current_setting('fsync')";
    const DURABILITY_SETTING: &'static str = "fsync";
    const DURABLE: &'static str = "on";
    // `set_config(…, true)` lasts until the end of the transaction, and the commit reads it:
    // the reservation (and a caller's transaction holding a gapless number) waits for its WAL
    // to reach disk even when the server or session says `synchronous_commit = off`.
    const DURABLE_COMMIT: &'static str =
        "(SELECT set_config('synchronous_commit', 'on', true)) AS durable";

    super::upsert_reserve!();

    super::shared_queries!();

    fn lock_nowait<C>(conn: &mut C, key: &str, period: &str) -> QueryResult<()>
    where
        C: LoadConnection<Backend = Self>,
    {
        let lock = |conn: &mut C| {
            Statement::<LockNowait>::new(key, period, 0)
                .get_result::<i64>(conn)
                .optional()
        };
        if lock(conn)?.is_some() {
            return Ok(());
        }
        // The row is missing, or another transaction is creating it (invisible to us until it
        // commits, and our insert would wait for it): create it without waiting long.
        let previous: String =
            diesel::select(diesel::dsl::sql::<Text>("current_setting('lock_timeout')"))
                .get_result(conn)?;
        conn.batch_execute("SET LOCAL lock_timeout = '1ms'")?;
        Self::create_row(conn, key, period)?;
        diesel::sql_query("SELECT set_config('lock_timeout', $1, true)")
            .bind::<Text, _>(&previous)
            .execute(conn)?;
        lock(conn).map(drop)
    }
}
