//! Obfuscated numbers over whole small periods, with every policy: distinct, the same width
//! as the plain IDs, parsed back to their numbers, and not in order.

use diesel_seqgen_core::{Check, Overflow, Spec, SpecBuilder, SpecError};

const KEY: &[u8] = b"a test key that is 32 bytes long";

/// Formats numbers `1..=last` of `period` with `builder` obfuscated, and checks them.
fn whole_period(builder: SpecBuilder, period: &str, last: u64) -> Vec<String> {
    let plain = builder.clone().build().unwrap();
    let spec = builder.obfuscate(KEY).build().unwrap();
    let ids: Vec<String> = (1..=last).map(|n| spec.format(period, n)).collect();
    let mut distinct = ids.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        ids.len(),
        "repeated IDs in {}",
        spec.shape()
    );
    for (n, id) in (1..=last).zip(&ids) {
        assert_eq!(
            id.len(),
            plain.format(period, n).len(),
            "{id} vs {}",
            plain.format(period, n)
        );
        let parts = spec.parse(id).unwrap();
        assert_eq!(parts.period, period);
        assert_eq!(spec.counter_of(&parts), Some(n), "{id}");
    }
    let in_order = ids.windows(2).filter(|w| w[0] < w[1]).count();
    assert!(
        in_order < ids.len() * 3 / 4,
        "{in_order} of {} in order",
        ids.len()
    );
    ids
}

#[test]
fn every_number_of_a_pad_3_period() {
    let ids = whole_period(
        Spec::builder("orders").prefix("ORD").date("%y%m").pad(3),
        "2611",
        999,
    );
    println!("pad 3: 999 IDs distinct, e.g. {:?}", &ids[..5]);
    // The next period permutes differently.
    let spec = Spec::builder("orders")
        .prefix("ORD")
        .date("%y%m")
        .pad(3)
        .obfuscate(KEY)
        .build()
        .unwrap();
    assert_ne!(spec.format("2611", 1)[7..], spec.format("2612", 1)[7..]);
}

#[test]
fn with_a_check_character_scopes_and_i64_ids() {
    whole_period(
        Spec::builder("inv").date("%Y").pad(3).check(Check::Luhn),
        "2026",
        999,
    );
    whole_period(Spec::builder("lines").date("").pad(2).scoped(), "", 99);
    let spec = Spec::builder("n")
        .date("%y")
        .pad(3)
        .numeric()
        .obfuscate(KEY)
        .build()
        .unwrap();
    let ids: Vec<i64> = (1..=999).map(|n| spec.numeric("26", n).unwrap()).collect();
    for (n, id) in (1..=999).zip(&ids) {
        assert_eq!(id.to_string(), spec.format("26", n));
        assert_eq!(spec.counter_of(&spec.parse_number(*id).unwrap()), Some(n));
    }
}

#[test]
fn past_the_pad_with_every_overflow_policy() {
    // widen: 1..=99 among themselves, then 100..=999 among themselves.
    let ids = whole_period(
        Spec::builder("w").date("").pad(2).overflow(Overflow::Widen),
        "",
        999,
    );
    assert!(ids[..99].iter().all(|id| id.len() == 2) && ids[99..].iter().all(|id| id.len() == 3));
    let letters = Spec::builder("l")
        .date("")
        .pad(1)
        .overflow(Overflow::Letters)
        .build()
        .unwrap();
    whole_period(
        Spec::builder("l")
            .date("")
            .pad(1)
            .overflow(Overflow::Letters),
        "",
        letters.capacity(),
    );
    whole_period(
        Spec::builder("s").date("").pad(2).series(["A", "B"], 99),
        "",
        198,
    );
    // cycle: IDs repeat by design; each cycle is the same permutation of 1..=max.
    let cycle = Spec::builder("c")
        .date("")
        .pad(2)
        .overflow(Overflow::Cycle { max: 50 })
        .obfuscate(KEY)
        .build()
        .unwrap();
    let first: Vec<String> = (1..=50).map(|n| cycle.format("", n)).collect();
    let second: Vec<String> = (51..=100).map(|n| cycle.format("", n)).collect();
    assert_eq!(first, second);
    let mut sorted = first.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 50);
}

#[test]
fn a_wrong_or_missing_key_is_an_error_never_other_ids() {
    let spec = |key: &[u8]| Spec::builder("o").date("").pad(4).obfuscate(key).build();
    let (a, b) = (
        spec(KEY).unwrap(),
        spec(b"another key that is 32 bytes lon").unwrap(),
    );
    assert_ne!(
        a.shape(),
        b.shape(),
        "the shape names the key, so db_key refuses the other"
    );
    assert!(a.shape().contains(",obfuscated="), "{}", a.shape());
    assert!(matches!(spec(b"short"), Err(SpecError::ObfuscationKey(_))));
    let missing = Spec::builder("o")
        .obfuscate_from_env("SEQGEN_TEST_NO_SUCH_VAR")
        .build()
        .unwrap_err();
    assert!(
        missing.to_string().contains("SEQGEN_TEST_NO_SUCH_VAR"),
        "{missing}"
    );
    let read_back = Spec::from_shape("o", a.shape()).unwrap_err();
    assert!(read_back.to_string().contains("obfuscated"), "{read_back}");
    assert!(!a.is_plain(), "SQL cannot print an obfuscated number");
}
