//! Building a spec from arbitrary prefix, date pattern, pad, time zone and template text: an
//! error or a spec, never a panic; a spec's shape reads back to a spec of the same shape (what
//! the `seqgen` command does with the shape `db_key` records) that prints the same IDs.
#![no_main]

mod common;

use arbitrary::Arbitrary;
use chrono::{DateTime, Utc};
use libfuzzer_sys::fuzz_target;
use diesel_seqgen_core::Spec;

#[derive(Arbitrary, Debug)]
struct Input {
    spec: common::SpecInput,
    shape: String,
    at: u32,
}

fuzz_target!(|input: Input| {
    // Any recorded shape, as an operator could have edited it: an error or a spec.
    let _ = Spec::from_shape("fuzz", &input.shape).map(|spec| spec.format("", 1));
    let Ok(spec) = input.spec.builder().build() else {
        return;
    };
    let now = DateTime::<Utc>::from_timestamp(i64::from(input.at), 0).unwrap();
    let period = spec.period_at(now);
    let first = spec.format(&period, 1);
    if spec.is_obfuscated() {
        return; // the shape holds only the key's fingerprint
    }
    let read_back = Spec::from_shape("fuzz", spec.shape())
        .unwrap_or_else(|e| panic!("{spec:?}: its shape {:?} reads back as {e}", spec.shape()));
    assert_eq!(read_back.shape(), spec.shape());
    assert_eq!(read_back.format(&period, 1), first, "{spec:?}");
    // The reset comes back: the same printed date draws from the same counter.
    assert_eq!(read_back.counter_period(&period), spec.counter_period(&period), "{spec:?}");
    // The step and its remainder come back too: a later counter prints the same number.
    let later = spec.counter_start().max(2).min(spec.capacity());
    assert_eq!(
        read_back.format(&period, later),
        spec.format(&period, later),
        "{spec:?}"
    );
});
