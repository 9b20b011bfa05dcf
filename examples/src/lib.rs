//! Code shared by seqgen's examples and their tests.
#![forbid(unsafe_code)]

#[cfg(feature = "async-sqlite")]
pub mod orders_service;
