//! What the attribute values mean: one function per rule, every violation recorded with the
//! token it comes from. The runtime's `Spec::build` enforces the same rules; here they become
//! compile errors.

use std::collections::HashMap;

use proc_macro2::Span;
use quote::ToTokens;
use syn::{Ident, LitInt, LitStr};

use crate::ast::{field_type, FieldType, IdField, Model};
use crate::date_pattern::{check_date_pattern, parse_time_zone, DatePatternError, DateShape};
use crate::errors::Errors;
use crate::template::{check_template, parse_template};

const DEFAULT_DATE: &str = "%Y%m%d";
const DEFAULT_PAD: u32 = 6;
const DEFAULT_BATCH: u32 = 100;
const MAX_PAD: u32 = 18;
const MAX_KEY_LEN: usize = 191;

/// A field whose spec passed every rule.
pub(crate) struct ValidField<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) ty: FieldType,
    pub(crate) key: String,
    pub(crate) prefix: String,
    pub(crate) date: String,
    pub(crate) pad: u32,
    pub(crate) batch: u32,
    pub(crate) mode: Mode,
    pub(crate) overflow: Overflow,
    pub(crate) series: Option<(Vec<String>, u64)>,
    pub(crate) format: Option<String>,
    pub(crate) tz: Option<String>,
}

/// The overflow policy a field asked for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overflow {
    Error,
    Widen,
    Letters,
    Cycle(u64),
}

/// The numbering mode a field asked for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Batched,
    Gapless,
    GaplessNowait,
}

/// Checks every rule and returns the fields that passed, sorted by key: IDs are taken in
/// that order, so writers that lock several keys always lock them in the same order.
pub(crate) fn check<'a>(model: &Model<'a>, errors: &mut Errors) -> Vec<ValidField<'a>> {
    has_id_fields(model, errors);
    let mut fields: Vec<_> = model
        .fields
        .iter()
        .filter_map(|field| check_field(model, field, errors))
        .collect();
    keys_are_unique(model, &fields, errors);
    fields.sort_by(|a, b| a.key.cmp(&b.key));
    fields
}

fn has_id_fields(model: &Model<'_>, errors: &mut Errors) {
    if model.fields.is_empty() {
        errors.at(
            &model.input.ident,
            "#[derive(DistributedId)] needs at least one field marked `#[distributed_id(...)]`",
        );
    }
}

fn check_field<'a>(
    model: &Model<'a>,
    field: &IdField<'a>,
    errors: &mut Errors,
) -> Option<ValidField<'a>> {
    let ty = supported_type(field, errors);
    let pad = pad(field.attr.pad.as_ref(), errors);
    let batch = batch(field.attr.batch.as_ref(), errors);
    let (date, shape) = date(field.attr.date.as_ref(), errors);
    let prefix = prefix(field.attr.prefix.as_ref(), errors);
    let key = key(model, field.attr.key.as_ref(), errors);
    let mode = mode(field, errors);
    let tz = time_zone(field.attr.tz.as_ref(), errors);
    let (ty, pad, batch, date, shape, prefix, key, mode, tz) =
        (ty?, pad?, batch?, date?, shape?, prefix?, key?, mode?, tz?);
    let overflow = overflow(field, pad, shape, errors);
    let series = series(field, errors);
    let (overflow, series) = (overflow?, series?);
    let format = format(field, &prefix, &date, series.is_some(), errors)?;
    if matches!(ty, FieldType::Number | FieldType::OptionalNumber) {
        fits_an_i64(field, &prefix, shape, pad, overflow, errors)?;
    }
    Some(ValidField {
        ident: field.ident,
        ty,
        key,
        prefix,
        date,
        pad,
        batch,
        mode,
        overflow,
        series,
        format,
        tz,
    })
}

fn time_zone(lit: Option<&LitStr>, errors: &mut Errors) -> Option<Option<String>> {
    let Some(lit) = lit else { return Some(None) };
    if parse_time_zone(&lit.value()).is_none() {
        errors.at(
            lit,
            "`tz` must be \"utc\", \"local\" or a fixed offset like \"+08:00\"",
        );
        return None;
    }
    Some(Some(lit.value()))
}

/// `overflow` and `max`: the runtime's `check_policy`, as compile errors.
fn overflow(
    field: &IdField<'_>,
    pad: u32,
    shape: DateShape,
    errors: &mut Errors,
) -> Option<Overflow> {
    let attr = &field.attr;
    let widest = 10u64.pow(pad) - 1;
    let max = match &attr.max {
        Some(lit) => match lit.base10_parse::<u64>() {
            Ok(max) if (1..=widest).contains(&max) => Some(max),
            _ => {
                errors.at(
                    lit,
                    format!("`max` must be 1..={widest} for pad {pad}, got {lit}"),
                );
                return None;
            }
        },
        None => None,
    };
    let Some(lit) = &attr.overflow else {
        if let (Some(max_lit), None) = (&attr.max, &attr.series) {
            errors.at(
                max_lit,
                "`max` applies to `overflow = \"cycle\"` and to `series`",
            );
            return None;
        }
        return Some(Overflow::Error);
    };
    let policy = match lit.value().as_str() {
        "error" => Overflow::Error,
        "widen" => Overflow::Widen,
        "letters" => Overflow::Letters,
        "cycle" => match max {
            Some(max) => Overflow::Cycle(max),
            None => {
                errors.at(lit, "`overflow = \"cycle\"` needs `max = ...`: the largest number before it starts again at 1 (IDs then repeat by design)");
                return None;
            }
        },
        other => {
            errors.at(lit, format!("unknown overflow policy `{other}`; expected `error`, `widen`, `letters` or `cycle`"));
            return None;
        }
    };
    if policy == Overflow::Widen && shape.fixed_width.is_none() {
        errors.at(lit, "`widen` needs a date part of fixed width (digits without `-`/`_` modifiers), or none: a wider counter after a shorter date could read like another ID");
        return None;
    }
    if policy != Overflow::Error && attr.series.is_some() {
        errors.at(lit, "series roll over on their own: drop `overflow`");
        return None;
    }
    if max.is_some() && !matches!(policy, Overflow::Cycle(_)) && attr.series.is_none() {
        errors.at(
            attr.max.as_ref().expect("checked"),
            "`max` applies to `overflow = \"cycle\"` and to `series`",
        );
        return None;
    }
    Some(policy)
}

/// `series` and its `max` (checked against the pad width by `overflow`): codes of one
/// length, distinct, printable.
fn series(field: &IdField<'_>, errors: &mut Errors) -> Option<Option<(Vec<String>, u64)>> {
    let attr = &field.attr;
    let Some((array, codes)) = &attr.series else {
        return Some(None);
    };
    let Some(max) = attr.max.as_ref().and_then(|m| m.base10_parse::<u64>().ok()) else {
        if attr.max.is_none() {
            errors.at(
                array,
                "`series` needs `max = ...`: how many numbers each series holds",
            );
        }
        return None;
    };
    let Some(first) = codes.first() else {
        errors.at(array, "the series list is empty");
        return None;
    };
    let mut ok = true;
    for (i, code) in codes.iter().enumerate() {
        let text = code.value();
        if text.is_empty() || text.chars().any(|c| c.is_control() || c.is_whitespace()) {
            errors.at(code, "a series code must be printable and not empty");
            ok = false;
        } else if text.len() != first.value().len() {
            errors.at(
                code,
                format!(
                    "series codes must have the same length as {:?}",
                    first.value()
                ),
            );
            ok = false;
        } else if codes[..i].iter().any(|c| c.value() == text) {
            errors.at(code, format!("series code {text:?} appears twice"));
            ok = false;
        }
    }
    ok.then(|| Some((codes.iter().map(LitStr::value).collect(), max)))
}

/// `format`: the template parses, and shows every part the field sets.
fn format(
    field: &IdField<'_>,
    prefix: &str,
    date: &str,
    series: bool,
    errors: &mut Errors,
) -> Option<Option<String>> {
    let Some(lit) = &field.attr.format else {
        return Some(None);
    };
    let result = parse_template(&lit.value())
        .map_err(|e| e.to_string())
        .and_then(|parts| {
            check_template(&parts, !prefix.is_empty(), !date.is_empty(), series)
                .map_err(str::to_owned)
        });
    match result {
        Ok(()) => Some(Some(lit.value())),
        Err(reason) => {
            errors.at(lit, format!("`format`: {reason}"));
            None
        }
    }
}

/// `gapless` takes one number per transaction: `batch` would mean nothing, and `nowait` only
/// makes sense with it.
fn mode(field: &IdField<'_>, errors: &mut Errors) -> Option<Mode> {
    let attr = &field.attr;
    match (&attr.gapless, &attr.nowait) {
        (None, Some(nowait)) => {
            errors.at(
                nowait,
                "`nowait` applies to gapless fields only: add `gapless`",
            );
            None
        }
        (Some(_), _) if attr.batch.is_some() => {
            errors.at(
                attr.batch.as_ref().expect("checked"),
                "`batch` has no effect on a gapless field: it takes one number per transaction",
            );
            None
        }
        (Some(_), Some(_)) => Some(Mode::GaplessNowait),
        (Some(_), None) => Some(Mode::Gapless),
        (None, None) => Some(Mode::Batched),
    }
}

fn supported_type(field: &IdField<'_>, errors: &mut Errors) -> Option<FieldType> {
    let ty = field_type(field.ty);
    if ty.is_none() {
        errors.at(
            field.ty,
            "#[distributed_id] fields must be `String`, `Option<String>`, `i64` or `Option<i64>`",
        );
    }
    ty
}

fn pad(lit: Option<&LitInt>, errors: &mut Errors) -> Option<u32> {
    let Some(lit) = lit else {
        return Some(DEFAULT_PAD);
    };
    match lit.base10_parse::<u32>() {
        Ok(pad) if (1..=MAX_PAD).contains(&pad) => Some(pad),
        _ => {
            errors.at(lit, format!("`pad` must be 1..=18 digits, got {lit}"));
            None
        }
    }
}

fn batch(lit: Option<&LitInt>, errors: &mut Errors) -> Option<u32> {
    let Some(lit) = lit else {
        return Some(DEFAULT_BATCH);
    };
    match lit.base10_parse::<u32>() {
        Ok(batch) if batch >= 1 => Some(batch),
        Ok(_) => {
            errors.at(lit, "`batch` must be at least 1");
            None
        }
        Err(_) => {
            errors.at(lit, format!("`batch` must be 1..={}, got {lit}", u32::MAX));
            None
        }
    }
}

/// The date pattern and its shape.
fn date(lit: Option<&LitStr>, errors: &mut Errors) -> (Option<String>, Option<DateShape>) {
    let pattern = lit.map_or_else(|| DEFAULT_DATE.to_owned(), LitStr::value);
    match check_date_pattern(&pattern) {
        Ok(shape) => (Some(pattern), Some(shape)),
        Err(err) => {
            let message = match err {
                DatePatternError::Unknown(spec) => format!(
                    "unknown date specifier `{spec}` in `{pattern}`; see chrono::format::strftime for the valid ones"
                ),
                DatePatternError::SubSecond(spec) => format!(
                    "date specifier `{spec}` changes faster than once a second; a period must last at least a second"
                ),
                DatePatternError::TooLong(len) => format!(
                    "this date part can be {len} bytes long; db_key.period holds 64"
                ),
            };
            errors.at(lit.expect("the default pattern is valid"), message);
            (None, None)
        }
    }
}

fn prefix(lit: Option<&LitStr>, errors: &mut Errors) -> Option<String> {
    let Some(lit) = lit else {
        return Some(String::new());
    };
    let prefix = lit.value();
    if prefix.chars().any(|c| c.is_control() || c.is_whitespace()) {
        errors.at(
            lit,
            "`prefix` must not contain whitespace or control characters",
        );
        return None;
    }
    Some(prefix)
}

fn key(model: &Model<'_>, lit: Option<&LitStr>, errors: &mut Errors) -> Option<String> {
    let Some(lit) = lit else {
        return Some(model.table_name.clone());
    };
    let key = lit.value();
    let len = key.chars().count();
    if key.is_empty() || len > MAX_KEY_LEN {
        errors.at(
            lit,
            format!("`key` must be 1..={MAX_KEY_LEN} characters, got {len}"),
        );
        return None;
    }
    // Some collations (MariaDB's PAD SPACE) compare `"pk "` equal to `"pk"`.
    if key.starts_with(char::is_whitespace)
        || key.ends_with(char::is_whitespace)
        || key.chars().any(char::is_control)
    {
        errors.at(
            lit,
            "`key` must not start or end with whitespace or contain control characters: \
             some databases compare such keys equal to others",
        );
        return None;
    }
    Some(key)
}

/// An `i64` field holds `date digits + pad digits` and nothing else.
fn fits_an_i64(
    field: &IdField<'_>,
    prefix: &str,
    shape: DateShape,
    pad: u32,
    overflow: Overflow,
    errors: &mut Errors,
) -> Option<()> {
    let attr = &field.attr;
    let date_width = shape.numeric_width;
    let no_digits = |tokens: &dyn ToTokens, what: &str, errors: &mut Errors| {
        errors.at(
            tokens,
            format!("an `i64` ID field cannot have {what}: use a `String` field"),
        );
    };
    if let (Some(lit), Overflow::Letters) = (&attr.overflow, overflow) {
        no_digits(lit, "letters", errors);
        return None;
    }
    if let Some((array, _)) = &attr.series {
        no_digits(array, "series", errors);
        return None;
    }
    if let Some(lit) = &attr.format {
        no_digits(lit, "a template", errors);
        return None;
    }
    if let (Some(lit), Overflow::Widen) = (&attr.overflow, overflow) {
        if !shape.leading_nonzero && attr.date.as_ref().is_some_and(|d| !d.value().is_empty()) {
            errors.at(lit, "`widen` on an `i64` field needs a date part starting with `%Y` (or none): a leading 0 of the date would be lost in the number and two IDs could meet");
            return None;
        }
    }
    if !prefix.is_empty() {
        errors.at(
            attr.prefix.as_ref().expect("non-empty prefix was written"),
            "an `i64` ID field cannot have a prefix: use a `String` field, or drop `prefix`",
        );
        return None;
    }
    let Some(date_width) = date_width else {
        errors.at(
            attr.date.as_ref().expect("the default date is numeric"),
            "an `i64` ID field needs a date part of fixed-width digits only, like `%Y%m%d` or `%y%m`, or `date = \"\"`",
        );
        return None;
    };
    let total = u32::from(date_width) + pad;
    if total > MAX_PAD {
        let message = format!(
            "an `i64` ID of {date_width} date digits + pad {pad} = {total} digits does not fit: at most 18"
        );
        match &attr.pad {
            Some(pad) => errors.at(pad, message),
            None => errors.at(span_tokens(field), message),
        }
        return None;
    }
    Some(())
}

fn keys_are_unique(model: &Model<'_>, fields: &[ValidField<'_>], errors: &mut Errors) {
    let mut seen: HashMap<&str, &Ident> = HashMap::new();
    for field in fields {
        if let Some(first) = seen.insert(&field.key, field.ident) {
            let message = format!(
                "fields `{first}` and `{}` both draw from db_key `{}`: give one of them its own `key = \"...\"`",
                field.ident, field.key
            );
            let source = model
                .fields
                .iter()
                .find(|f| f.ident == field.ident)
                .expect("valid fields come from the model");
            match &source.attr.key {
                Some(key) => errors.at(key, message),
                None => errors.at(source.attr_tokens, message),
            }
        }
    }
}

fn span_tokens(field: &IdField<'_>) -> proc_macro2::TokenStream {
    let tokens = field.attr_tokens.to_token_stream();
    if tokens.is_empty() {
        Ident::new("distributed_id", Span::call_site()).to_token_stream()
    } else {
        tokens
    }
}
