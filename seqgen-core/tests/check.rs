//! Check characters catch what they promise: every single-digit error, and every swap of two
//! adjacent digits (Luhn: but `09` ↔ `90`), wherever in the ID it happens.

use diesel_seqgen_core::{Check, Spec};
use proptest::prelude::*;

fn scheme() -> impl Strategy<Value = Check> {
    prop_oneof![
        Just(Check::Luhn),
        Just(Check::Damm),
        Just(Check::Iso7064Mod97_10)
    ]
}

/// A spec with a check, and an ID of it.
fn id_with_check() -> impl Strategy<Value = (Spec, String)> {
    (
        scheme(),
        prop_oneof![Just(""), Just("INV"), Just("R-")],
        prop_oneof![Just(""), Just("%Y"), Just("%y%m"), Just("%Y-%m-%d")],
        1u32..=8,
        any::<u64>(),
        0i64..4_000_000_000,
    )
        .prop_map(|(check, prefix, date, pad, counter, secs)| {
            let spec = Spec::builder("k")
                .prefix(prefix)
                .date(date)
                .pad(pad)
                .check(check)
                .build()
                .unwrap();
            let now = chrono::DateTime::from_timestamp(secs, 0).unwrap();
            let id = spec.format(&spec.period_at(now), 1 + counter % spec.capacity());
            (spec, id)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_single_digit_error_is_caught((spec, id) in id_with_check()) {
        prop_assert!(spec.verify(&id), "{id} does not verify");
        for (i, c) in id.char_indices().filter(|(_, c)| c.is_ascii_digit()) {
            for d in ('0'..='9').filter(|&d| d != c) {
                let mut typo = id.clone();
                typo.replace_range(i..i + 1, &d.to_string());
                prop_assert!(!spec.verify(&typo), "{id} -> {typo} passes ({:?})", spec.check());
            }
        }
    }

    #[test]
    fn every_adjacent_swap_is_caught((spec, id) in id_with_check()) {
        let bytes = id.as_bytes();
        for i in 0..bytes.len().saturating_sub(1) {
            let (a, b) = (bytes[i], bytes[i + 1]);
            if !a.is_ascii_digit() || !b.is_ascii_digit() || a == b {
                continue;
            }
            if spec.check() == Some(Check::Luhn) && matches!((a, b), (b'0', b'9') | (b'9', b'0')) {
                continue; // the one swap Luhn cannot see
            }
            let mut swapped = bytes.to_vec();
            swapped.swap(i, i + 1);
            let swapped = String::from_utf8(swapped).unwrap();
            prop_assert!(!spec.verify(&swapped), "{id} -> {swapped} passes ({:?})", spec.check());
        }
    }
}

/// Without a check, a swap in the counter goes unseen: what the property above guards.
#[test]
fn without_a_check_a_swap_passes() {
    let spec = Spec::builder("k")
        .prefix("INV")
        .date("")
        .pad(6)
        .build()
        .unwrap();
    assert!(spec.verify("INV000041") && spec.verify("INV000014"));
}
