//! `loadgen_rows`, the table `--insert` fills, and its models for `--via insert-into`:
//! `#[derive(DistributedId)]` rows whose key is fixed, so `--key` is their scope, each with its
//! own counter (`key_name`, as with `--via next-id`); and `loadgen_pending`, whose rows a
//! follower numbers after their commit (`--mode deferred`).

use diesel_seqgen::DistributedId;

use super::args::Mode;

diesel::table! {
    /// Where `--insert` puts every ID: the ID is the primary key within its counter (IDs of
    /// different `--key`s look alike, `L` + counter, and share the table).
    loadgen_rows (key_name, id) {
        key_name -> Text,
        id -> Text,
    }
}

/// A row of a batched key.
#[derive(diesel::Insertable, DistributedId)]
#[diesel(table_name = loadgen_rows)]
pub struct BatchedRow {
    #[distributed_id(
        key = "loadgen_rows",
        prefix = "L",
        date = "",
        pad = 12,
        batch = 20,
        scope = "key_name"
    )]
    id: String,
    key_name: String,
}

/// A row of a gapless key.
#[derive(diesel::Insertable, DistributedId)]
#[diesel(table_name = loadgen_rows)]
pub struct GaplessRow {
    #[distributed_id(
        key = "loadgen_rows_gapless",
        prefix = "L",
        date = "",
        pad = 12,
        gapless,
        scope = "key_name"
    )]
    id: String,
    key_name: String,
}

diesel::table! {
    /// Where `--mode deferred` puts its rows: committed without a number, which a follower
    /// gives afterwards; `token` names each row to the histories (its writer's pid and count).
    loadgen_pending (id) {
        id -> BigInt,
        key_name -> Text,
        token -> Text,
        number -> Nullable<Text>,
    }
}

/// A row numbered after its commit (`gapless = "deferred"`).
#[derive(diesel::Insertable, DistributedId)]
#[diesel(table_name = loadgen_pending)]
pub struct DeferredRow {
    #[distributed_id(
        key = "loadgen_pending",
        prefix = "L",
        date = "",
        pad = 12,
        gapless = "deferred"
    )]
    number: Option<String>,
    key_name: String,
    token: String,
}

/// One insert's rows, of the mode asked for.
pub enum Rows {
    /// `--mode batched`.
    Batched(Vec<BatchedRow>),
    /// `--mode gapless`.
    Gapless(Vec<GaplessRow>),
    /// `--mode deferred`.
    Deferred(Vec<DeferredRow>),
}

/// A token no other row of this process has: its pid and a count.
fn token() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("T{}-{n}", std::process::id())
}

impl Rows {
    /// `n` rows of `key`, their IDs unset.
    pub(super) fn new(mode: Mode, key: &str, n: usize) -> Self {
        let key_name = || key.to_owned();
        match mode {
            Mode::Batched => Rows::Batched(
                (0..n)
                    .map(|_| BatchedRow {
                        id: String::new(),
                        key_name: key_name(),
                    })
                    .collect(),
            ),
            Mode::Gapless => Rows::Gapless(
                (0..n)
                    .map(|_| GaplessRow {
                        id: String::new(),
                        key_name: key_name(),
                    })
                    .collect(),
            ),
            Mode::Deferred => Rows::Deferred(
                (0..n)
                    .map(|_| DeferredRow {
                        number: None,
                        key_name: key_name(),
                        token: token(),
                    })
                    .collect(),
            ),
        }
    }

    /// Their IDs, as the insert filled them (the tokens of rows numbered after the commit).
    pub(super) fn ids(self) -> Vec<String> {
        match self {
            Rows::Batched(rows) => rows.into_iter().map(|row| row.id).collect(),
            Rows::Gapless(rows) => rows.into_iter().map(|row| row.id).collect(),
            Rows::Deferred(rows) => rows.into_iter().map(|row| row.token).collect(),
        }
    }
}
