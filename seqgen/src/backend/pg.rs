//! PostgreSQL: one `INSERT … SELECT … ON CONFLICT DO UPDATE … RETURNING` per reservation. The
//! conflicting row is locked and re-read at its latest committed value, so under READ
//! COMMITTED concurrent reservations queue on the row and never overlap.

use diesel::connection::LoadConnection;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::Text;

use diesel_migrations::{embed_migrations, EmbeddedMigrations};

use super::statement::{Statement, UpsertReturning};
use crate::schema::db_key;

impl super::sealed::Sealed for Pg {}

impl super::Backend for Pg {
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

    fn create_row<C>(conn: &mut C, key: &str, period: &str) -> QueryResult<()>
    where
        C: LoadConnection<Backend = Self>,
    {
        diesel::sql_query(
            "INSERT INTO db_key (key_name, period, current_value) \
             SELECT $1, $2, COALESCE(MAX(start_value), 1) - 1 \
             FROM db_key WHERE key_name = $1 AND period = '' \
             ON CONFLICT DO NOTHING",
        )
        .bind::<Text, _>(key)
        .bind::<Text, _>(period)
        .execute(conn)
        .map(drop)
    }

    super::shared_queries!();

    fn insert_if_missing<C>(conn: &mut C, key: &str, period: &str, value: i64) -> QueryResult<()>
    where
        C: LoadConnection<Backend = Self>,
    {
        diesel::insert_into(db_key::table)
            .values((
                db_key::key_name.eq(key),
                db_key::period.eq(period),
                db_key::current_value.eq(value),
            ))
            .on_conflict_do_nothing()
            .execute(conn)
            .map(drop)
    }

    fn lock_nowait<C>(conn: &mut C, key: &str, period: &str) -> QueryResult<()>
    where
        C: LoadConnection<Backend = Self>,
    {
        let lock = |conn: &mut C| {
            db_key::table
                .find((key, period))
                .select(db_key::current_value)
                .for_update()
                .no_wait()
                .first::<i64>(conn)
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
