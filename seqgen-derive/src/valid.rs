//! What the attribute values mean: one function per rule, every violation recorded with the
//! token it comes from. The runtime's `Spec::build` enforces the same rules; here they become
//! compile errors.

use std::collections::HashMap;

use proc_macro2::Span;
use quote::ToTokens;
use syn::{Ident, LitInt, LitStr};

use crate::ast::{field_type, FieldType, IdField, Model};
use crate::date_pattern::{check_date_pattern, DatePatternError};
use crate::errors::Errors;

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
    let (date, numeric_width) = date(field.attr.date.as_ref(), errors);
    let prefix = prefix(field.attr.prefix.as_ref(), errors);
    let key = key(model, field.attr.key.as_ref(), errors);
    let mode = mode(field, errors);
    let (ty, pad, batch, date, prefix, key, mode) =
        (ty?, pad?, batch?, date?, prefix?, key?, mode?);
    if matches!(ty, FieldType::Number | FieldType::OptionalNumber) {
        fits_an_i64(field, &prefix, numeric_width.flatten(), pad, errors)?;
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
    })
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

/// The date pattern and, when it is digits only, its width.
fn date(lit: Option<&LitStr>, errors: &mut Errors) -> (Option<String>, Option<Option<u8>>) {
    let pattern = lit.map_or_else(|| DEFAULT_DATE.to_owned(), LitStr::value);
    match check_date_pattern(&pattern) {
        Ok(shape) => (Some(pattern), Some(shape.numeric_width)),
        Err(err) => {
            let message = match err {
                DatePatternError::Unknown(spec) => format!(
                    "unknown date specifier `{spec}` in `{pattern}`; see chrono::format::strftime for the valid ones"
                ),
                DatePatternError::SubSecond(spec) => format!(
                    "date specifier `{spec}` changes faster than once a second; a period must last at least a second"
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
    Some(key)
}

/// An `i64` field holds `date digits + pad digits` and nothing else.
fn fits_an_i64(
    field: &IdField<'_>,
    prefix: &str,
    date_width: Option<u8>,
    pad: u32,
    errors: &mut Errors,
) -> Option<()> {
    let attr = &field.attr;
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
