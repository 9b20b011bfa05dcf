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
