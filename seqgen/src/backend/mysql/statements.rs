//! MySQL's own statement texts (see the module above): the reservation by `UPDATE` and
//! `LAST_INSERT_ID`, and the creation of a row without gap locks.

use diesel::mysql::Mysql;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::{BigInt, Nullable, Text, Unsigned};

use crate::backend::statement::{Piece, Text as StatementText};

/// Adds to an existing counter and remembers the new value as `LAST_INSERT_ID()`. A counter
/// behind its own `start_value` (else the spec's start) jumps forward to it; a counter past
/// the limit is left alone.
pub(super) struct Bump;

impl StatementText for Bump {
    const PIECES: &'static [Piece] = &[
        Piece::Sql(
            "UPDATE db_key SET current_value = LAST_INSERT_ID(GREATEST(current_value, \
             COALESCE(start_value, ",
        ),
        Piece::Start,
        Piece::Sql(") - 1) + "),
        Piece::Count,
        Piece::Sql("), updated_at = CURRENT_TIMESTAMP(6) WHERE key_name = "),
        Piece::Key,
        Piece::Sql(" AND scope = "),
        Piece::Scope,
        Piece::Sql(" AND period = "),
        Piece::Period,
        Piece::Sql(" AND GREATEST(current_value, COALESCE(start_value, "),
        Piece::Start,
        Piece::Sql(") - 1) <= "),
        Piece::Limit,
    ];
    type SqlType = BigInt;
}

/// [`Bump`] for an undated, unscoped key whose row is as the caller expects: that row is both
/// the counter and the key's settings, so the statement checks on the row it updates that it
/// records the caller's shape and that the block's size the caller worked out from the
/// `batch_size` it last saw is the one the row gives now (its `batch_size`, else the
/// generator's batch). A row that fails either (or is missing, or past the limit) is left
/// alone, and the caller reads the key's row and reserves with [`Bump`] instead.
///
/// A dated or scoped counter has its settings on another row, and joining `db_key` to itself
/// makes MariaDB's multi-table `UPDATE` go through a temporary table: measured, that one
/// statement took longer than the three it would replace, so such counters keep the three.
pub(super) struct BumpKnownKey<'a, 'r> {
    pub(super) request: &'r crate::backend::Request<'a>,
    pub(super) count: i64,
    pub(super) limit: i64,
}

impl QueryId for BumpKnownKey<'_, '_> {
    type QueryId = BumpKnownKey<'static, 'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl QueryFragment<Mysql> for BumpKnownKey<'_, '_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        use crate::backend::statement::{walk_block_size, walk_pieces};
        let r = self.request;
        walk_pieces(
            Bump::PIECES,
            Bump::ON_CHECKED_SESSION,
            r.counter,
            (&self.count, &self.limit, &r.counter.start),
            out.reborrow(),
        )?;
        // `shape` compares byte for byte: the table's collation is `utf8mb4_bin`.
        out.push_sql(" AND shape = ");
        out.push_bind_param::<Text, str>(r.shape)?;
        out.push_sql(" AND ");
        walk_block_size("batch_size", &r.need, &r.batch, &r.largest, out.reborrow())?;
        out.push_sql(" = ");
        out.push_bind_param::<BigInt, i64>(&self.count)?;
        Ok(())
    }
}

impl<Conn> RunQueryDsl<Conn> for BumpKnownKey<'_, '_> {}

/// After [`BumpKnownKey`], on the same connection: the new value and what
/// [`identify`](crate::backend::Backend::identify) reads of the database (fingerprint, durability,
/// token) and the key row's `batch_size`, for the next reservation to expect (the block just
/// reserved was checked against it in the statement). The token row, once created, never
/// changes.
pub(super) struct ReadBack;

impl StatementText for ReadBack {
    const PIECES: &'static [Piece] = &[
        Piece::Sql("SELECT LAST_INSERT_ID(), "),
        Piece::Fingerprint,
        Piece::Sql(", "),
        Piece::Durability,
        Piece::Sql(
            ", (SELECT t.current_value FROM db_key t \
             WHERE t.key_name = '' AND t.scope = '' AND t.period = ''), \
             (SELECT k.batch_size FROM db_key k WHERE k.key_name = ",
        ),
        Piece::Key,
        Piece::Sql(" AND k.scope = '' AND k.period = '')"),
    ];
    type SqlType = (
        Unsigned<BigInt>,
        Text,
        Text,
        Nullable<BigInt>,
        Nullable<BigInt>,
    );
}

/// A new counter row's start: its key row's `start_value - 1` (else the spec's start - 1), read with a
/// lock once the key row exists (a plain read would see a transaction's old snapshot).
pub(super) struct StartOfRow;

impl StatementText for StartOfRow {
    const PIECES: &'static [Piece] = &[
        Piece::Sql("SELECT COALESCE(MAX(start_value), "),
        Piece::Start,
        Piece::Sql(") - 1 FROM db_key WHERE key_name = "),
        Piece::Key,
        Piece::Sql(" AND scope = '' AND period = '' FOR UPDATE"),
    ];
    type SqlType = BigInt;
}

/// Creates a counter row at the value given ([`StartOfRow`]), unless it exists. Not
/// `INSERT IGNORE`, which locks an existing row shared: two transactions that both hold it
/// shared deadlock when each then updates it. `ON DUPLICATE KEY UPDATE` locks an existing
/// row exclusively and a new one by its record alone, so creations never wait on each other
/// and the update after needs no lock it does not hold. (The no-op update fires the
/// `db_key_never_back` trigger, which lets an unchanged counter pass.)
pub(super) struct CreateRowAt;

impl StatementText for CreateRowAt {
    const PIECES: &'static [Piece] = &[
        Piece::Sql("INSERT INTO db_key (key_name, scope, period, current_value) VALUES ("),
        Piece::Key,
        Piece::Sql(", "),
        Piece::Scope,
        Piece::Sql(", "),
        Piece::Period,
        Piece::Sql(", "),
        Piece::Count,
        Piece::Sql(") ON DUPLICATE KEY UPDATE key_name = key_name"),
    ];
    type SqlType = BigInt;
}
