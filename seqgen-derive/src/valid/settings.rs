//! The attribute values whose rules are the derive's own, not the spec's: names of a check
//! scheme, a time zone, an environment variable.

use diesel_seqgen_core::{Check, Setting, SpecError, TimeZone};
use syn::LitStr;

use crate::errors::Errors;

/// The `check` scheme, if one is named; an unknown name is an error at its token.
pub(super) fn check_scheme(lit: Option<&LitStr>, errors: &mut Errors) -> Option<Check> {
    let lit = lit?;
    let check = Check::parse(&lit.value());
    if check.is_none() {
        errors.at(
            lit,
            "`check` must be \"luhn\", \"damm\" or \"iso7064-mod97-10\"",
        );
    }
    check
}

pub(super) fn time_zone(lit: Option<&LitStr>, errors: &mut Errors) -> Option<Option<String>> {
    let Some(lit) = lit else { return Some(None) };
    if TimeZone::parse(&lit.value()).is_none() {
        let message = if cfg!(feature = "tz") {
            "`tz` must be \"utc\", \"local\", a fixed offset like \"+08:00\" or a zone of the IANA database like \"Europe/Paris\"".to_owned()
        } else {
            format!(
                "`tz = {:?}` needs the `tz` feature (zones of the IANA database): `diesel-seqgen = {{ version = \"0.2\", features = [\"tz\", ...] }}`; without it, `tz` is \"utc\", \"local\" or a fixed offset like \"+08:00\"",
                lit.value()
            )
        };
        errors.at(lit, message);
        return None;
    }
    Some(Some(lit.value()))
}

/// The environment variable `obfuscate` names, if it reads as one: never the key itself.
pub(super) fn env_var(lit: &LitStr, errors: &mut Errors) -> Option<String> {
    let var = lit.value();
    let name_like = var.len() <= 64
        && var.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !name_like {
        errors.at(
            lit,
            "`obfuscate` names the environment variable that holds the key at run time, like `obfuscate = \"ORDER_NUMBER_KEY\"`: never the key itself, which does not belong in source code",
        );
    } else if cfg!(not(feature = "obfuscate")) {
        // The spec built here has no key (it is read at run time), so the spec's own rule
        // would not see the setting: the same error, said here.
        let off = SpecError::FeatureOff {
            setting: Setting::Obfuscate,
            feature: "obfuscate",
        };
        errors.at(lit, off.to_string());
        return None;
    }
    name_like.then_some(var)
}
