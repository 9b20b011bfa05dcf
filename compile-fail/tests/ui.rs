//! Every compile error of `#[derive(DistributedId)]`, one file per error family, with the
//! exact message and the token it points at (`.stderr` beside each file). Regenerate the
//! snapshots after a deliberate change with
//! `TRYBUILD=overwrite cargo test -p seqgen-compile-fail --test ui`.
//!
//! In a package of its own, whose dev-dependencies are few (`Cargo.toml` says why).

#[test]
fn compile_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
