//! The widths a spec's parts may take: below both the spec and its errors, which name them.

/// The longest key `db_key.key_name` holds.
pub const MAX_KEY_LEN: usize = 191;
/// The widest pad: 18 digits always fit an `i64`.
pub const MAX_PAD: u32 = 18;
