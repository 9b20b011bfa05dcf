//! Syntax only: `#[distributed_id(...)]` on a field and Diesel's `#[diesel(table_name = ...)]`
//! on the struct, turned into spanned values. What the values mean is `valid`'s business.

use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, Lit, LitInt, LitStr, Meta, Token};

use crate::errors::Errors;

/// The attribute's name.
pub(crate) const DISTRIBUTED_ID: &str = "distributed_id";
pub(crate) const PREFIX: &str = "prefix";
pub(crate) const DATE: &str = "date";
pub(crate) const PAD: &str = "pad";
pub(crate) const BATCH: &str = "batch";
pub(crate) const KEY: &str = "key";
pub(crate) const GAPLESS: &str = "gapless";
pub(crate) const NOWAIT: &str = "nowait";
pub(crate) const OVERFLOW: &str = "overflow";
pub(crate) const MAX: &str = "max";
pub(crate) const SERIES: &str = "series";
pub(crate) const FORMAT: &str = "format";
pub(crate) const TZ: &str = "tz";
pub(crate) const CHECK: &str = "check";
pub(crate) const SCOPE: &str = "scope";
pub(crate) const OBFUSCATE: &str = "obfuscate";
pub(crate) const START: &str = "start";
pub(crate) const STEP: &str = "step";
pub(crate) const FISCAL: &str = "fiscal";
pub(crate) const RESET: &str = "reset";
pub(crate) const PERIOD_FROM: &str = "period_from";
pub(crate) const MAX_DAYS_AHEAD: &str = "max_days_ahead";
/// On the struct: the path of the seqgen crate.
pub(crate) const CRATE: &str = "crate";
/// Not a key: the spelling of gapless mode this crate did not pick, answered with a hint.
const MODE: &str = "mode";
const KEYS: &str = "`prefix`, `date`, `pad`, `batch`, `key`, `gapless`, `nowait`, `overflow`, `max`, `series`, `format`, `tz`, `check`, `scope`, `obfuscate`, `start`, `step`, `fiscal`, `reset`, `period_from`, `max_days_ahead`";
const HELP: &str = r#"the correct format looks like `#[distributed_id(prefix = "U", date = "%Y%m%d", pad = 6, batch = 100)]`"#;

/// The keys of one `#[distributed_id(...)]`, each as written.
#[derive(Default)]
pub(crate) struct FieldAttr {
    pub(crate) prefix: Option<LitStr>,
    pub(crate) date: Option<LitStr>,
    pub(crate) pad: Option<LitInt>,
    pub(crate) batch: Option<LitInt>,
    pub(crate) key: Option<LitStr>,
    pub(crate) gapless: Option<syn::Ident>,
    /// `gapless = "deferred"`: numbers given after the commit.
    pub(crate) deferred: Option<LitStr>,
    pub(crate) nowait: Option<syn::Ident>,
    pub(crate) overflow: Option<LitStr>,
    pub(crate) max: Option<LitInt>,
    pub(crate) series: Option<(syn::ExprArray, Vec<LitStr>)>,
    pub(crate) format: Option<LitStr>,
    pub(crate) tz: Option<LitStr>,
    pub(crate) check: Option<LitStr>,
    pub(crate) scope: Option<LitStr>,
    pub(crate) obfuscate: Option<LitStr>,
    pub(crate) start: Option<LitInt>,
    pub(crate) step: Option<LitInt>,
    pub(crate) fiscal: Option<LitStr>,
    pub(crate) reset: Option<LitStr>,
    pub(crate) period_from: Option<LitStr>,
    pub(crate) max_days_ahead: Option<LitInt>,
}

/// The struct's `#[distributed_id(crate = "path")]`, or `::diesel_seqgen`.
pub(crate) fn crate_path(attrs: &[Attribute], errors: &mut Errors) -> syn::Path {
    let mut path: Option<syn::Path> = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident(DISTRIBUTED_ID)) {
        let result = attr.parse_nested_meta(|meta| {
            if !meta.path.is_ident(CRATE) {
                errors.at(
                    &meta.path,
                    "on the struct, distributed_id takes only `crate = \"...\"`: the other settings go on the ID fields",
                );
                return skip_value(&meta);
            }
            let lit: LitStr = meta.value()?.parse()?;
            match lit.parse::<syn::Path>() {
                Ok(parsed) if path.is_none() => path = Some(parsed),
                Ok(_) => errors.at(&lit, "duplicate distributed_id attribute `crate`"),
                Err(_) => errors.at(&lit, "`crate` takes a path, like `crate = \"my_app::diesel_seqgen\"`"),
            }
            Ok(())
        });
        if let Err(e) = result {
            errors.push(e);
        }
    }
    path.unwrap_or_else(|| syn::parse_quote!(::diesel_seqgen))
}

/// Parses one `#[distributed_id(...)]`, recording every mistake and carrying on.
pub(crate) fn parse_field_attr(attr: &Attribute, errors: &mut Errors) -> FieldAttr {
    let mut parsed = FieldAttr::default();
    if let Meta::Path(_) = attr.meta {
        // A bare `#[distributed_id]`: all defaults.
        return parsed;
    }
    let result = attr.parse_nested_meta(|meta| {
        let Some(ident) = meta.path.get_ident() else {
            errors.at(
                &meta.path,
                format!("unknown distributed_id attribute; expected one of {KEYS}"),
            );
            return skip_value(&meta);
        };
        let name = ident.to_string();
        if name == MODE {
            errors.at(
                ident,
                "write `gapless` (a flag) instead of `mode = \"gapless\"`; without it the mode is batched",
            );
            return skip_value(&meta);
        }
        if name == GAPLESS && meta.input.peek(Token![=]) {
            let value: Expr = meta.value()?.parse()?;
            match value {
                Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(lit), .. }) if lit.value() == "deferred" => {
                    set_once(&mut parsed.deferred, ident, lit, errors);
                    set_once(&mut parsed.gapless, ident, ident.clone(), errors);
                }
                _ => errors.at(
                    ident,
                    "`gapless` is a flag: write `gapless` alone, or `gapless = \"deferred\"` for numbers given after the commit",
                ),
            }
            return Ok(());
        }
        if [GAPLESS, NOWAIT].contains(&name.as_str()) {
            if meta.input.peek(Token![=]) {
                errors.at(ident, format!("`{name}` is a flag: write `{name}` alone, without a value"));
                return skip_value(&meta);
            }
            let slot = if name == GAPLESS {
                &mut parsed.gapless
            } else {
                &mut parsed.nowait
            };
            set_once(slot, ident, ident.clone(), errors);
            return Ok(());
        }
        if ![PREFIX, DATE, PAD, BATCH, KEY, OVERFLOW, MAX, SERIES, FORMAT, TZ, CHECK, SCOPE, OBFUSCATE, START, STEP, FISCAL, RESET, PERIOD_FROM, MAX_DAYS_AHEAD].contains(&name.as_str()) {
            errors.at(
                ident,
                format!("unknown distributed_id attribute `{name}`; expected one of {KEYS}"),
            );
            return skip_value(&meta);
        }
        let value: Expr = match meta.value() {
            Ok(value) => value.parse()?,
            Err(_) => {
                errors.at(&meta.path, format!("`{name}` needs a value: {HELP}"));
                return Ok(());
            }
        };
        match name.as_str() {
            PREFIX => set_str(&mut parsed.prefix, ident, &value, errors),
            DATE => set_str(&mut parsed.date, ident, &value, errors),
            KEY => set_str(&mut parsed.key, ident, &value, errors),
            OVERFLOW => set_str(&mut parsed.overflow, ident, &value, errors),
            FORMAT => set_str(&mut parsed.format, ident, &value, errors),
            TZ => set_str(&mut parsed.tz, ident, &value, errors),
            CHECK => set_str(&mut parsed.check, ident, &value, errors),
            SCOPE => set_str(&mut parsed.scope, ident, &value, errors),
            OBFUSCATE => set_str(&mut parsed.obfuscate, ident, &value, errors),
            FISCAL => set_str(&mut parsed.fiscal, ident, &value, errors),
            RESET => set_str(&mut parsed.reset, ident, &value, errors),
            PERIOD_FROM => set_str(&mut parsed.period_from, ident, &value, errors),
            MAX_DAYS_AHEAD => set_int(&mut parsed.max_days_ahead, ident, &value, errors),
            PAD => set_int(&mut parsed.pad, ident, &value, errors),
            MAX => set_int(&mut parsed.max, ident, &value, errors),
            START => set_int(&mut parsed.start, ident, &value, errors),
            STEP => set_int(&mut parsed.step, ident, &value, errors),
            SERIES => set_list(&mut parsed.series, ident, &value, errors),
            _ => set_int(&mut parsed.batch, ident, &value, errors),
        }
        Ok(())
    });
    if let Err(e) = result {
        errors.push(e);
    }
    parsed
}

fn skip_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    }
    Ok(())
}

fn set_str(slot: &mut Option<LitStr>, name: &syn::Ident, value: &Expr, errors: &mut Errors) {
    match value {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }) => set_once(slot, name, s.clone(), errors),
        _ => errors.at(
            value,
            format!(
                "`{name}` takes a string literal, like `{name} = \"{}\"`",
                example(name)
            ),
        ),
    }
}

fn set_int(slot: &mut Option<LitInt>, name: &syn::Ident, value: &Expr, errors: &mut Errors) {
    match value {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Int(i), ..
        }) => set_once(slot, name, i.clone(), errors),
        _ => errors.at(
            value,
            format!(
                "`{name}` takes an integer literal, like `{name} = {}`",
                example(name)
            ),
        ),
    }
}

fn set_list(
    slot: &mut Option<(syn::ExprArray, Vec<LitStr>)>,
    name: &syn::Ident,
    value: &Expr,
    errors: &mut Errors,
) {
    let list = match value {
        Expr::Array(array) => array
            .elems
            .iter()
            .map(|e| match e {
                Expr::Lit(syn::ExprLit {
                    lit: Lit::Str(s), ..
                }) => Ok(s.clone()),
                other => Err(other),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|codes| (array.clone(), codes)),
        _ => Err(value),
    };
    match list {
        Ok(list) => set_once(slot, name, list, errors),
        Err(bad) => errors.at(
            bad,
            format!("`{name}` takes a list of string literals, like `{name} = [\"aa\", \"bb\"]`"),
        ),
    }
}

fn set_once<T>(slot: &mut Option<T>, name: &syn::Ident, value: T, errors: &mut Errors) {
    if slot.is_some() {
        errors.at(name, format!("duplicate distributed_id attribute `{name}`"));
    } else {
        *slot = Some(value);
    }
}

fn example(name: &syn::Ident) -> &'static str {
    match name.to_string().as_str() {
        PREFIX => "U",
        DATE => "%Y%m%d",
        KEY => "users",
        OVERFLOW => "widen",
        FORMAT => "{prefix}{date}-{seq}",
        TZ => "+08:00",
        CHECK => "luhn",
        SCOPE => "company_id",
        OBFUSCATE => "ORDER_NUMBER_KEY",
        PAD => "6",
        _ => "100",
    }
}

/// The table named by Diesel's `#[diesel(table_name = path::to::table)]`, if any: its last
/// segment. Anything else in `#[diesel(...)]` is Diesel's to check.
pub(crate) fn diesel_table_name(attrs: &[Attribute]) -> Option<String> {
    diesel_setting(attrs, "table_name")
}

/// The column named by Diesel's `#[diesel(column_name = name)]` on a field, if any.
pub(crate) fn diesel_column_name(attrs: &[Attribute]) -> Option<String> {
    diesel_setting(attrs, "column_name")
}

/// The last path segment given to `name` in `#[diesel(...)]`, unraw (`r#type` is `type`);
/// an attribute that does not read as settings is Diesel's to report, and skipped here.
fn diesel_setting(attrs: &[Attribute], name: &str) -> Option<String> {
    let settings: Vec<Meta> = diesel_attrs(attrs)
        .filter_map(|settings| settings.ok())
        .flatten()
        .collect();
    match setting(&settings, name)? {
        Expr::Path(path) => path
            .path
            .segments
            .last()
            .map(|s| syn::ext::IdentExt::unraw(&s.ident).to_string()),
        _ => None,
    }
}

/// Every setting of the `#[diesel(...)]` attributes in `attrs`, or `None` if one of them does
/// not read as settings (a type in it this crate cannot parse, say).
pub(crate) fn diesel_settings(attrs: &[Attribute]) -> Option<Vec<Meta>> {
    let mut settings = Vec::new();
    for parsed in diesel_attrs(attrs) {
        settings.extend(parsed.ok()?);
    }
    Some(settings)
}

/// Each `#[diesel(...)]` attribute of `attrs`, read as comma-separated settings.
fn diesel_attrs(
    attrs: &[Attribute],
) -> impl Iterator<Item = syn::Result<Punctuated<Meta, Token![,]>>> + '_ {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("diesel"))
        .map(|attr| attr.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated))
}

/// The last value `settings` give to `name`.
pub(crate) fn setting<'m>(settings: &'m [Meta], name: &str) -> Option<&'m Expr> {
    settings.iter().rev().find_map(|meta| match meta {
        Meta::NameValue(nv) if nv.path.is_ident(name) => Some(&nv.value),
        _ => None,
    })
}

/// A `name = true|false` setting.
pub(crate) fn flag(settings: &[Meta], name: &str) -> Option<bool> {
    match setting(settings, name)? {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Bool(value),
            ..
        }) => Some(value.value),
        _ => None,
    }
}
