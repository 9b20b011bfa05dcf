//! ID field types that refuse to be inserted before seqgen filled them: the habit of
//! `diesel::insert_into(users::table).values(&new_user)` on a model whose ID is empty becomes
//! an error before anything is sent, instead of a row with an empty ID.

use std::fmt;

use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql, FromSqlRow};
use diesel::expression::AsExpression;
use diesel::serialize::{self, Output, ToSql};
use diesel::sql_types::{BigInt, Text};

use super::{IdSlot, IdValue};

/// A text ID field (`U20261121000001`) that cannot be inserted empty. Use it instead of
/// `String` for a `#[distributed_id]` field: [`insert_into`](crate::insert_into) and
/// [`assign_ids`](crate::assign_ids) fill it as they fill a `String`, and a plain
/// `diesel::insert_into(..).values(&record)` of a record whose ID was never filled fails with
/// Diesel's `SerializationError` ([`NotFilled`]) before anything is sent. It reads back from
/// a `Text` column, and derefs to `str`.
///
/// ```
/// use diesel::prelude::*;
/// use diesel_seqgen::{DistributedId, Id};
///
/// diesel::table! { users (id) { id -> Text, name -> Text } }
///
/// #[derive(Insertable, DistributedId)]
/// #[diesel(table_name = users)]
/// struct NewUser {
///     #[distributed_id(prefix = "U", date = "", pad = 6)]
///     id: Id,
///     name: String,
/// }
///
/// let mut conn = SqliteConnection::establish(":memory:")?;
/// diesel_seqgen::run_migrations(&mut conn)?;
/// diesel::sql_query("CREATE TABLE users (id TEXT PRIMARY KEY, name TEXT NOT NULL)")
///     .execute(&mut conn)?;
///
/// // Out of habit, plain Diesel on a record seqgen has not filled: refused, nothing inserted.
/// let mut ada = NewUser { id: Id::default(), name: "Ada".into() };
/// let err = diesel::insert_into(users::table).values(&ada).execute(&mut conn).unwrap_err();
/// assert!(err.to_string().contains("diesel_seqgen::insert_into"), "{err}");
///
/// diesel_seqgen::insert_into(users::table).values(&mut ada).execute(&mut conn)?;
/// assert_eq!(ada.id, "U000001");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, AsExpression, FromSqlRow)]
#[diesel(sql_type = Text)]
pub struct Id(String);

/// The `i64` form of [`Id`]: a numeric ID field (`2025070200000001`) that cannot be inserted as
/// 0, the value it has before seqgen fills it. It reads back from a `BigInt` column.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, AsExpression, FromSqlRow,
)]
#[diesel(sql_type = BigInt)]
pub struct NumericId(i64);

/// Why a record was refused: its [`Id`] or [`NumericId`] field was never filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotFilled;

impl fmt::Display for NotFilled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "an ID field was never filled: insert the record with `diesel_seqgen::insert_into(..)`, \
             or call `diesel_seqgen::assign_ids(..)` before `diesel::insert_into(..)`",
        )
    }
}

impl std::error::Error for NotFilled {}

impl Id {
    /// The ID as text (empty until filled).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The ID, consumed.
    pub fn into_string(self) -> String {
        self.0
    }

    /// Whether seqgen filled it (or it was set).
    pub fn is_filled(&self) -> bool {
        !self.0.is_empty()
    }
}

impl NumericId {
    /// The ID as a number (0 until filled).
    pub fn get(self) -> i64 {
        self.0
    }

    /// Whether seqgen filled it (or it was set).
    pub fn is_filled(self) -> bool {
        self.0 != 0
    }
}

impl From<String> for Id {
    fn from(id: String) -> Self {
        Id(id)
    }
}

impl From<&str> for Id {
    fn from(id: &str) -> Self {
        Id(id.to_owned())
    }
}

impl From<i64> for NumericId {
    fn from(id: i64) -> Self {
        NumericId(id)
    }
}

impl std::ops::Deref for Id {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for Id {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Id {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for NumericId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl IdValue for Id {
    const NUMERIC: bool = false;
    fn id_slot(&mut self) -> IdSlot<'_> {
        IdSlot::Text(&mut self.0)
    }
}

impl IdValue for NumericId {
    const NUMERIC: bool = true;
    fn id_slot(&mut self) -> IdSlot<'_> {
        IdSlot::Number(&mut self.0)
    }
}

impl<DB> ToSql<Text, DB> for Id
where
    DB: Backend,
    str: ToSql<Text, DB>,
{
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, DB>) -> serialize::Result {
        if self.0.is_empty() {
            return Err(Box::new(NotFilled));
        }
        <str as ToSql<Text, DB>>::to_sql(&self.0, out)
    }
}

impl<DB> ToSql<BigInt, DB> for NumericId
where
    DB: Backend,
    i64: ToSql<BigInt, DB>,
{
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, DB>) -> serialize::Result {
        if self.0 == 0 {
            return Err(Box::new(NotFilled));
        }
        <i64 as ToSql<BigInt, DB>>::to_sql(&self.0, out)
    }
}

impl<DB> FromSql<Text, DB> for Id
where
    DB: Backend,
    String: FromSql<Text, DB>,
{
    fn from_sql(bytes: DB::RawValue<'_>) -> deserialize::Result<Self> {
        String::from_sql(bytes).map(Id)
    }
}

impl<DB> FromSql<BigInt, DB> for NumericId
where
    DB: Backend,
    i64: FromSql<BigInt, DB>,
{
    fn from_sql(bytes: DB::RawValue<'_>) -> deserialize::Result<Self> {
        i64::from_sql(bytes).map(NumericId)
    }
}
