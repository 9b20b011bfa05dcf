//! What the attribute values mean. The rules of a spec live in `diesel-seqgen-core` alone: each field's
//! spec is built here with the core's builder, and every [`SpecError`] becomes a compile error
//! at the token of the setting it names. Only what belongs to the attribute's syntax or to the
//! struct (field types, `max` without a policy, `nowait` without `gapless`, two fields on one
//! key) is checked in this file.

use std::collections::HashMap;

use diesel_seqgen_core::{Mode, Overflow, Setting, Spec, SpecError, TimeZone};
use proc_macro2::Span;
use quote::ToTokens;
use syn::{Ident, LitInt, LitStr};

use crate::ast::{field_type, FieldType, IdField, Model};
use crate::errors::Errors;
use fields::{period_field, scope_fields};
use settings::{check_scheme, env_var, time_zone};

mod fields;
mod settings;

/// A field whose spec passed every rule.
pub(crate) struct ValidField<'a> {
    pub(crate) ident: &'a Ident,
    /// The column the field is inserted into, and where the field stands in the struct.
    pub(crate) column: String,
    pub(crate) index: usize,
    pub(crate) ty: FieldType,
    pub(crate) ty_tokens: &'a syn::Type,
    /// Built at compile time; the expansion builds the same spec again at run time.
    pub(crate) spec: Spec,
    /// The template and time zone as written (the spec keeps them parsed).
    pub(crate) format: Option<String>,
    pub(crate) tz: Option<String>,
    /// The fields whose values name the counter's scope, in order; empty when unscoped.
    pub(crate) scope: Vec<&'a Ident>,
    /// Where `scope = "..."` is written, for errors in the code that reads those fields.
    pub(crate) scope_span: Span,
    /// The field whose value is the document's date its numbers are taken for.
    pub(crate) period_from: Option<&'a Ident>,
    /// Where `period_from = "..."` is written, for errors in the code that reads that field.
    pub(crate) period_span: Span,
    /// `gapless = "deferred"`: left NULL at the insert, numbered after the commit.
    pub(crate) deferred: bool,
    /// The environment variable holding the obfuscation key, read at run time.
    pub(crate) obfuscate: Option<String>,
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
    fields.sort_by(|a, b| a.spec.key().cmp(b.spec.key()));
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

/// The attribute's own rules first; a value they refuse is replaced by its default, so that
/// the spec's rules still report what else is wrong (one error per mistake, no cascade).
fn check_field<'a>(
    model: &Model<'a>,
    field: &IdField<'a>,
    errors: &mut Errors,
) -> Option<ValidField<'a>> {
    let before = errors.len();
    let attr = &field.attr;
    let ty = field_type(field.ty);
    let pad = integer(attr.pad.as_ref(), "pad", errors);
    let batch = integer(attr.batch.as_ref(), "batch", errors);
    let mode = mode(field, errors);
    let tz = time_zone(attr.tz.as_ref(), errors);
    let check = check_scheme(attr.check.as_ref(), errors);
    let overflow = overflow(field, errors);
    let series = series(field, errors);
    let scope = scope_fields(model, field, errors);
    let period_from = period_field(model, field, errors);
    let deferred = fields::deferred(field, ty, scope.as_deref(), errors);
    let key = attr
        .key
        .as_ref()
        .map_or_else(|| model.table_name.clone(), LitStr::value);
    // Only what the attribute sets: the defaults are the builder's.
    let mut builder = Spec::builder(key);
    if let Some(prefix) = &attr.prefix {
        builder = builder.prefix(prefix.value());
    }
    if let Some(date) = &attr.date {
        builder = builder.date(date.value());
    }
    if let Some(Some(pad)) = pad {
        builder = builder.pad(pad);
    }
    if let Some(Some(batch)) = batch {
        builder = builder.batch(batch);
    }
    // Out of `u64`: the spec's rule (at most its capacity) reports it at the literal.
    if let Some(start) = &attr.start {
        builder = builder.start(start.base10_parse().unwrap_or(u64::MAX));
    }
    // Likewise: a step past `u64` is past every pad.
    if let Some(step) = &attr.step {
        builder = builder.step(step.base10_parse().unwrap_or(u64::MAX));
    }
    if let Some(Some(days)) = integer(attr.max_days_ahead.as_ref(), "max_days_ahead", errors) {
        builder = builder.max_days_ahead(days);
    }
    if let Some(fiscal) = &attr.fiscal {
        match diesel_seqgen_core::FiscalYear::parse(&fiscal.value()) {
            Ok(year) => builder = builder.fiscal_year(year),
            Err(e) => errors.at(fiscal, e.to_string()),
        }
    }
    if let Some(reset) = &attr.reset {
        match diesel_seqgen_core::Reset::parse(&reset.value()) {
            Ok(reset) => builder = builder.reset(reset),
            Err(e) => errors.at(reset, e.to_string()),
        }
    }
    if let Some(overflow) = overflow {
        builder = builder.overflow(overflow);
    }
    if let Some(tz) = tz.clone().flatten().and_then(|tz| TimeZone::parse(&tz)) {
        builder = builder.time_zone(tz);
    }
    if let Some(Some((codes, max))) = &series {
        builder = builder.series(codes.clone(), *max);
    }
    if let Some(format) = &attr.format {
        builder = builder.format(format.value());
    }
    if let Some(check) = check {
        builder = builder.check(check);
    }
    if let Some(Mode::Gapless { nowait }) = mode {
        builder = if nowait {
            builder.gapless_nowait()
        } else {
            builder.gapless()
        };
    }
    if matches!(ty, FieldType::Number | FieldType::OptionalNumber) {
        builder = builder.numeric();
    }
    if scope.as_ref().is_some_and(|fields| !fields.is_empty()) {
        builder = builder.scoped();
    }
    let obfuscate = attr.obfuscate.as_ref().and_then(|lit| env_var(lit, errors));
    match builder.build_reporting_all() {
        Ok(spec) if errors.len() == before => Some(ValidField {
            obfuscate,
            deferred,
            ident: field.ident,
            column: field.column.clone(),
            index: field.index,
            ty,
            ty_tokens: field.ty,
            spec,
            format: attr.format.as_ref().map(LitStr::value),
            tz: tz?,
            scope: scope?,
            scope_span: attr
                .scope
                .as_ref()
                .map_or_else(Span::call_site, LitStr::span),
            period_from: period_from?,
            period_span: attr
                .period_from
                .as_ref()
                .map_or_else(Span::call_site, LitStr::span),
        }),
        Ok(_) => None,
        Err(broken) => {
            for error in broken {
                spec_error(field, &error, errors);
            }
            None
        }
    }
}

/// A rule of the spec, at the token of the setting it names (the attribute itself when the
/// setting was left at its default).
fn spec_error(field: &IdField<'_>, error: &SpecError, errors: &mut Errors) {
    let attr = &field.attr;
    let message = error.to_string();
    // A series code rule points at the code itself.
    let code = match error {
        SpecError::SeriesCodeNotPrintable(code) | SpecError::SeriesCodesUneven { code, .. } => {
            Some(code.as_str())
        }
        SpecError::SeriesCodeTwice(code) => Some(code.as_str()),
        _ => None,
    };
    if let (Some(code), Some((_, codes))) = (code, &attr.series) {
        let twice = matches!(error, SpecError::SeriesCodeTwice(_));
        let mut matching = codes.iter().filter(|c| c.value() == code);
        let lit = if twice {
            matching.nth(1)
        } else {
            matching.next()
        };
        if let Some(lit) = lit {
            errors.at(lit, message);
            return;
        }
    }
    let token: Option<&dyn ToTokens> = match error.setting() {
        Setting::Key => attr.key.as_ref().map(|t| t as &dyn ToTokens),
        Setting::Prefix => attr.prefix.as_ref().map(|t| t as &dyn ToTokens),
        Setting::Date => attr.date.as_ref().map(|t| t as &dyn ToTokens),
        Setting::Pad => attr.pad.as_ref().map(|t| t as &dyn ToTokens),
        Setting::Batch => attr.batch.as_ref().map(|t| t as &dyn ToTokens),
        Setting::Overflow => attr.overflow.as_ref().map(|t| t as &dyn ToTokens),
        Setting::Max => attr.max.as_ref().map(|t| t as &dyn ToTokens),
        Setting::Series => attr
            .series
            .as_ref()
            .map(|(array, _)| array as &dyn ToTokens),
        Setting::Format => attr.format.as_ref().map(|t| t as &dyn ToTokens),
        Setting::Check => attr.check.as_ref().map(|t| t as &dyn ToTokens),
        Setting::Start => attr.start.as_ref().map(|t| t as &dyn ToTokens),
        Setting::Step => attr.step.as_ref().map(|t| t as &dyn ToTokens),
        Setting::Fiscal => attr.fiscal.as_ref().map(|t| t as &dyn ToTokens),
        Setting::Reset => attr.reset.as_ref().map(|t| t as &dyn ToTokens),
        _ => None,
    };
    match token {
        Some(token) => errors.at(token, message),
        None => errors.at(span_tokens(field), message),
    }
}

/// A `u32` attribute as written (`None` inside when absent), or `None` with an error when it
/// does not fit a `u32`; the range it must be in is the spec's rule.
fn integer(lit: Option<&LitInt>, name: &str, errors: &mut Errors) -> Option<Option<u32>> {
    let Some(lit) = lit else { return Some(None) };
    match lit.base10_parse::<u32>() {
        Ok(value) => Some(Some(value)),
        Err(_) => {
            errors.at(
                lit,
                format!("`{name}` must be at most {}, got {lit}", u32::MAX),
            );
            None
        }
    }
}

/// `overflow` and `max` as written: the policy's name, and `max` only where it means
/// something. Whether `max` fits the pad width is the spec's rule.
fn overflow(field: &IdField<'_>, errors: &mut Errors) -> Option<Overflow> {
    let attr = &field.attr;
    let max = match &attr.max {
        Some(lit) => match lit.base10_parse::<u64>() {
            Ok(max) => Some(max),
            Err(_) => {
                errors.at(lit, format!("`max` must be 1..={}, got {lit}", u64::MAX));
                return None;
            }
        },
        None => None,
    };
    let policy = match &attr.overflow {
        None => Overflow::Error,
        Some(lit) => match lit.value().as_str() {
            "error" => Overflow::Error,
            "widen" => Overflow::Widen,
            "letters" => Overflow::Letters,
            "cycle" => match max {
                Some(max) => Overflow::Cycle { max },
                None => {
                    errors.at(lit, "`overflow = \"cycle\"` needs `max = ...`: the largest number before it starts again at 1 (IDs then repeat by design)");
                    return None;
                }
            },
            other => {
                errors.at(lit, format!("unknown overflow policy `{other}`; expected `error`, `widen`, `letters` or `cycle`"));
                return None;
            }
        },
    };
    if let (Some(max_lit), false, None) = (
        &attr.max,
        matches!(policy, Overflow::Cycle { .. }),
        &attr.series,
    ) {
        errors.at(
            max_lit,
            "`max` applies to `overflow = \"cycle\"` and to `series`",
        );
        return None;
    }
    Some(policy)
}

/// `series` as written: its codes, and the `max` it needs.
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
    Some(Some((codes.iter().map(LitStr::value).collect(), max)))
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
        (Some(_), nowait) => Some(Mode::Gapless {
            nowait: nowait.is_some(),
        }),
        (None, None) => Some(Mode::Batched),
    }
}

fn keys_are_unique(model: &Model<'_>, fields: &[ValidField<'_>], errors: &mut Errors) {
    let mut seen: HashMap<&str, &Ident> = HashMap::new();
    for field in fields {
        if let Some(first) = seen.insert(field.spec.key(), field.ident) {
            let message = format!(
                "fields `{first}` and `{}` both draw from db_key `{}`: give one of them its own `key = \"...\"`",
                field.ident,
                field.spec.key()
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
