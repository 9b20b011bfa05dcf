//! Numbers on a step (`spec/step.rs`).

use crate::{Overflow, Setting, Spec, SpecError};

#[test]
fn numbers_go_by_the_step_from_the_start_and_read_back_to_their_counter() {
    let tens = Spec::builder("k")
        .prefix("L")
        .date("")
        .pad(4)
        .step(10)
        .start(10);
    let tens = tens.build().unwrap();
    assert_eq!(tens.counter_start(), 1);
    let ids: Vec<String> = (1..=3).map(|c| tens.format("", c)).collect();
    assert_eq!(ids, ["L0010", "L0020", "L0030"]);
    assert_eq!(tens.capacity(), 999, "10..=9990");
    assert_eq!(tens.format("", 999), "L9990");
    for (counter, id) in (1..=3).zip(&ids) {
        assert_eq!(tens.counter_of(&tens.parse(id).unwrap()), Some(counter));
    }
    for off in ["L0015", "L0001", "L0000"] {
        assert!(tens.parse(off).is_err(), "{off} is off the step");
    }
    assert_eq!(tens.shape(), "L{date:}{seq:4,step=10}");

    // Odoo's 1, 11, 21: another remainder, another shape.
    let ones = Spec::builder("k")
        .prefix("L")
        .date("")
        .pad(4)
        .step(10)
        .build();
    let ones = ones.unwrap();
    assert_eq!(ones.format("", 2), "L0011");
    assert_eq!(ones.capacity(), 1000, "1..=9991");
    assert_eq!(ones.shape(), "L{date:}{seq:4,step=10+1}");
    assert!(ones.parse("L0020").is_err());
}

#[test]
fn a_later_start_on_the_same_step_is_the_same_shape_and_counter() {
    let early = Spec::builder("k").date("").pad(6).step(10).start(10);
    let late = Spec::builder("k").date("").pad(6).step(10).start(1000);
    let (early, late) = (early.build().unwrap(), late.build().unwrap());
    assert_eq!(early.shape(), late.shape());
    assert_eq!(late.counter_start(), 100);
    // The same counter prints the same number under both: a later start only skips ahead.
    assert_eq!(late.format("", 100), early.format("", 100));
    assert_eq!(late.format("", late.counter_start()), "001000");
}

#[test]
fn the_i64_form_and_widen_follow_the_step() {
    let spec = Spec::builder("k").date("").pad(3).step(25).start(25);
    let spec = spec.overflow(Overflow::Widen).numeric().build().unwrap();
    assert_eq!(spec.numeric("", 4), Some(100));
    assert_eq!(spec.format("", 39), "975");
    assert_eq!(spec.format("", 41), "1025", "widened past the pad");
    let id = spec.format("", 41);
    assert_eq!(spec.counter_of(&spec.parse(&id).unwrap()), Some(41));
    assert_eq!(spec.counter_of(&spec.parse_number(1025).unwrap()), Some(41));
}

#[test]
fn a_step_is_refused_with_what_counts_on_its_own() {
    let base = || Spec::builder("k").date("").pad(4);
    let refused = [
        base().step(0).build(),
        base().step(2).series(["a", "b"], 99).build(),
        base().step(2).overflow(Overflow::Letters).build(),
        base().step(2).overflow(Overflow::Cycle { max: 99 }).build(),
    ];
    for result in refused {
        let error = result.unwrap_err();
        assert_eq!(error.setting(), Setting::Step, "{error}");
    }
    assert_eq!(base().step(0).build().unwrap_err(), SpecError::StepZero);
    // A start past what the pad prints is the start's error, step or not.
    let past = base().step(10).start(10_000).build().unwrap_err();
    assert_eq!(past.setting(), Setting::Start);
}
