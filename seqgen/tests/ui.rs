//! Every compile error of `#[derive(DistributedId)]`, one file per error family, with the
//! exact message and the token it points at (`.stderr` beside each file). Regenerate the
//! snapshots after a deliberate change with `TRYBUILD=overwrite cargo test -p diesel-seqgen --test ui`.
//!
//! The messages do not depend on the backend features, so this runs in the default
//! (SQLite-only) build alone: under `--all-features` trybuild would build Diesel a second time
//! with every backend for the same result.
#![cfg(not(any(feature = "postgres", feature = "mysql")))]

#[test]
fn compile_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
