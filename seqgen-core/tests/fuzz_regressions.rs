//! Inputs the fuzz targets (`fuzz/`) found a panic or a broken promise with, each kept as the
//! test that failed before its fix.

use chrono::{TimeZone as _, Utc};
use diesel_seqgen_core::{Overflow, Spec, SpecError};

/// `parse_id`: the date pattern `]%Z]E` printed `]UTC]E`, which chrono cannot read back (its
/// `%Z` takes the rest of the text), so no ID of the spec parsed. A pattern whose dates do not
/// read back is refused when the spec is built.
#[test]
fn a_date_part_that_cannot_be_read_back_is_refused() {
    for pattern in ["]%Z]E", "%Z-%Y"] {
        let err = Spec::builder("k").date(pattern).build().unwrap_err();
        assert_eq!(err, SpecError::UnreadableDate(pattern.into()), "{pattern}");
    }
    // What it allows still reads back.
    let spec = Spec::builder("k").date("%Y-%b-%a").pad(3).build().unwrap();
    let at = Utc.with_ymd_and_hms(2026, 11, 25, 9, 0, 0).unwrap();
    let id = spec.format(&spec.period_at(at), 7);
    assert_eq!(spec.parse(&id).unwrap().seq, 7, "{id}");
}

/// `parse_id`: with `letters`, a counter of a digit and then a letter (`7z`) underflowed
/// (`attempt to subtract with overflow`) instead of being refused.
#[test]
fn a_lettered_counter_that_starts_with_a_digit_is_refused() {
    let spec = Spec::builder("k")
        .date("")
        .pad(2)
        .overflow(Overflow::Letters)
        .build()
        .unwrap();
    for id in ["7z", "7Z", "0A"] {
        assert!(spec.parse(id).is_err(), "{id}");
    }
    assert_eq!(spec.parse("A0").unwrap().seq, 100);
}

/// `parse_id`: `%l` (the hour, space-padded) followed by a digit printed ` 53` at 5 o'clock,
/// which reads back as hour 53. A pattern is tried on dates of one and two digits in every
/// field when the spec is built.
#[test]
fn a_date_part_that_reads_back_wrong_at_some_hours_is_refused() {
    let err = Spec::builder("k").date("4#%l3").build().unwrap_err();
    assert_eq!(err, SpecError::UnreadableDate("4#%l3".into()));
}

/// `build_spec`: a date pattern with a brace (`}`) ended the date's placeholder in the shape
/// recorded on the key, and a series code with `,` or `/` split the series' list, so the
/// command line could not read the shape back. Both are refused.
#[test]
fn braces_in_a_date_and_separators_in_series_codes_are_refused() {
    let err = Spec::builder("k").date("%Y}").build().unwrap_err();
    assert_eq!(err, SpecError::UnreadableDate("%Y}".into()));
    for code in ["a,", "a/", "{a", "a}"] {
        let err = Spec::builder("k")
            .date("")
            .pad(2)
            .format("{series}{seq}")
            .series([code, "bb"], 99)
            .build()
            .unwrap_err();
        assert_eq!(
            err,
            SpecError::SeriesCodeNotPrintable(code.into()),
            "{code}"
        );
    }
}

/// `parse_id` and `build_spec`: `%#z` is known to chrono's parser only; formatting it fails,
/// and building the spec panicked ("a Display implementation returned an error"). It is an
/// unknown specifier.
#[test]
fn a_specifier_chrono_cannot_format_is_unknown() {
    let err = Spec::builder("k").date("%Y%#z").build().unwrap_err();
    assert_eq!(
        err,
        SpecError::UnknownDateSpecifier {
            specifier: "%#z".into(),
            pattern: "%Y%#z".into()
        }
    );
}

/// `build_spec` (in CI's 30 s run): checking the start computed the capacity of a pad out of
/// range (21 digits) and indexed past the table of powers of ten. The pad is reported; the
/// start is checked only against a valid pad.
#[test]
fn a_start_beside_a_pad_out_of_range_is_no_panic() {
    let err = Spec::builder("k").pad(21).build().unwrap_err();
    assert_eq!(err, SpecError::PadOutOfRange(21));
    let err = Spec::builder("k").pad(21).start(5).build().unwrap_err();
    assert_eq!(err, SpecError::PadOutOfRange(21));
}
