//! seqgen's behaviour suite: one test binary, so that Diesel and seqgen's generic code are
//! compiled and linked once per feature set rather than once per file. Each module is one
//! concern; most run every test on every enabled backend (`common::backend_tests!`).
//!
//! Run one module: `cargo test -p diesel-seqgen --test suite gapless::`.

#[macro_use]
mod common;

mod admin;
mod adopt;
mod async_guess;
mod check;
mod dated;
mod derive;
mod diesel_attributes;
mod failed_insert;
mod failover;
mod failures;
mod fiscal;
#[cfg(feature = "mysql")]
mod galera;
#[cfg(feature = "mysql")]
mod galera_cluster;
mod gapless;
mod generator;
mod generic_repository;
mod guess;
mod guess_values;
mod id_types;
mod integrity;
mod invariant;
mod lost_batch;
mod lost_transaction;
mod meters;
mod migrations;
mod never_back;
mod new_keys;
mod nonblocking;
mod obfuscate;
mod one_shape;
mod one_statement;
mod own_servers;
mod parse;
mod pending;
mod pgbouncer;
mod policies;
mod preview;
mod printed_scope;
mod properties;
mod quarters_and_weeks;
mod quarters_and_weeks_derive;
mod release;
mod replication;
mod reset;
mod reset_deferred;
mod reset_documents;
mod retried_insert;
mod scoped;
#[cfg(feature = "postgres")]
mod servers;
mod sqlite_setup;
mod start;
mod stats;
mod step;
mod three_numbers;
mod transactions;
mod void;
