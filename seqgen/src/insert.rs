//! The Diesel side: filling the ID fields of `#[derive(DistributedId)]` models, and
//! `seqgen::insert_into(table).values(&mut rows)`, which fills them and inserts on the same
//! connection.

use diesel::connection::LoadConnection;
use diesel::query_builder::InsertStatement;
use diesel::query_dsl::methods::{ExecuteDsl, LoadQuery};
use diesel::{Insertable, RunQueryDsl, Table};

use crate::backend::Backend;
use crate::error::Error;
use crate::error::Result;
use crate::generator::Generator;
use crate::global::default_generator;
use crate::transaction::in_transaction;
use seqgen_core::{Mode, Spec};

/// A Diesel model whose ID fields seqgen fills. Implement it with
/// `#[derive(DistributedId)]` (see [the derive](derive@crate::DistributedId)).
///
/// Only unset fields get an ID: an empty `String`, `None`, or `0` for a plain `i64`. A value the
/// caller set is kept.
pub trait DistributedId {
    /// The annotated fields, in the order their IDs are taken (sorted by key).
    #[doc(hidden)]
    fn __id_fields() -> &'static [IdField];

    /// The slot of field number `index` of [`__id_fields`](DistributedId::__id_fields).
    #[doc(hidden)]
    fn __id_slot(&mut self, index: usize) -> IdSlot<'_>;

    /// Fills this record's unset ID fields from the process-wide default generator, on
    /// `conn`. Then insert it with plain Diesel.
    fn assign_ids<C>(&mut self, conn: &mut C) -> Result<()>
    where
        Self: Sized,
        C: LoadConnection,
        C::Backend: Backend,
    {
        assign_ids(std::slice::from_mut(self), conn)
    }

    /// Fills this record's unset ID fields from `generator`, on `conn`.
    fn assign_ids_with<C>(&mut self, generator: &Generator, conn: &mut C) -> Result<()>
    where
        Self: Sized,
        C: LoadConnection,
        C::Backend: Backend,
    {
        assign_ids_with(std::slice::from_mut(self), generator, conn)
    }
}

/// One annotated field: its name and its spec.
#[doc(hidden)]
#[derive(Debug)]
pub struct IdField {
    /// The field's name, for messages.
    pub name: &'static str,
    /// The spec its IDs follow.
    pub spec: Spec,
}

/// A mutable view of an ID field of one of the supported types.
#[doc(hidden)]
#[derive(Debug)]
pub enum IdSlot<'a> {
    /// `String`: unset when empty.
    Text(&'a mut String),
    /// `Option<String>`: unset when `None`.
    OptionalText(&'a mut Option<String>),
    /// `i64`: unset when `0`.
    Number(&'a mut i64),
    /// `Option<i64>`: unset when `None`.
    OptionalNumber(&'a mut Option<i64>),
}

impl IdSlot<'_> {
    fn is_unset(&self) -> bool {
        match self {
            IdSlot::Text(s) => s.is_empty(),
            IdSlot::OptionalText(s) => s.is_none(),
            IdSlot::Number(n) => **n == 0,
            IdSlot::OptionalNumber(n) => n.is_none(),
        }
    }

    fn is_numeric(&self) -> bool {
        matches!(self, IdSlot::Number(_) | IdSlot::OptionalNumber(_))
    }
}

/// Fills the unset ID fields of `rows` from the process-wide default generator: one call per
/// annotated field for the whole slice, so at most one reservation per field.
///
/// ```
/// use diesel::prelude::*;
/// use seqgen::DistributedId;
///
/// diesel::table! { menus (id) { id -> Text, title -> Text } }
///
/// #[derive(Insertable, DistributedId)]
/// #[diesel(table_name = menus)]
/// struct NewMenu {
///     #[distributed_id(prefix = "MENU", date = "")]
///     id: String,
///     title: String,
/// }
///
/// let mut conn = SqliteConnection::establish(":memory:")?;
/// seqgen::run_migrations(&mut conn)?;
/// diesel::sql_query("CREATE TABLE menus (id TEXT PRIMARY KEY, title TEXT NOT NULL)").execute(&mut conn)?;
///
/// let mut rows: Vec<NewMenu> = ["Tea", "Cake"]
///     .map(|title| NewMenu { id: String::new(), title: title.into() })
///     .into();
/// seqgen::assign_ids(&mut rows, &mut conn)?;
/// diesel::insert_into(menus::table).values(&rows).execute(&mut conn)?;
/// assert_eq!(rows[1].id, "MENU000002");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn assign_ids<T, C>(rows: &mut [T], conn: &mut C) -> Result<()>
where
    T: DistributedId,
    C: LoadConnection,
    C::Backend: Backend,
{
    fill(rows, None, conn, &mut Vec::new())
}

/// [`assign_ids`] with your own [`Generator`].
pub fn assign_ids_with<T, C>(rows: &mut [T], generator: &Generator, conn: &mut C) -> Result<()>
where
    T: DistributedId,
    C: LoadConnection,
    C::Backend: Backend,
{
    fill(rows, Some(generator), conn, &mut Vec::new())
}

/// Fills the unset ID fields of `rows` (from the default generator without `generator`),
/// noting each (row, field) it fills in `filled`, so that a failed insert can undo them.
fn fill<T, C>(
    rows: &mut [T],
    generator: Option<&Generator>,
    conn: &mut C,
    filled: &mut Vec<(usize, usize)>,
) -> Result<()>
where
    T: DistributedId,
    C: LoadConnection,
    C::Backend: Backend,
{
    if rows.is_empty() {
        return Ok(());
    }
    // Refuse before filling anything: a record must not end up half filled.
    if let Some(gapless) = gapless_field::<T>() {
        if !in_transaction(conn) {
            return Err(Error::OutsideTransaction {
                key: gapless.spec.key().to_owned(),
            });
        }
    }
    let default;
    let generator = match generator {
        Some(generator) => generator,
        None => {
            default = default_generator(conn)?;
            &default
        }
    };
    for (index, field) in T::__id_fields().iter().enumerate() {
        let unset: Vec<usize> = (0..rows.len())
            .filter(|&row| rows[row].__id_slot(index).is_unset())
            .collect();
        if unset.is_empty() {
            continue;
        }
        if rows[unset[0]].__id_slot(index).is_numeric() {
            let ids = generator.next_numbers(conn, &field.spec, unset.len())?;
            for (row, id) in unset.into_iter().zip(ids) {
                match rows[row].__id_slot(index) {
                    IdSlot::Number(n) => *n = id,
                    IdSlot::OptionalNumber(n) => *n = Some(id),
                    IdSlot::Text(_) | IdSlot::OptionalText(_) => unreachable_slot(field),
                }
                filled.push((row, index));
            }
        } else {
            let ids = generator.next_ids(conn, &field.spec, unset.len())?;
            for (row, id) in unset.into_iter().zip(ids) {
                match rows[row].__id_slot(index) {
                    IdSlot::Text(s) => *s = id,
                    IdSlot::OptionalText(s) => *s = Some(id),
                    IdSlot::Number(_) | IdSlot::OptionalNumber(_) => unreachable_slot(field),
                }
                filled.push((row, index));
            }
        }
    }
    Ok(())
}

/// Sets the noted fields back to unset.
fn unfill<T: DistributedId>(rows: &mut [T], filled: &[(usize, usize)]) {
    for &(row, index) in filled {
        match rows[row].__id_slot(index) {
            IdSlot::Text(s) => s.clear(),
            IdSlot::OptionalText(s) => *s = None,
            IdSlot::Number(n) => *n = 0,
            IdSlot::OptionalNumber(n) => *n = None,
        }
    }
}

/// The first gapless field of `T`, if it has one.
fn gapless_field<T: DistributedId>() -> Option<&'static IdField> {
    T::__id_fields()
        .iter()
        .find(|field| matches!(field.spec.mode(), Mode::Gapless { .. }))
}

fn unreachable_slot(field: &IdField) -> ! {
    panic!(
        "field `{}` changed type between two calls of the derived __id_slot",
        field.name
    )
}

/// What [`insert_into`]'s `values` accepts: one record, a slice or a `Vec` of records.
pub trait Records {
    /// The record type.
    type Row: DistributedId;
    /// The records as a slice.
    fn as_rows(&mut self) -> &mut [Self::Row];
}

impl<T: DistributedId> Records for T {
    type Row = T;
    fn as_rows(&mut self) -> &mut [T] {
        std::slice::from_mut(self)
    }
}

impl<T: DistributedId> Records for [T] {
    type Row = T;
    fn as_rows(&mut self) -> &mut [T] {
        self
    }
}

impl<T: DistributedId> Records for Vec<T> {
    type Row = T;
    fn as_rows(&mut self) -> &mut [T] {
        self
    }
}

/// Starts an insert that fills ID fields first: `seqgen::insert_into(table).values(&mut
/// rows).execute(conn)`, the same shape as Diesel's `insert_into`.
///
/// ```
/// use diesel::prelude::*;
/// use seqgen::DistributedId;
///
/// diesel::table! { users (id) { id -> Text, name -> Text } }
///
/// #[derive(Insertable, DistributedId)]
/// #[diesel(table_name = users)]
/// struct NewUser {
///     #[distributed_id(prefix = "U", date = "%Y%m%d", pad = 6, batch = 100)]
///     id: String,
///     name: String,
/// }
///
/// let mut conn = SqliteConnection::establish(":memory:")?;
/// seqgen::run_migrations(&mut conn)?;
/// diesel::sql_query("CREATE TABLE users (id TEXT PRIMARY KEY, name TEXT NOT NULL)").execute(&mut conn)?;
///
/// let mut ada = NewUser { id: String::new(), name: "Ada".into() };
/// seqgen::insert_into(users::table).values(&mut ada).execute(&mut conn)?;
/// assert!(ada.id.starts_with('U') && ada.id.ends_with("000001"));
///
/// let mut more: Vec<NewUser> = ["Grace", "Edsger"]
///     .map(|name| NewUser { id: String::new(), name: name.into() })
///     .into();
/// let inserted = seqgen::insert_into(users::table).values(&mut more).execute(&mut conn)?;
/// assert_eq!(inserted, 2);
/// assert!(more[1].id.ends_with("000003"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn insert_into<T: Table>(target: T) -> IncompleteInsert<T> {
    IncompleteInsert { target }
}

/// An insert without values yet; see [`insert_into`].
#[derive(Debug, Clone, Copy)]
#[must_use = "an insert does nothing until it is executed"]
pub struct IncompleteInsert<T> {
    target: T,
}

impl<T> IncompleteInsert<T> {
    /// The records to insert; their unset ID fields are filled when the insert runs, and
    /// stay readable in `records` afterwards.
    pub fn values<R: Records + ?Sized>(self, records: &mut R) -> InsertWithIds<'_, T, R> {
        InsertWithIds {
            target: self.target,
            records,
            generator: None,
        }
    }
}

/// An insert that fills ID fields, then runs as Diesel's; see [`insert_into`].
#[must_use = "an insert does nothing until it is executed"]
pub struct InsertWithIds<'a, T, R: ?Sized> {
    target: T,
    records: &'a mut R,
    generator: Option<&'a Generator>,
}

impl<'a, T, R> InsertWithIds<'a, T, R>
where
    T: Table,
    R: Records + ?Sized,
    for<'b> &'b R: Insertable<T>,
{
    /// Takes IDs from `generator` instead of the process-wide default.
    pub fn with_generator(mut self, generator: &'a Generator) -> Self {
        self.generator = Some(generator);
        self
    }

    /// Fills the IDs, inserts, and returns the number of rows inserted.
    pub fn execute<C>(self, conn: &mut C) -> Result<usize>
    where
        C: LoadConnection,
        C::Backend: Backend,
        for<'b> InsertStatement<T, <&'b R as Insertable<T>>::Values>: ExecuteDsl<C>,
    {
        self.run(conn, |target, records, conn| {
            Ok(diesel::insert_into(target).values(records).execute(conn)?)
        })
    }

    /// Fills the IDs, inserts with `RETURNING`, and loads one row (PostgreSQL, SQLite).
    pub fn get_result<C, U>(self, conn: &mut C) -> Result<U>
    where
        C: LoadConnection,
        C::Backend: Backend,
        for<'b> InsertStatement<T, <&'b R as Insertable<T>>::Values>: LoadQuery<'b, C, U>,
    {
        self.run(conn, |target, records, conn| {
            Ok(diesel::insert_into(target)
                .values(records)
                .get_result(conn)?)
        })
    }

    /// Fills the IDs, inserts with `RETURNING`, and loads every row (PostgreSQL, SQLite).
    pub fn get_results<C, U>(self, conn: &mut C) -> Result<Vec<U>>
    where
        C: LoadConnection,
        C::Backend: Backend,
        for<'b> InsertStatement<T, <&'b R as Insertable<T>>::Values>: LoadQuery<'b, C, U>,
    {
        self.run(conn, |target, records, conn| {
            Ok(diesel::insert_into(target)
                .values(records)
                .get_results(conn)?)
        })
    }

    /// Fills the IDs and runs `insert`. With a gapless field, both run in one transaction (a
    /// savepoint inside the caller's), so the number and the row commit or roll back together
    /// even where a failed statement rolls back alone (SQLite, MySQL), and a failure leaves
    /// the records as they were given.
    fn run<C, O>(self, conn: &mut C, insert: impl FnOnce(T, &R, &mut C) -> Result<O>) -> Result<O>
    where
        C: LoadConnection,
        C::Backend: Backend,
    {
        let InsertWithIds {
            target,
            records,
            generator,
        } = self;
        let gapless = gapless_field::<R::Row>().is_some();
        let mut filled = Vec::new();
        let work = |conn: &mut C| -> Result<O> {
            fill(records.as_rows(), generator, conn, &mut filled)?;
            insert(target, &*records, conn)
        };
        if !gapless {
            return work(conn);
        }
        let result = conn.transaction(work);
        if result.is_err() {
            // The rollback gave the gapless numbers back: the next caller gets them. Left in
            // the records, a retry of this insert would reuse them — a duplicate.
            unfill(records.as_rows(), &filled);
        }
        result
    }
}
