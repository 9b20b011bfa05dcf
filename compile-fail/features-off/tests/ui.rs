//! A setting whose feature is off is a compile error at its token that names the feature, as a
//! user with `diesel-seqgen = { version = "0.2", features = ["postgres"] }` meets it. Regenerate
//! the snapshots after a deliberate change with
//! `TRYBUILD=overwrite cargo test -p seqgen-compile-fail-features-off --test ui`.

#[test]
fn compile_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
