//! The spec's rules and formats.

use super::*;
use crate::{Setting, SpecError};

fn spec(prefix: &str, date: &str, pad: u32) -> Spec {
    Spec::builder("k")
        .prefix(prefix)
        .date(date)
        .pad(pad)
        .build()
        .unwrap()
}

#[test]
fn rejects_bad_specs_with_the_reason() {
    let err = |b: SpecBuilder| b.build().unwrap_err();
    assert_eq!(err(Spec::builder("")), SpecError::EmptyKey);
    assert_eq!(err(Spec::builder("k").pad(0)), SpecError::PadOutOfRange(0));
    assert_eq!(
        err(Spec::builder("k").pad(19)),
        SpecError::PadOutOfRange(19)
    );
    assert_eq!(err(Spec::builder("k").batch(0)), SpecError::BatchZero);
    assert_eq!(
        err(Spec::builder("k").date("%Y%Q%d")),
        SpecError::UnknownDateSpecifier {
            specifier: "%Q".into(),
            pattern: "%Y%Q%d".into()
        }
    );
    assert_eq!(
        err(Spec::builder("k").date("%Y%")),
        SpecError::UnknownDateSpecifier {
            specifier: "%".into(),
            pattern: "%Y%".into()
        }
    );
    assert_eq!(
        err(Spec::builder("k").date("%S%.3f")),
        SpecError::SubSecondDate("%.3f".into())
    );
    assert_eq!(
        err(Spec::builder("k").prefix("A B")),
        SpecError::PrefixNotPrintable("A B".into())
    );
    assert!(matches!(
        err(Spec::builder("x".repeat(192))),
        SpecError::KeyTooLong(192)
    ));
    assert_eq!(
        err(Spec::builder("k")
            .pad(2)
            .overflow(Overflow::Cycle { max: 100 })),
        SpecError::CycleMaxOutOfRange { max: 100, pad: 2 }
    );
    assert_eq!(
        err(Spec::builder("k").date("%-d").overflow(Overflow::Widen)),
        SpecError::WidenNeedsFixedDate
    );
    assert!(matches!(
        err(Spec::builder("k").series(["a", "bb"], 9)),
        SpecError::SeriesCodesUneven { .. }
    ));
    assert_eq!(
        err(Spec::builder("k").series(["a", "a"], 9)),
        SpecError::SeriesCodeTwice("a".into())
    );
    assert_eq!(
        err(Spec::builder("k").series(Vec::<String>::new(), 9)),
        SpecError::SeriesEmpty
    );
    assert!(matches!(
        err(Spec::builder("k").date("%A %B ".repeat(4))),
        SpecError::DateTooLong(_)
    ));
    let template = |b: SpecBuilder| {
        matches!(
            b.build(),
            Err(SpecError::TemplateMalformed(_) | SpecError::TemplateIncomplete(_))
        )
    };
    assert!(template(Spec::builder("k").format("{seq}")));
    assert!(template(
        Spec::builder("k").date("").format("{series}{seq}")
    ));
    assert!(template(Spec::builder("k").date("").format("{sequence}")));
}

#[test]
fn every_broken_rule_is_reported_with_its_setting() {
    let errors = Spec::builder(" k")
        .prefix("A B")
        .pad(0)
        .batch(0)
        .date("%Q")
        .build_reporting_all()
        .unwrap_err();
    let settings: Vec<Setting> = errors.iter().map(SpecError::setting).collect();
    assert_eq!(
        settings,
        [
            Setting::Key,
            Setting::Prefix,
            Setting::Pad,
            Setting::Batch,
            Setting::Date
        ]
    );
    let numeric = |b: SpecBuilder| b.numeric().build().unwrap_err();
    assert_eq!(
        numeric(Spec::builder("k").prefix("U")),
        SpecError::NumericWithPrefix
    );
    assert_eq!(
        numeric(Spec::builder("k").date("%Y%m%d%H%M").pad(9)),
        SpecError::NumericTooWide {
            date_digits: 12,
            pad: 9,
            check_digits: 0
        }
    );
    assert_eq!(
        numeric(Spec::builder("k").date("%y-%m")),
        SpecError::NumericDateNotDigits
    );
}

#[test]
fn numeric_form_needs_digits_only() {
    assert!(spec("", "%Y%m%d", 8).is_numeric());
    assert!(spec("", "", 18).is_numeric());
    assert!(spec("", "%y%m", 4).is_numeric());
    assert!(!spec("U", "%Y%m%d", 6).is_numeric());
    assert!(!spec("", "%Y-%m-%d", 6).is_numeric());
    assert!(!spec("", "%-d", 6).is_numeric());
    assert!(!spec("", "%b", 6).is_numeric());
    assert!(!spec("", "%Y%m%d", 11).is_numeric());
    assert_eq!(
        spec("", "%Y%m%d", 8).numeric("20250702", 1),
        Some(2025070200000001)
    );
    assert_eq!(spec("", "", 6).numeric("", 42), Some(42));
    let widen = |date: &str| {
        Spec::builder("k")
            .date(date)
            .pad(4)
            .overflow(Overflow::Widen)
            .build()
            .unwrap()
    };
    assert_eq!(widen("%Y").numeric("2025", 10_000), Some(202510000));
    assert!(
        !widen("%m%d").is_numeric(),
        "a leading zero of the date would be lost"
    );
}

#[test]
fn time_zones_move_midnight() {
    use chrono::TimeZone as _;
    let at = Utc.with_ymd_and_hms(2025, 7, 2, 17, 30, 0).unwrap();
    let utc = spec("", "%Y%m%d", 6);
    let east = Spec::builder("k")
        .time_zone(TimeZone::parse("+08:00").unwrap())
        .build()
        .unwrap();
    assert_eq!(utc.period_at(at), "20250702");
    assert_eq!(east.period_at(at), "20250703");
}

#[test]
fn the_memo_slot_is_its_first_owners_and_not_part_of_the_value() {
    let spec = spec("U", "", 4);
    spec.memo().keep(7, Box::new(1u8));
    spec.memo().keep(8, Box::new(2u8)); // the first owner keeps the slot
    assert_eq!(spec.memo().get(7).unwrap().downcast_ref::<u8>(), Some(&1));
    assert!(spec.memo().get(8).is_none());
    let clone = spec.clone();
    assert!(clone.memo().is_empty());
    assert_eq!(clone, spec);
}

#[test]
fn a_spec_read_back_from_its_shape_prints_and_reads_the_same_ids() {
    let specs = [
        Spec::builder("k").prefix("U").date("%Y%m%d").pad(6).build(),
        Spec::builder("k").date("").pad(4).build(),
        Spec::builder("k").date("%y%m").pad(8).numeric().build(),
        Spec::builder("k")
            .prefix("{odd}")
            .date("%Y-%m")
            .pad(3)
            .overflow(Overflow::Widen)
            .build(),
        Spec::builder("k")
            .prefix("L")
            .date("")
            .pad(2)
            .overflow(Overflow::Letters)
            .build(),
        Spec::builder("k")
            .date("%H")
            .pad(3)
            .overflow(Overflow::Cycle { max: 500 })
            .build(),
        Spec::builder("k")
            .format("T{date}-{series}{seq}")
            .date("%y")
            .pad(3)
            .series(["aa", "bb"], 999)
            .build(),
        Spec::builder("k")
            .prefix("INV")
            .format("{date}/{prefix}/{seq}")
            .date("%Y")
            .pad(5)
            .build(),
        // Scoped: the marker prints nothing and comes back.
        Spec::builder("k").date("%Y").pad(4).scoped().build(),
        Spec::builder("k")
            .format("No. {seq}")
            .date("")
            .scoped()
            .build(),
        // Steps: multiples, another remainder, widened, with a date.
        Spec::builder("k")
            .date("")
            .pad(4)
            .step(10)
            .start(10)
            .build(),
        Spec::builder("k").prefix("S").date("%Y").step(5).build(),
        Spec::builder("k")
            .date("%Y")
            .pad(2)
            .step(7)
            .start(3)
            .overflow(Overflow::Widen)
            .numeric()
            .build(),
    ];
    for spec in specs {
        let spec = spec.unwrap();
        let back = Spec::from_shape("k", spec.shape()).unwrap();
        assert_eq!(back.shape(), spec.shape());
        assert_eq!(back.is_numeric(), spec.is_numeric(), "{}", spec.shape());
        assert_eq!(back.is_scoped(), spec.is_scoped(), "{}", spec.shape());
        let period = spec.period_at(Utc::now());
        for counter in [1, 7, 999, 1000, 1001] {
            if counter > spec.capacity() {
                continue;
            }
            let id = spec.format(&period, counter);
            assert_eq!(back.format(&period, counter), id);
            // The prefix of a template may come back as literal text: compare what counts.
            let (a, b) = (back.parse(&id).unwrap(), spec.parse(&id).unwrap());
            assert_eq!((a.period, a.series, a.seq), (b.period, b.series, b.seq));
        }
    }
}

#[test]
fn an_unreadable_shape_is_an_error() {
    for shape in [
        "{seq:6",
        "U}{seq:6}",
        "{seq:x}",
        "{seq:6,sideways}",
        "{when:%Y}{seq:6}",
        "{date:%Y}",
    ] {
        assert!(Spec::from_shape("k", shape).is_err(), "{shape}");
    }
}

#[test]
fn the_i64_form_of_an_id_reads_back() {
    let undated = spec("", "", 6);
    assert_eq!(undated.parse_number(42).unwrap().seq, 42);
    let monthly = Spec::builder("k").date("%m%d").pad(4).build().unwrap();
    let id = monthly.numeric("0702", 15).unwrap();
    assert_eq!(id, 7020015);
    let parts = monthly.parse_number(id).unwrap();
    assert_eq!((parts.period.as_str(), parts.seq), ("0702", 15));
    assert!(spec("U", "", 6).parse_number(1).is_err());
    assert!(undated.parse_number(-1).is_err());
}

/// Without the features, the settings that need them are refused by name.
#[test]
fn a_setting_whose_feature_is_off_is_refused_by_name() {
    let check = Spec::builder("k").check(crate::Check::Damm).build();
    let obfuscated = Spec::builder("k").obfuscate([7; 32]).build();
    let off = |result: Result<Spec, SpecError>, feature: &str| match result {
        Err(e @ SpecError::FeatureOff { .. }) => {
            assert!(
                e.to_string().contains(&format!("`{feature}` feature")),
                "{e}"
            )
        }
        other => panic!("{feature}: {other:?}"),
    };
    if cfg!(feature = "check-characters") {
        assert!(check.is_ok());
    } else {
        off(check, "check-characters");
    }
    if cfg!(feature = "obfuscate") {
        assert!(obfuscated.is_ok());
    } else {
        off(obfuscated, "obfuscate");
    }
}

#[cfg(feature = "check-characters")]
mod check_characters;
mod printed_scope;
mod reset;
mod step;
