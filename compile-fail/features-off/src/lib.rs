//! The compile errors of settings whose feature is off: see `tests/ui.rs`.
