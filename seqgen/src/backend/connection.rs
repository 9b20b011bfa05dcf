//! The connections seqgen works on, as one bound for code generic over the connection.

use diesel::connection::LoadConnection;
use diesel::migration::MigrationConnection;

use super::Backend;

/// A Diesel connection seqgen works on: any `LoadConnection` whose backend is one of
/// seqgen's ([`Backend`]). Write it in the `where` clause of code generic over the
/// connection; it is implemented for every such connection.
///
/// ```
/// fn first_order<C: diesel_seqgen::IdConnection>(conn: &mut C) -> diesel_seqgen::Result<String> {
///     let orders = diesel_seqgen::Spec::builder("orders").prefix("ORD").date("%y%m").pad(4).build()?;
///     diesel_seqgen::global::next_id(conn, &orders)
/// }
/// # use diesel::Connection;
/// # let mut conn = diesel::SqliteConnection::establish(":memory:")?;
/// # diesel_seqgen::run_migrations(&mut conn)?;
/// assert!(first_order(&mut conn)?.ends_with("0001"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a connection diesel-seqgen can take IDs on",
    label = "not a Diesel connection to a backend diesel-seqgen was built with",
    note = "pass `&mut conn` of a Diesel connection (`SqliteConnection`, `PgConnection`, `MysqlConnection`, or an r2d2 `PooledConnection` of one); diesel-async's connections go through `diesel_seqgen::nonblocking`",
    note = "a Diesel connection needs its backend's feature of diesel-seqgen: `sqlite` (or `bundled-sqlite`), `postgres` or `mysql`"
)]
pub trait IdConnection: LoadConnection<Backend: Backend> + 'static {}

impl<C: LoadConnection<Backend: Backend> + 'static> IdConnection for C {}

/// An [`IdConnection`] Diesel can also migrate: what [`run_migrations`](crate::run_migrations)
/// takes. Diesel's own connections, r2d2's pooled ones and diesel-async's
/// `AsyncConnectionWrapper` are (they implement Diesel's `MigrationConnection`); a wrapper
/// that only forwards queries may not be, and still works for everything else. Code generic
/// over the connection that also sets the database up names this one bound:
///
/// ```
/// use diesel::prelude::*;
/// use diesel_seqgen::DistributedId;
///
/// diesel::table! { users (id) { id -> Text, name -> Text } }
///
/// #[derive(Insertable, DistributedId)]
/// #[diesel(table_name = users)]
/// struct NewUser {
///     #[distributed_id(prefix = "U", date = "", pad = 6)]
///     id: String,
///     name: String,
/// }
///
/// /// Creates `db_key`, then saves `rows`, on any of seqgen's databases.
/// fn set_up_and_save<C>(conn: &mut C, rows: &mut Vec<NewUser>) -> diesel_seqgen::Result<usize>
/// where
///     C: diesel_seqgen::MigrateConnection,
///     Vec<NewUser>: diesel_seqgen::insert::Insert<users::table, C>,
/// {
///     diesel_seqgen::run_migrations(conn)?;
///     diesel_seqgen::insert_into(users::table).values(rows).execute(conn)
/// }
///
/// let mut conn = SqliteConnection::establish(":memory:")?;
/// diesel::sql_query("CREATE TABLE users (id TEXT PRIMARY KEY, name TEXT NOT NULL)").execute(&mut conn)?;
/// let mut rows = vec![NewUser { id: String::new(), name: "Ada".into() }];
/// assert_eq!(set_up_and_save(&mut conn, &mut rows)?, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a connection Diesel can run diesel-seqgen's migrations on",
    label = "not a Diesel `MigrationConnection` to a backend diesel-seqgen was built with",
    note = "Diesel's own connections, r2d2's pooled ones and diesel-async's `AsyncConnectionWrapper` are; run the migrations on one of those, at start-up"
)]
pub trait MigrateConnection: IdConnection + MigrationConnection {}

impl<C: IdConnection + MigrationConnection> MigrateConnection for C {}
