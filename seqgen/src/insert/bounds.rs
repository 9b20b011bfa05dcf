//! What `diesel_seqgen::insert_into(table).values(&mut records)` needs of the records, the table and
//! the connection, as traits a user can name: code generic over the connection writes
//! `R: Insert<T, C>` where Diesel code writes the insert statement's `ExecuteDsl<C>`. Each is
//! implemented for every records type Diesel can insert there; their items are seqgen's own.

use diesel::query_builder::{InsertStatement, QueryFragment};
use diesel::query_dsl::methods::{ExecuteDsl, LoadQuery};
use diesel::{Insertable, QueryResult, RunQueryDsl, Table};

use crate::backend::asserted::{asks_first, Asserted, Mark};
use crate::backend::one_statement::{OneStatement, Plan};
use crate::backend::row_values::{is_not_rewritten, InsertRow};
use crate::backend::{drive, Backend, Blocking, IdConnection};
use crate::model::Records;

/// Records that [`InsertWithIds::execute`](crate::insert::InsertWithIds::execute) can insert
/// into table `T` on connection `C`: those whose Diesel insert
/// (`diesel::insert_into(T).values(&records)`) runs on `C`. Write
/// `Vec<NewUser>: diesel_seqgen::insert::Insert<users::table, C>` in a generic function's `where`
/// clause:
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
/// /// Saves `rows` on any of seqgen's databases.
/// fn save<C>(conn: &mut C, rows: &mut Vec<NewUser>) -> diesel_seqgen::Result<usize>
/// where
///     C: diesel_seqgen::IdConnection,
///     Vec<NewUser>: diesel_seqgen::insert::Insert<users::table, C>,
/// {
///     diesel_seqgen::insert_into(users::table).values(rows).execute(conn)
/// }
///
/// let mut conn = SqliteConnection::establish(":memory:")?;
/// diesel_seqgen::run_migrations(&mut conn)?;
/// diesel::sql_query("CREATE TABLE users (id TEXT PRIMARY KEY, name TEXT NOT NULL)").execute(&mut conn)?;
/// let mut rows = vec![NewUser { id: String::new(), name: "Ada".into() }];
/// assert_eq!(save(&mut conn, &mut rows)?, 1);
/// assert_eq!(rows[0].id, "U000001");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`diesel_seqgen::insert_into` cannot insert `{Self}` into `{T}` on `{C}`",
    label = "not rows Diesel can insert into `{T}` on this connection",
    note = "the rows must be what `diesel::insert_into` takes for that table: a struct deriving `Insertable` (with `#[diesel(table_name = ...)]` naming the table) and `DistributedId`, passed as `&mut row`, `&mut rows` (a `Vec` or a slice)",
    note = "and the connection one whose backend feature of diesel-seqgen is on"
)]
pub trait Insert<T, C>: Records {
    /// Diesel's insert of `records`.
    #[doc(hidden)]
    fn __execute(target: &T, records: &Self, conn: &mut C) -> QueryResult<usize>;

    /// Diesel's insert of `records`, inserting nothing unless the session is marked with
    /// `mark` (`asserted.rs`): how many rows it inserted.
    #[doc(hidden)]
    fn __execute_asserted(
        target: &T,
        records: &Self,
        mark: Mark,
        conn: &mut C,
    ) -> QueryResult<usize>;

    /// The gapless insert that takes its numbers in the statement itself (`one_statement.rs`);
    /// `Ok(None)` when the counter's row is not there yet.
    #[doc(hidden)]
    fn __execute_numbered(
        target: &T,
        records: &Self,
        plan: Plan,
        conn: &mut C,
    ) -> QueryResult<Option<i64>>;
}

// The one-statement insert is bound by `QueryFragment` alone, and run by the backend
// (`Backend::run_one_statement`): a `LoadQuery<'b, ..>` bound under `for<'b>` here makes
// rustc reject every PostgreSQL and MySQL insert of a `Vec` ("implementation of `Insertable`
// is not general enough").
impl<T, C, R> Insert<T, C> for R
where
    R: Records + ?Sized,
    T: Table + Clone,
    C: IdConnection,
    for<'b> &'b R: Insertable<T>,
    for<'b> InsertStatement<T, <&'b R as Insertable<T>>::Values>: ExecuteDsl<C>,
    for<'b> &'b R::Row: InsertRow<T>,
    for<'b> OneStatement<T::FromClause, <&'b R::Row as InsertRow<T>>::Values>:
        QueryFragment<C::Backend>,
    for<'b> Asserted<T::FromClause, <&'b R::Row as InsertRow<T>>::Values>:
        QueryFragment<C::Backend>,
{
    fn __execute(target: &T, records: &Self, conn: &mut C) -> QueryResult<usize> {
        if C::Backend::KEEPS_INSERTS_PREPARED {
            // The same insert, written from the rows' values so that it stays prepared
            // (`asserted.rs`); Diesel's own where it has a `DEFAULT` (refused, nothing sent).
            let statement = Asserted::of::<T, R::Row>(target, records.__rows(), None);
            match statement.is_safe_to_cache_prepared(&Default::default()) {
                Ok(_) => return statement.execute(conn),
                Err(e) if !is_not_rewritten(&e) => return Err(e),
                Err(_) => {}
            }
        }
        diesel::insert_into(target.clone())
            .values(records)
            .execute(conn)
    }

    fn __execute_asserted(
        target: &T,
        records: &Self,
        mark: Mark,
        conn: &mut C,
    ) -> QueryResult<usize> {
        let rows = records.__rows();
        if asks_first::<C::Backend>(rows.len()) {
            let statement = Asserted::of::<T, R::Row>(target, rows, None);
            statement.is_safe_to_cache_prepared(&Default::default())?;
            let carries = drive(C::Backend::carries_mark(&mut Blocking(conn), &mark.value))?;
            return if carries {
                statement.execute(conn)
            } else {
                Ok(0)
            };
        }
        let statement = Asserted::of::<T, R::Row>(target, rows, Some(mark));
        // Refused before anything is sent when the insert is not of the plain shape.
        statement.is_safe_to_cache_prepared(&Default::default())?;
        statement.execute(conn)
    }

    fn __execute_numbered(
        target: &T,
        records: &Self,
        plan: Plan,
        conn: &mut C,
    ) -> QueryResult<Option<i64>> {
        let rows = records.__rows().iter().map(InsertRow::row_values).collect();
        let statement = OneStatement::new(target.from_clause(), rows, plan);
        // Walked once before sending: an insert the statement cannot rewrite fails here,
        // before Diesel reports a query that would not print to instrumentation.
        statement.is_safe_to_cache_prepared(&Default::default())?;
        <C::Backend as Backend>::run_one_statement(conn, statement)
    }
}

/// Records that [`InsertWithIds::get_result`](crate::insert::InsertWithIds::get_result) and
/// `get_results` can insert into table `T` on connection `C`, loading rows of type `U`: those
/// whose Diesel insert loads `U` there (`RETURNING`: PostgreSQL, SQLite).
pub trait InsertReturning<T, C, U>: for<'b> InsertReturningFor<'b, T, C, U> {}

impl<T, C, U, R> InsertReturning<T, C, U> for R where
    R: for<'b> InsertReturningFor<'b, T, C, U> + ?Sized
{
}

/// [`InsertReturning`] for records borrowed for `'b`. Its bounds name `'b` without a
/// `for<'b>` of their own: under one, rustc rejects every insert of a `Vec` ("implementation
/// of `Insertable` is not general enough").
#[doc(hidden)]
pub trait InsertReturningFor<'b, T, C, U>: Records {
    /// Diesel's insert of `records`, loading one row.
    fn __get_result(target: T, records: &'b Self, conn: &mut C) -> QueryResult<U>;

    /// Diesel's insert of `records`, loading every row.
    fn __get_results(target: T, records: &'b Self, conn: &mut C) -> QueryResult<Vec<U>>;
}

impl<'b, T, C, U, R> InsertReturningFor<'b, T, C, U> for R
where
    R: Records + ?Sized + 'b,
    T: Table,
    C: IdConnection,
    &'b R: Insertable<T>,
    InsertStatement<T, <&'b R as Insertable<T>>::Values>: LoadQuery<'b, C, U>,
{
    fn __get_result(target: T, records: &'b Self, conn: &mut C) -> QueryResult<U> {
        diesel::insert_into(target).values(records).get_result(conn)
    }

    fn __get_results(target: T, records: &'b Self, conn: &mut C) -> QueryResult<Vec<U>> {
        diesel::insert_into(target)
            .values(records)
            .get_results(conn)
    }
}
