//! The derive input as this crate sees it: a named struct, the db_key name its table gives,
//! and its annotated fields.

use syn::ext::IdentExt;
use syn::{Data, DeriveInput, Fields, GenericArgument, Ident, PathArguments, Type};

use crate::attr::{self, FieldAttr, DISTRIBUTED_ID};
use crate::errors::Errors;

pub(crate) struct Model<'a> {
    pub(crate) input: &'a DeriveInput,
    /// How the generated code names seqgen: `::diesel_seqgen`, or `#[distributed_id(crate = "...")]`.
    pub(crate) krate: syn::Path,
    /// The db_key name fields get when they set no `key`: Diesel's table name.
    pub(crate) table_name: String,
    pub(crate) fields: Vec<IdField<'a>>,
    /// Every field's name, annotated or not: what a `scope` may name.
    pub(crate) all_fields: Vec<&'a Ident>,
}

pub(crate) struct IdField<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) ty: &'a Type,
    /// The column Diesel's `Insertable` writes the field to: its `#[diesel(column_name)]`,
    /// else the field's name.
    pub(crate) column: String,
    /// Where the field stands among the struct's fields (Diesel's `Insertable` writes its
    /// columns in that order).
    pub(crate) index: usize,
    /// The attribute as a whole, for errors about the field's spec.
    pub(crate) attr_tokens: &'a syn::Attribute,
    pub(crate) attr: FieldAttr,
}

/// The field types seqgen fills, as far as their spelling tells: the four it knows by name,
/// whose numeric rules are checked here with precise errors, and any other type, reached
/// through its `IdValue` implementation (checked by the compiler, numeric rules at run time).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldType {
    Text,
    OptionalText,
    Number,
    OptionalNumber,
    Other,
}

impl<'a> Model<'a> {
    /// The model, or `None` (with the error recorded) when the input is not a struct with
    /// named fields.
    pub(crate) fn from_input(input: &'a DeriveInput, errors: &mut Errors) -> Option<Self> {
        let named = match &input.data {
            Data::Struct(data) => match &data.fields {
                Fields::Named(named) => named,
                _ => {
                    errors.at(
                        &input.ident,
                        "#[derive(DistributedId)] needs a struct with named fields",
                    );
                    return None;
                }
            },
            Data::Enum(data) => {
                errors.at(
                    data.enum_token,
                    "#[derive(DistributedId)] works on structs, not enums",
                );
                return None;
            }
            Data::Union(data) => {
                errors.at(
                    data.union_token,
                    "#[derive(DistributedId)] works on structs, not unions",
                );
                return None;
            }
        };
        let mut fields = Vec::new();
        for (index, field) in named.named.iter().enumerate() {
            let mut attrs = field
                .attrs
                .iter()
                .filter(|a| a.path().is_ident(DISTRIBUTED_ID));
            let Some(first) = attrs.next() else { continue };
            for extra in attrs {
                errors.at(extra, "duplicate #[distributed_id] attribute on one field");
            }
            let ident = field.ident.as_ref().expect("named field");
            fields.push(IdField {
                ident,
                ty: &field.ty,
                column: attr::diesel_column_name(&field.attrs)
                    .unwrap_or_else(|| ident.unraw().to_string()),
                index,
                attr_tokens: first,
                attr: attr::parse_field_attr(first, errors),
            });
        }
        let krate = attr::crate_path(&input.attrs, errors);
        let table_name = attr::diesel_table_name(&input.attrs)
            .unwrap_or_else(|| infer_table_name(&input.ident.to_string()));
        let all_fields = named
            .named
            .iter()
            .filter_map(|f| f.ident.as_ref())
            .collect();
        Some(Model {
            input,
            krate,
            table_name,
            fields,
            all_fields,
        })
    }
}

/// Diesel's own inference when `#[diesel(table_name)]` is absent: `NewUser` → `new_users`.
fn infer_table_name(name: &str) -> String {
    let mut table = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            table.push('_');
        }
        table.extend(c.to_lowercase());
    }
    table.push('s');
    table
}

/// What the spelling of a field type tells: `String`, `Option<String>`, `i64`,
/// `Option<i64>` by name (paths such as `std::string::String` included), any other type as
/// `Other`.
pub(crate) fn field_type(ty: &Type) -> FieldType {
    known_type(ty).unwrap_or(FieldType::Other)
}

fn known_type(ty: &Type) -> Option<FieldType> {
    let segment = last_segment(ty)?;
    match segment.ident.to_string().as_str() {
        "String" if segment.arguments.is_empty() => Some(FieldType::Text),
        "i64" if segment.arguments.is_empty() => Some(FieldType::Number),
        "Option" => match known_type(option_inner(ty)?)? {
            FieldType::Text => Some(FieldType::OptionalText),
            FieldType::Number => Some(FieldType::OptionalNumber),
            _ => None,
        },
        _ => None,
    }
}

/// `T` of a field spelled `Option<T>`: how seqgen and Diesel's derives tell an `Option`.
pub(crate) fn option_inner(ty: &Type) -> Option<&Type> {
    let segment = last_segment(ty)?;
    let PathArguments::AngleBracketed(args) = &segment.arguments else {
        return None;
    };
    match (
        segment.ident == "Option",
        &args.args.iter().collect::<Vec<_>>()[..],
    ) {
        (true, [GenericArgument::Type(inner)]) => Some(inner),
        _ => None,
    }
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        Type::Group(syn::TypeGroup { elem, .. }) | Type::Paren(syn::TypeParen { elem, .. }) => {
            last_segment(elem)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn infers_table_names_like_diesel() {
        assert_eq!(infer_table_name("User"), "users");
        assert_eq!(infer_table_name("NewUser"), "new_users");
        assert_eq!(infer_table_name("FooBarBaz"), "foo_bar_bazs");
    }

    #[test]
    fn recognises_the_four_field_types() {
        let ty = |s: &str| syn::parse_str::<Type>(s).unwrap();
        assert!(field_type(&ty("String")) == FieldType::Text);
        assert!(field_type(&ty("std::string::String")) == FieldType::Text);
        assert!(field_type(&ty("Option<String>")) == FieldType::OptionalText);
        assert!(field_type(&ty("i64")) == FieldType::Number);
        assert!(field_type(&ty("Option<i64>")) == FieldType::OptionalNumber);
        assert!(field_type(&ty("OrderNo")) == FieldType::Other);
        assert!(field_type(&ty("Option<Option<i64>>")) == FieldType::Other);
    }
}
