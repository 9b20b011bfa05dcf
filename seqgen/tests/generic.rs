//! Code generic over the connection compiles with seqgen's public bounds alone
//! (`seqgen::IdConnection`, `seqgen::insert::{Insert, InsertReturning}`), for every backend:
//! `tests/pass/generic_repository.rs`. It needs all three backends, so it runs under
//! `--all-features` (CI's matrix step).
#![cfg(all(feature = "sqlite", feature = "postgres", feature = "mysql"))]

#[test]
fn generic_code_over_the_connection_compiles() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/pass/generic_repository.rs");
}
