//! The row seqgen's own inserts write for the model (`diesel_seqgen::__private::InsertRow`):
//! the values Diesel's derived `Insertable` binds, built the way it builds them (each field's
//! `AsExpression` for its column's SQL type, an `Option` field that is `None` a `DEFAULT`), so
//! that the runtime reads no item of Diesel's insert machinery. Diesel's attributes are read
//! here, syntax only; anything this file does not follow gives the model no row of its own
//! (`NotWritten`), and its inserts stay Diesel's:
//!
//! - no `#[diesel(table_name = ...)]`: Diesel infers a table from the struct's name, but a
//!   model that derives no Diesel trait has none, and naming it would not compile;
//! - a field `#[diesel(embed)]`ded (its row is another struct's) or `serialize_as` (Diesel
//!   inserts such a model by value only, which `diesel_seqgen::insert_into` never does);
//! - a `#[diesel(...)]` this file cannot read, or more columns than the runtime's tuples (64).

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, Expr, Ident, Lit, Meta, Type};

use crate::ast::option_inner;
use crate::attr::{diesel_settings, flag, setting};

/// Columns the runtime's row tuples reach (`backend/row_values.rs`).
const MAX_COLUMNS: usize = 64;

/// How one field is written, as Diesel's `Insertable` writes it.
struct Column<'a> {
    member: &'a Ident,
    ty: &'a Type,
    column: Ident,
    /// `Some(inner)` for an `Option<inner>` written as `DEFAULT` when `None`.
    or_default: Option<&'a Type>,
}

/// `impl InsertRow<table> for &Model`, one per `#[diesel(table_name)]`: the model's row, or
/// `NotWritten` for every table (see the module).
pub(crate) fn insert_row(input: &DeriveInput, krate: &syn::Path) -> TokenStream {
    match written(input) {
        Some((tables, columns)) => tables
            .iter()
            .map(|table| row_for(input, krate, table, &columns))
            .collect(),
        None => not_written(input, krate),
    }
}

/// The model's tables and columns, if seqgen writes its row.
fn written(input: &DeriveInput) -> Option<(Vec<syn::Path>, Vec<Column<'_>>)> {
    let syn::Data::Struct(data) = &input.data else {
        return None;
    };
    let settings = diesel_settings(&input.attrs)?;
    let tables: Vec<syn::Path> = settings
        .iter()
        .filter_map(|meta| match meta {
            Meta::NameValue(nv) if nv.path.is_ident("table_name") => match &nv.value {
                Expr::Path(path) => Some(path.path.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let none_as_default = flag(&settings, "treat_none_as_default_value").unwrap_or(true);
    let mut columns = Vec::new();
    for field in &data.fields {
        let settings = diesel_settings(&field.attrs)?;
        let has = |name: &str| settings.iter().any(|meta| meta.path().is_ident(name));
        if has("skip_insertion") {
            continue;
        }
        if has("embed") || has("serialize_as") {
            return None;
        }
        let member = field.ident.as_ref()?;
        let column = match setting(&settings, "column_name") {
            Some(Expr::Path(path)) => path.path.get_ident()?.clone(),
            Some(Expr::Lit(syn::ExprLit {
                lit: Lit::Str(name),
                ..
            })) => name.parse().ok()?,
            Some(_) => return None,
            None => member.clone(),
        };
        let or_default = flag(&settings, "treat_none_as_default_value")
            .unwrap_or(none_as_default)
            .then(|| option_inner(&field.ty))
            .flatten();
        columns.push(Column {
            member,
            ty: &field.ty,
            column,
            or_default,
        });
    }
    (!tables.is_empty() && !columns.is_empty() && columns.len() <= MAX_COLUMNS)
        .then_some((tables, columns))
}

fn row_for(
    input: &DeriveInput,
    krate: &syn::Path,
    table: &syn::Path,
    columns: &[Column<'_>],
) -> TokenStream {
    let ident = &input.ident;
    let mut generics = input.generics.clone();
    generics.params.insert(0, syn::parse_quote!('__seqgen_row));
    let (impl_generics, _, _) = generics.split_for_impl();
    let (_, ty_generics, where_clause) = input.generics.split_for_impl();
    let predicates = where_clause.into_iter().flat_map(|w| w.predicates.iter());
    let p = quote!(#krate::__private);
    let mut types = Vec::new();
    let mut values = Vec::new();
    let mut bounds = Vec::new();
    for Column {
        member,
        ty,
        column,
        or_default,
    } in columns
    {
        let span = ty.span();
        let sql_type = quote_spanned!(span=> <#table::#column as #p::Expression>::SqlType);
        let name = quote_spanned!(span=> <#table::#column as #p::Column>::NAME);
        let as_expression = quote_spanned!(span=> #p::AsExpression::<#sql_type>::as_expression);
        // A `None` in an `Option` field Diesel writes as `DEFAULT` is no value; any other
        // field always has one.
        let (ty, value) = match or_default {
            Some(inner) => (*inner, quote!(self.#member.as_ref().map(#as_expression))),
            None => (
                *ty,
                quote!(::core::option::Option::Some(#as_expression(&self.#member))),
            ),
        };
        let expression =
            quote_spanned!(span=> <&'__seqgen_row #ty as #p::AsExpression<#sql_type>>::Expression);
        types.push(quote!(#p::ColumnValue<#expression>));
        values.push(quote_spanned!(span=> #p::ColumnValue { column: #name, value: #value }));
        // As Diesel's derive does, a bound per field names the field whose type has no
        // `AsExpression` for its column; one whose type holds lifetimes is left to the
        // type itself (rustc cannot tell bounds apart by lifetimes alone).
        if !has_lifetime(ty) {
            bounds.push(quote_spanned!(span=> &'__seqgen_row #ty: #p::AsExpression<#sql_type>));
        }
    }
    quote! {
        #[automatically_derived]
        impl #impl_generics #p::InsertRow<#table::table> for &'__seqgen_row #ident #ty_generics
        where
            #(#predicates,)*
            #(#bounds,)*
        {
            type Values = (#(#types,)*);

            fn row_values(self) -> Self::Values {
                (#(#values,)*)
            }
        }
    }
}

/// `NotWritten` for every table: the model's inserts are Diesel's.
pub(crate) fn not_written(input: &DeriveInput, krate: &syn::Path) -> TokenStream {
    let ident = &input.ident;
    let mut generics = input.generics.clone();
    generics.params.insert(0, syn::parse_quote!('__seqgen_row));
    generics.params.push(syn::parse_quote!(__SeqgenTable));
    let (impl_generics, _, _) = generics.split_for_impl();
    let (_, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        #[automatically_derived]
        impl #impl_generics #krate::__private::InsertRow<__SeqgenTable>
            for &'__seqgen_row #ident #ty_generics #where_clause
        {
            type Values = #krate::__private::NotWritten;

            fn row_values(self) -> Self::Values {
                #krate::__private::NotWritten
            }
        }
    }
}

/// Whether `ty` names a lifetime (`&'a str`, `Cow<'a, str>`).
fn has_lifetime(ty: &Type) -> bool {
    fn any(tokens: TokenStream) -> bool {
        tokens.into_iter().any(|token| match token {
            proc_macro2::TokenTree::Punct(p) => p.as_char() == '\'',
            proc_macro2::TokenTree::Group(group) => any(group.stream()),
            _ => false,
        })
    }
    any(quote!(#ty))
}

#[cfg(test)]
mod tests {
    fn expand(src: &str) -> String {
        let input = syn::parse_str(src).unwrap();
        super::insert_row(&input, &syn::parse_quote!(::s)).to_string()
    }

    #[test]
    fn writes_each_column_as_diesels_insertable_does() {
        let out = expand(
            "#[diesel(table_name = schema::users, treat_none_as_default_value = true)] \
             struct NewUser<'a> { \
                 id: String, \
                 #[diesel(column_name = r#type)] kind: &'a str, \
                 note: Option<String>, \
                 #[diesel(treat_none_as_default_value = false)] tag: Option<String>, \
                 #[diesel(skip_insertion)] local: u8 }",
        );
        assert!(
            out.contains(
                "InsertRow < schema :: users :: table > for & '__seqgen_row NewUser < 'a >"
            ),
            "{out}"
        );
        for column in [
            "schema :: users :: id",
            "schema :: users :: r#type",
            "schema :: users :: note",
            "schema :: users :: tag",
        ] {
            assert!(out.contains(column), "{column} in {out}");
        }
        assert!(!out.contains("local"), "{out}");
        // `note` is `DEFAULT` when `None`; `tag` is bound as it is (NULL).
        assert!(
            out.contains("self . note . as_ref () . map (:: s :: __private :: AsExpression"),
            "{out}"
        );
        assert!(
            out.contains("ColumnValue < < & '__seqgen_row Option < String >"),
            "{out}"
        );
        // No bound for the field whose type holds a lifetime.
        assert!(!out.contains("& '__seqgen_row & 'a str :"), "{out}");
        assert!(
            out.contains("& '__seqgen_row String : :: s :: __private :: AsExpression"),
            "{out}"
        );
    }

    #[test]
    fn keeps_the_models_own_bounds() {
        let out = expand(
            "#[diesel(table_name = users)] struct NewUser<T> where T: Clone { id: String, data: T }",
        );
        assert!(
            out.contains("where T : Clone , & '__seqgen_row String :"),
            "{out}"
        );
        syn::parse_str::<syn::ItemImpl>(&out).expect("one impl that parses");
    }

    #[test]
    fn one_row_per_table() {
        let out =
            expand("#[diesel(table_name = a)] #[diesel(table_name = b)] struct Row { id: String }");
        assert!(out.contains("InsertRow < a :: table >"), "{out}");
        assert!(out.contains("InsertRow < b :: table >"), "{out}");
    }

    #[test]
    fn models_it_does_not_follow_are_not_written() {
        for src in [
            "struct NewUser { id: String }",
            "#[diesel(table_name = users)] struct NewUser { id: String, #[diesel(embed)] more: More }",
            "#[diesel(table_name = users)] struct NewUser { id: String, #[diesel(serialize_as = Vec<u8>)] raw: Raw }",
        ] {
            let out = expand(src);
            assert!(out.contains("NotWritten"), "{src}: {out}");
            assert!(out.contains("InsertRow < __SeqgenTable >"), "{src}: {out}");
        }
    }
}
