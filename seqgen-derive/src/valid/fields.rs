//! Other fields of the struct a field's attribute names: the scope's, whose values each get
//! their own counter, and the document's date, whose period the numbers are taken in.

use syn::Ident;

use crate::ast::{IdField, Model};
use crate::errors::Errors;

/// The fields `scope = "a, b"` names (none without `scope`), or `None` with an error at the
/// literal: each must be a field of the struct, not an ID field (its value may not be filled
/// yet when the scope is read), and named once.
pub(super) fn scope_fields<'a>(
    model: &Model<'a>,
    field: &IdField<'_>,
    errors: &mut Errors,
) -> Option<Vec<&'a Ident>> {
    let Some(lit) = &field.attr.scope else {
        return Some(Vec::new());
    };
    let text = lit.value();
    let mut fields: Vec<&'a Ident> = Vec::new();
    for name in text.split(',').map(str::trim) {
        let problem = if name.is_empty() {
            Some("`scope` names the fields whose values each get their own counter, like `scope = \"company_id\"` or `scope = \"company_id, year\"`".to_owned())
        } else if model.fields.iter().any(|f| f.ident == name) {
            Some(format!("`scope` cannot name `{name}`, an ID field: its value may not be filled yet when the scope is read"))
        } else if fields.iter().any(|f| *f == name) {
            Some(format!("`scope` names `{name}` twice"))
        } else {
            match model.all_fields.iter().find(|f| **f == name) {
                Some(found) => {
                    fields.push(found);
                    None
                }
                None => Some(format!(
                    "`scope` names `{name}`, which is not a field of `{}`",
                    model.input.ident
                )),
            }
        };
        if let Some(problem) = problem {
            errors.at(lit, problem);
            return None;
        }
    }
    Some(fields)
}

/// The field `period_from` names: another field of the struct (not an ID field), whose value
/// (a `NaiveDate` or `DateTime`) is the document's date; `None` inside when not set, `None`
/// (reported) when it names no such field.
pub(super) fn period_field<'a>(
    model: &Model<'a>,
    field: &IdField<'_>,
    errors: &mut Errors,
) -> Option<Option<&'a Ident>> {
    let Some(lit) = &field.attr.period_from else {
        return Some(None);
    };
    let name = lit.value();
    let problem = if model.fields.iter().any(|f| f.ident == name.as_str()) {
        format!("`period_from` cannot name `{name}`, an ID field: it names the field holding the document's date, like `period_from = \"issued_on\"`")
    } else if let Some(found) = model.all_fields.iter().find(|f| **f == name.as_str()) {
        return Some(Some(found));
    } else {
        format!(
            "`period_from` names `{name}`, which is not a field of `{}`: it names the field holding the document's date (a `NaiveDate` or `DateTime<Utc>`)",
            model.input.ident
        )
    };
    errors.at(lit, problem);
    None
}

/// Whether the field is `gapless = "deferred"`, with an error where it cannot be: its row
/// commits with NULL (an `Option<String>`), nothing waits for its counter (no `nowait`), and
/// the follower reads its scope from one column (one scope field).
pub(super) fn deferred(
    field: &IdField<'_>,
    ty: crate::ast::FieldType,
    scope: Option<&[&Ident]>,
    errors: &mut Errors,
) -> bool {
    let attr = &field.attr;
    if attr.deferred.is_none() {
        return false;
    }
    if let Some(nowait) = &attr.nowait {
        errors.at(
            nowait,
            "`nowait` has nothing to wait for with `gapless = \"deferred\"`: no transaction holds its counter",
        );
    }
    if ty != crate::ast::FieldType::OptionalText {
        errors.at(
            field.ty,
            "a `gapless = \"deferred\"` field is an `Option<String>`: its row commits with NULL, and seqgen numbers it afterwards",
        );
    }
    if scope.is_some_and(|fields| fields.len() > 1) {
        let at = attr.scope.as_ref().expect("a scope names fields");
        errors.at(at, "a deferred field's scope is one column: name one field");
    }
    true
}
