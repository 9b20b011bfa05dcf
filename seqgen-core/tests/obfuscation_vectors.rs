//! Known answers for obfuscated numbers: for a few keys, periods, ranges and policies, the ID
//! number n is shown as, and the shape recorded on the key's row. IDs handed out years ago
//! must still parse to the same numbers and new ones must never repeat them, so any change to
//! the permutation (its rounds, its tweak, the fingerprint, cycle walking, the ranges) fails
//! here. Do not update these values: a new construction needs a new shape, beside this one.

use diesel_seqgen_core::{Check, Overflow, Spec};

const KEY_A: &[u8] = b"0f3a9c1e5b7d2f4a6c8e0b1d3f5a7c9e";
const KEY_B: &[u8] = b"seqgen known-answer key number 2";

/// The spec of each kind of range, obfuscated with `key`.
fn spec(kind: &str, key: &[u8]) -> Spec {
    let b = Spec::builder("vectors").prefix("K").date("%y%m");
    let b = match kind {
        "pad 3" => b.pad(3),
        "pad 4" => b.pad(4),
        "pad 6" => b.pad(6),
        "pad 9" => b.pad(9),
        "widen from pad 2" => b.pad(2).overflow(Overflow::Widen),
        "letters pad 3" => b.pad(3).overflow(Overflow::Letters),
        "cycle of 500" => b.pad(3).overflow(Overflow::Cycle { max: 500 }),
        "luhn pad 4" => b
            .pad(4)
            .format("{prefix}{date}{seq}{check}")
            .check(Check::Luhn),
        "series of 99" => b
            .format("{prefix}{date}{series}{seq}")
            .pad(2)
            .series(["aa", "bb"], 99),
        other => panic!("{other}"),
    };
    b.obfuscate(key).build().unwrap()
}

/// (kind, key, period, number, ID).
const VECTORS: &[(&str, &[u8], &str, u64, &str)] = &[
    ("pad 3", KEY_A, "2611", 1, "K2611574"),
    ("pad 3", KEY_A, "2611", 2, "K2611159"),
    ("pad 3", KEY_A, "2611", 3, "K2611038"),
    ("pad 3", KEY_A, "2611", 499, "K2611612"),
    ("pad 3", KEY_A, "2611", 999, "K2611515"),
    ("pad 3", KEY_A, "2612", 1, "K2612331"),
    ("pad 3", KEY_A, "2612", 2, "K2612372"),
    ("pad 3", KEY_A, "2612", 3, "K2612582"),
    ("pad 3", KEY_A, "2612", 499, "K2612975"),
    ("pad 3", KEY_A, "2612", 999, "K2612969"),
    ("pad 3", KEY_B, "2611", 1, "K2611465"),
    ("pad 3", KEY_B, "2611", 2, "K2611409"),
    ("pad 3", KEY_B, "2611", 3, "K2611083"),
    ("pad 3", KEY_B, "2611", 499, "K2611185"),
    ("pad 3", KEY_B, "2611", 999, "K2611784"),
    ("pad 3", KEY_B, "2612", 1, "K2612231"),
    ("pad 3", KEY_B, "2612", 2, "K2612461"),
    ("pad 3", KEY_B, "2612", 3, "K2612647"),
    ("pad 3", KEY_B, "2612", 499, "K2612551"),
    ("pad 3", KEY_B, "2612", 999, "K2612283"),
    ("pad 4", KEY_A, "2611", 1, "K26117678"),
    ("pad 4", KEY_A, "2611", 2, "K26110516"),
    ("pad 4", KEY_A, "2611", 3, "K26116602"),
    ("pad 4", KEY_A, "2611", 4999, "K26119878"),
    ("pad 4", KEY_A, "2611", 9999, "K26111086"),
    ("pad 4", KEY_A, "2612", 1, "K26127446"),
    ("pad 4", KEY_A, "2612", 2, "K26122776"),
    ("pad 4", KEY_A, "2612", 3, "K26122029"),
    ("pad 4", KEY_A, "2612", 4999, "K26127592"),
    ("pad 4", KEY_A, "2612", 9999, "K26123749"),
    ("pad 4", KEY_B, "2611", 1, "K26114759"),
    ("pad 4", KEY_B, "2611", 2, "K26117114"),
    ("pad 4", KEY_B, "2611", 3, "K26112490"),
    ("pad 4", KEY_B, "2611", 4999, "K26117362"),
    ("pad 4", KEY_B, "2611", 9999, "K26119187"),
    ("pad 4", KEY_B, "2612", 1, "K26127806"),
    ("pad 4", KEY_B, "2612", 2, "K26123737"),
    ("pad 4", KEY_B, "2612", 3, "K26128146"),
    ("pad 4", KEY_B, "2612", 4999, "K26128910"),
    ("pad 4", KEY_B, "2612", 9999, "K26120034"),
    ("pad 6", KEY_A, "2611", 1, "K2611082381"),
    ("pad 6", KEY_A, "2611", 2, "K2611967702"),
    ("pad 6", KEY_A, "2611", 3, "K2611364582"),
    ("pad 6", KEY_A, "2611", 499999, "K2611182027"),
    ("pad 6", KEY_A, "2611", 999999, "K2611871502"),
    ("pad 6", KEY_A, "2612", 1, "K2612679558"),
    ("pad 6", KEY_A, "2612", 2, "K2612465368"),
    ("pad 6", KEY_A, "2612", 3, "K2612714299"),
    ("pad 6", KEY_A, "2612", 499999, "K2612693852"),
    ("pad 6", KEY_A, "2612", 999999, "K2612071609"),
    ("pad 6", KEY_B, "2611", 1, "K2611102211"),
    ("pad 6", KEY_B, "2611", 2, "K2611579684"),
    ("pad 6", KEY_B, "2611", 3, "K2611124877"),
    ("pad 6", KEY_B, "2611", 499999, "K2611200842"),
    ("pad 6", KEY_B, "2611", 999999, "K2611125740"),
    ("pad 6", KEY_B, "2612", 1, "K2612207378"),
    ("pad 6", KEY_B, "2612", 2, "K2612491861"),
    ("pad 6", KEY_B, "2612", 3, "K2612463344"),
    ("pad 6", KEY_B, "2612", 499999, "K2612632569"),
    ("pad 6", KEY_B, "2612", 999999, "K2612645378"),
    ("pad 9", KEY_A, "2611", 1, "K2611299212361"),
    ("pad 9", KEY_A, "2611", 2, "K2611622943678"),
    ("pad 9", KEY_A, "2611", 3, "K2611518517313"),
    ("pad 9", KEY_A, "2611", 499999999, "K2611410202786"),
    ("pad 9", KEY_A, "2611", 999999999, "K2611336767814"),
    ("pad 9", KEY_A, "2612", 1, "K2612602632822"),
    ("pad 9", KEY_A, "2612", 2, "K2612981305602"),
    ("pad 9", KEY_A, "2612", 3, "K2612614279710"),
    ("pad 9", KEY_A, "2612", 499999999, "K2612742501565"),
    ("pad 9", KEY_A, "2612", 999999999, "K2612846507485"),
    ("pad 9", KEY_B, "2611", 1, "K2611828901956"),
    ("pad 9", KEY_B, "2611", 2, "K2611385743721"),
    ("pad 9", KEY_B, "2611", 3, "K2611865469574"),
    ("pad 9", KEY_B, "2611", 499999999, "K2611908930541"),
    ("pad 9", KEY_B, "2611", 999999999, "K2611324520139"),
    ("pad 9", KEY_B, "2612", 1, "K2612039413238"),
    ("pad 9", KEY_B, "2612", 2, "K2612914373059"),
    ("pad 9", KEY_B, "2612", 3, "K2612100146330"),
    ("pad 9", KEY_B, "2612", 499999999, "K2612084035236"),
    ("pad 9", KEY_B, "2612", 999999999, "K2612871133813"),
    ("widen from pad 2", KEY_A, "2611", 1, "K261108"),
    ("widen from pad 2", KEY_A, "2611", 99, "K261167"),
    ("widen from pad 2", KEY_A, "2611", 100, "K2611661"),
    ("widen from pad 2", KEY_A, "2611", 1234, "K26119499"),
    ("widen from pad 2", KEY_A, "2611", 99999, "K261154998"),
    ("widen from pad 2", KEY_A, "2611", 100000, "K2611833313"),
    ("widen from pad 2", KEY_A, "2612", 1, "K261283"),
    ("widen from pad 2", KEY_A, "2612", 99, "K261237"),
    ("widen from pad 2", KEY_A, "2612", 100, "K2612134"),
    ("widen from pad 2", KEY_A, "2612", 1234, "K26129536"),
    ("widen from pad 2", KEY_A, "2612", 99999, "K261280998"),
    ("widen from pad 2", KEY_A, "2612", 100000, "K2612198100"),
    ("widen from pad 2", KEY_B, "2611", 1, "K261169"),
    ("widen from pad 2", KEY_B, "2611", 99, "K261133"),
    ("widen from pad 2", KEY_B, "2611", 100, "K2611845"),
    ("widen from pad 2", KEY_B, "2611", 1234, "K26115059"),
    ("widen from pad 2", KEY_B, "2611", 99999, "K261159981"),
    ("widen from pad 2", KEY_B, "2611", 100000, "K2611951963"),
    ("widen from pad 2", KEY_B, "2612", 1, "K261250"),
    ("widen from pad 2", KEY_B, "2612", 99, "K261211"),
    ("widen from pad 2", KEY_B, "2612", 100, "K2612806"),
    ("widen from pad 2", KEY_B, "2612", 1234, "K26126487"),
    ("widen from pad 2", KEY_B, "2612", 99999, "K261257403"),
    ("widen from pad 2", KEY_B, "2612", 100000, "K2612668252"),
    ("letters pad 3", KEY_A, "2611", 1, "K2611574"),
    ("letters pad 3", KEY_A, "2611", 999, "K2611515"),
    ("letters pad 3", KEY_A, "2611", 1000, "K2611J37"),
    ("letters pad 3", KEY_A, "2611", 3885, "K2611N09"),
    ("letters pad 3", KEY_A, "2612", 1, "K2612331"),
    ("letters pad 3", KEY_A, "2612", 999, "K2612969"),
    ("letters pad 3", KEY_A, "2612", 1000, "K2612J05"),
    ("letters pad 3", KEY_A, "2612", 3885, "K2612C44"),
    ("letters pad 3", KEY_B, "2611", 1, "K2611465"),
    ("letters pad 3", KEY_B, "2611", 999, "K2611784"),
    ("letters pad 3", KEY_B, "2611", 1000, "K2611ZE7"),
    ("letters pad 3", KEY_B, "2611", 3885, "K2611K45"),
    ("letters pad 3", KEY_B, "2612", 1, "K2612231"),
    ("letters pad 3", KEY_B, "2612", 999, "K2612283"),
    ("letters pad 3", KEY_B, "2612", 1000, "K2612A52"),
    ("letters pad 3", KEY_B, "2612", 3885, "K2612A80"),
    ("cycle of 500", KEY_A, "2611", 1, "K2611272"),
    ("cycle of 500", KEY_A, "2611", 500, "K2611074"),
    ("cycle of 500", KEY_A, "2611", 501, "K2611272"),
    ("cycle of 500", KEY_A, "2611", 1234, "K2611359"),
    ("cycle of 500", KEY_A, "2612", 1, "K2612235"),
    ("cycle of 500", KEY_A, "2612", 500, "K2612083"),
    ("cycle of 500", KEY_A, "2612", 501, "K2612235"),
    ("cycle of 500", KEY_A, "2612", 1234, "K2612059"),
    ("cycle of 500", KEY_B, "2611", 1, "K2611148"),
    ("cycle of 500", KEY_B, "2611", 500, "K2611161"),
    ("cycle of 500", KEY_B, "2611", 501, "K2611148"),
    ("cycle of 500", KEY_B, "2611", 1234, "K2611139"),
    ("cycle of 500", KEY_B, "2612", 1, "K2612040"),
    ("cycle of 500", KEY_B, "2612", 500, "K2612200"),
    ("cycle of 500", KEY_B, "2612", 501, "K2612040"),
    ("cycle of 500", KEY_B, "2612", 1234, "K2612226"),
    ("luhn pad 4", KEY_A, "2611", 1, "K261176788"),
    ("luhn pad 4", KEY_A, "2611", 2, "K261105167"),
    ("luhn pad 4", KEY_A, "2611", 3, "K261166029"),
    ("luhn pad 4", KEY_A, "2611", 4999, "K261198782"),
    ("luhn pad 4", KEY_A, "2611", 9999, "K261110860"),
    ("luhn pad 4", KEY_A, "2612", 1, "K261274468"),
    ("luhn pad 4", KEY_A, "2612", 2, "K261227763"),
    ("luhn pad 4", KEY_A, "2612", 3, "K261220297"),
    ("luhn pad 4", KEY_A, "2612", 4999, "K261275929"),
    ("luhn pad 4", KEY_A, "2612", 9999, "K261237499"),
    ("luhn pad 4", KEY_B, "2611", 1, "K261147599"),
    ("luhn pad 4", KEY_B, "2611", 2, "K261171144"),
    ("luhn pad 4", KEY_B, "2611", 3, "K261124903"),
    ("luhn pad 4", KEY_B, "2611", 4999, "K261173629"),
    ("luhn pad 4", KEY_B, "2611", 9999, "K261191878"),
    ("luhn pad 4", KEY_B, "2612", 1, "K261278063"),
    ("luhn pad 4", KEY_B, "2612", 2, "K261237374"),
    ("luhn pad 4", KEY_B, "2612", 3, "K261281463"),
    ("luhn pad 4", KEY_B, "2612", 4999, "K261289102"),
    ("luhn pad 4", KEY_B, "2612", 9999, "K261200349"),
    ("series of 99", KEY_A, "2611", 1, "K2611aa72"),
    ("series of 99", KEY_A, "2611", 2, "K2611bb26"),
    ("series of 99", KEY_A, "2611", 3, "K2611aa68"),
    ("series of 99", KEY_A, "2611", 99, "K2611bb41"),
    ("series of 99", KEY_A, "2611", 198, "K2611aa29"),
    ("series of 99", KEY_A, "2612", 1, "K2612bb67"),
    ("series of 99", KEY_A, "2612", 2, "K2612aa88"),
    ("series of 99", KEY_A, "2612", 3, "K2612aa83"),
    ("series of 99", KEY_A, "2612", 99, "K2612bb81"),
    ("series of 99", KEY_A, "2612", 198, "K2612bb44"),
    ("series of 99", KEY_B, "2611", 1, "K2611bb32"),
    ("series of 99", KEY_B, "2611", 2, "K2611aa17"),
    ("series of 99", KEY_B, "2611", 3, "K2611aa49"),
    ("series of 99", KEY_B, "2611", 99, "K2611aa95"),
    ("series of 99", KEY_B, "2611", 198, "K2611aa89"),
    ("series of 99", KEY_B, "2612", 1, "K2612bb92"),
    ("series of 99", KEY_B, "2612", 2, "K2612aa22"),
    ("series of 99", KEY_B, "2612", 3, "K2612bb37"),
    ("series of 99", KEY_B, "2612", 99, "K2612bb28"),
    ("series of 99", KEY_B, "2612", 198, "K2612bb20"),
];

/// (kind, key, shape).
const SHAPES: &[(&str, &[u8], &str)] = &[
    ("pad 3", KEY_A, "K{date:%y%m}{seq:3,obfuscated=59431c8a}"),
    ("pad 3", KEY_B, "K{date:%y%m}{seq:3,obfuscated=8212a8e4}"),
    ("pad 4", KEY_A, "K{date:%y%m}{seq:4,obfuscated=59431c8a}"),
    ("pad 4", KEY_B, "K{date:%y%m}{seq:4,obfuscated=8212a8e4}"),
    ("pad 6", KEY_A, "K{date:%y%m}{seq:6,obfuscated=59431c8a}"),
    ("pad 6", KEY_B, "K{date:%y%m}{seq:6,obfuscated=8212a8e4}"),
    ("pad 9", KEY_A, "K{date:%y%m}{seq:9,obfuscated=59431c8a}"),
    ("pad 9", KEY_B, "K{date:%y%m}{seq:9,obfuscated=8212a8e4}"),
    (
        "widen from pad 2",
        KEY_A,
        "K{date:%y%m}{seq:2,widen,obfuscated=59431c8a}",
    ),
    (
        "widen from pad 2",
        KEY_B,
        "K{date:%y%m}{seq:2,widen,obfuscated=8212a8e4}",
    ),
    (
        "letters pad 3",
        KEY_A,
        "K{date:%y%m}{seq:3,letters,obfuscated=59431c8a}",
    ),
    (
        "letters pad 3",
        KEY_B,
        "K{date:%y%m}{seq:3,letters,obfuscated=8212a8e4}",
    ),
    (
        "cycle of 500",
        KEY_A,
        "K{date:%y%m}{seq:3,cycle=500,obfuscated=59431c8a}",
    ),
    (
        "cycle of 500",
        KEY_B,
        "K{date:%y%m}{seq:3,cycle=500,obfuscated=8212a8e4}",
    ),
    (
        "luhn pad 4",
        KEY_A,
        "K{date:%y%m}{seq:4,obfuscated=59431c8a}{check:luhn}",
    ),
    (
        "luhn pad 4",
        KEY_B,
        "K{date:%y%m}{seq:4,obfuscated=8212a8e4}{check:luhn}",
    ),
    (
        "series of 99",
        KEY_A,
        "K{date:%y%m}{series:aa,bb/99}{seq:2,obfuscated=59431c8a}",
    ),
    (
        "series of 99",
        KEY_B,
        "K{date:%y%m}{series:aa,bb/99}{seq:2,obfuscated=8212a8e4}",
    ),
];

#[test]
fn obfuscated_ids_are_what_they_always_were() {
    for &(kind, key, period, n, id) in VECTORS {
        let spec = spec(kind, key);
        assert_eq!(
            spec.format(period, n),
            id,
            "{kind}, period {period}, number {n}"
        );
        let parts = spec.parse(id).unwrap();
        // A cycle's IDs repeat: they show where in its cycle a number is, not the number.
        let expected = (kind != "cycle of 500").then_some(n);
        assert_eq!(spec.counter_of(&parts), expected, "{kind}: {id}");
    }
}

#[test]
fn obfuscated_shapes_are_what_they_always_were() {
    for &(kind, key, shape) in SHAPES {
        assert_eq!(spec(kind, key).shape(), shape, "{kind}");
    }
}
