//! The databases seqgen runs on. Each backend module holds its reservation statement and
//! nothing else; everything above them is one generic code path.

use diesel::connection::LoadConnection;
use diesel::QueryResult;
use diesel_migrations::EmbeddedMigrations;

#[cfg(feature = "mysql")]
mod mysql;
#[cfg(feature = "postgres")]
mod pg;
#[cfg(feature = "sqlite")]
pub mod sqlite;

/// The key of the reserved `db_key` row whose value names the database.
pub(crate) const TOKEN_KEY: (&str, &str) = ("", "");

/// A Diesel backend seqgen can reserve numbers on: SQLite, PostgreSQL or MySQL/MariaDB,
/// each behind the cargo feature of the same name as Diesel's.
///
/// Sealed; its items are seqgen's internals.
pub trait Backend: diesel::backend::Backend + sealed::Sealed {
    /// Whether a block may be reserved on a second connection while the caller's connection
    /// is inside a transaction. SQLite has one writer per database: a second connection
    /// would wait for the caller's own write lock, so there the number is taken inside the
    /// caller's transaction instead.
    #[doc(hidden)]
    const RESERVE_BESIDE_TRANSACTION: bool;

    /// The embedded `db_key` migrations of this backend.
    #[doc(hidden)]
    const MIGRATIONS: EmbeddedMigrations;

    /// Adds `count` to the counter of (`key`, `period`), creating the row if it is missing,
    /// in one atomic step, and returns the new value: the numbers
    /// `new - count + 1 ..= new` are the caller's.
    #[doc(hidden)]
    fn reserve<C>(conn: &mut C, key: &str, period: &str, count: i64) -> QueryResult<i64>
    where
        C: LoadConnection<Backend = Self>;

    /// Reads this database's token, the value of the reserved row; `None` if it has none.
    #[doc(hidden)]
    fn read_token<C>(conn: &mut C) -> QueryResult<Option<i64>>
    where
        C: LoadConnection<Backend = Self>;

    /// Stores `token` as this database's token unless it has one already.
    #[doc(hidden)]
    fn create_token<C>(conn: &mut C, token: i64) -> QueryResult<()>
    where
        C: LoadConnection<Backend = Self>;
}

mod sealed {
    pub trait Sealed {}
}

/// Whether `err` says the `db_key` table is missing. The three backends word it
/// differently: "no such table: db_key", `relation "db_key" does not exist`,
/// "Table 'test.db_key' doesn't exist".
pub(crate) fn is_missing_table(err: &diesel::result::Error) -> bool {
    match err {
        diesel::result::Error::DatabaseError(_, info) => {
            let msg = info.message();
            msg.contains("db_key")
                && (msg.contains("no such table")
                    || msg.contains("does not exist")
                    || msg.contains("doesn't exist"))
        }
        _ => false,
    }
}
