//! Check characters on a spec (the `check-characters` feature).

use super::*;

#[test]
fn a_check_covers_only_specs_whose_changing_parts_are_digits() {
    use crate::Check;
    let refused = |builder: SpecBuilder| {
        let err = builder.check(Check::Luhn).build().unwrap_err();
        assert_eq!(err.setting(), Setting::Check, "{err}");
    };
    refused(Spec::builder("k").date("").overflow(Overflow::Letters));
    refused(Spec::builder("k").date("").series(["aa", "bb"], 9).pad(1));
    refused(Spec::builder("k").date("%b%Y"));
    refused(Spec::builder("k").date("%-d"));
    assert!(Spec::builder("k")
        .date("")
        .series(["10", "20"], 9)
        .pad(1)
        .check(Check::Luhn)
        .build()
        .is_ok());
    assert!(Spec::builder("k")
        .date("%Y-%m")
        .check(Check::Damm)
        .build()
        .is_ok());
    // A template must show the check it computes, and compute the check it shows.
    let err = Spec::builder("k")
        .format("{date}{seq}")
        .check(Check::Damm)
        .build()
        .unwrap_err();
    assert_eq!(err.setting(), Setting::Format);
    let err = Spec::builder("k")
        .format("{date}{seq}{check}")
        .build()
        .unwrap_err();
    assert_eq!(err.setting(), Setting::Format);
    // Its digits count toward the 18 of an i64.
    let err = Spec::builder("k")
        .date("%Y%m%d")
        .pad(12)
        .check(Check::Iso7064Mod97_10)
        .numeric()
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        SpecError::NumericTooWide {
            date_digits: 8,
            pad: 12,
            check_digits: 2
        }
    );
}

#[test]
fn an_id_with_a_check_reads_back_and_a_typo_does_not() {
    use crate::Check;
    let spec = Spec::builder("k")
        .prefix("INV")
        .date("%Y")
        .pad(6)
        .check(Check::Damm)
        .build()
        .unwrap();
    let id = spec.format("2026", 41);
    assert_eq!(id.len(), "INV2026000041".len() + 1);
    assert_eq!(spec.parse(&id).unwrap().seq, 41);
    // The README's example.
    let orders = Spec::builder("o")
        .prefix("ORD")
        .date("%y%m")
        .pad(4)
        .check(Check::Damm)
        .build()
        .unwrap();
    assert_eq!(orders.format("2511", 41), "ORD251100414");
    assert!(!orders.verify("ORD251100144"));
    let typo = id.replace("41", "47");
    let err = spec.parse(&typo).unwrap_err().to_string();
    assert!(err.contains("check"), "{err}");
    // The i64 form carries the same check, and reads back.
    let numeric = Spec::builder("k")
        .date("%y")
        .pad(4)
        .check(Check::Luhn)
        .build()
        .unwrap();
    let n = numeric.numeric("26", 15).unwrap();
    assert_eq!(n.to_string(), numeric.format("26", 15));
    assert_eq!(numeric.parse_number(n).unwrap().seq, 15);
    assert!(numeric.parse_number(n + 1).is_err());
    // A date with a leading zero, which the number drops: the check does not change.
    for check in [Check::Luhn, Check::Damm, Check::Iso7064Mod97_10] {
        let july = Spec::builder("k")
            .date("%m")
            .pad(3)
            .check(check)
            .build()
            .unwrap();
        let n = july.numeric("07", 5).unwrap();
        assert_eq!(
            format!("{n:0>width$}", width = 5 + check.width() as usize),
            july.format("07", 5)
        );
        assert_eq!(july.parse_number(n).unwrap().period, "07");
    }
}
