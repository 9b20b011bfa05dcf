//! PostgreSQL: one `INSERT … SELECT … ON CONFLICT DO UPDATE … RETURNING` per reservation. The
//! conflicting row is locked and re-read at its latest committed value, so under READ
//! COMMITTED concurrent reservations queue on the row and never overlap.

use diesel::connection::LoadConnection;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::Text;

use diesel_migrations::{embed_migrations, EmbeddedMigrations};

use super::statement::{LockNowait, Statement, UpsertReturning};
use crate::schema::db_key;

impl super::sealed::Sealed for Pg {}

impl super::Backend for Pg {
    const INSERT_IGNORING: (&'static str, &'static str) =
        ("INSERT INTO", " ON CONFLICT DO NOTHING");
    const GREATEST: &'static str = "GREATEST";
    const CREATE_ROWS_BESIDE_TRANSACTION: bool = false;
    const RESERVE_BESIDE_TRANSACTION: bool = true;
    const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../migrations/postgres");

    fn reserve<C>(conn: &mut C, key: &str, period: &str, count: i64) -> QueryResult<i64>
    where
        C: LoadConnection<Backend = Self>,
    {
        Statement::<UpsertReturning>::new(key, period, count).get_result(conn)
    }

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
