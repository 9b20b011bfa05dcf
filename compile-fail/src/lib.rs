//! The compile errors of `#[derive(DistributedId)]`: see `tests/ui.rs`.
