//! `loadgen_rows`, the table `--insert` fills, and its models for `--via insert-into`:
//! `#[derive(DistributedId)]` rows whose key is fixed, so `--key` is their scope, each with its
//! own counter (`key_name`, as with `--via next-id`).

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

/// One insert's rows, of the mode asked for.
pub enum Rows {
    /// `--mode batched`.
    Batched(Vec<BatchedRow>),
    /// `--mode gapless`.
    Gapless(Vec<GaplessRow>),
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
        }
    }

    /// Their IDs, as the insert filled them.
    pub(super) fn ids(self) -> Vec<String> {
        match self {
            Rows::Batched(rows) => rows.into_iter().map(|row| row.id).collect(),
            Rows::Gapless(rows) => rows.into_iter().map(|row| row.id).collect(),
        }
    }
}
