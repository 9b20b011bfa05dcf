//! `Spec::from_shape` reads what an operator may have typed into `db_key.shape`: anything is an
//! answer (a spec or an error), never a panic, and a spec read back prints its own shape.

use diesel_seqgen_core::Spec;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_text_reads_as_a_spec_or_an_error(shape in "(\\{|\\}|[a-z:%,=/0-9]|seq|date|check|series|widen|luhn|Y|m){0,24}") {
        if let Ok(spec) = Spec::from_shape("k", &shape) {
            let again = Spec::from_shape("k", spec.shape()).unwrap();
            prop_assert_eq!(again.shape(), spec.shape());
        }
    }

    #[test]
    fn any_unicode_reads_as_a_spec_or_an_error(shape in "\\PC{0,40}") {
        let _ = Spec::from_shape("k", &shape);
    }
}
