//! Code generation only. Everything generated sits in `const _: () = { ... };` and reaches
//! the runtime through `diesel_seqgen::__private` and the `DistributedId` / `IdValue` traits alone
//! (under `::diesel_seqgen`, or the struct's `#[distributed_id(crate = "...")]`); nothing depends on
//! cargo features.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::DeriveInput;

use crate::ast::{FieldType, Model};
use crate::errors::Errors;
use crate::valid::{self, ValidField};
use diesel_seqgen_core::{Mode, Overflow, DEFAULT_MAX_DAYS_AHEAD};

pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let model = Model::from_input(input, &mut errors);
    let fields = model.as_ref().map(|model| valid::check(model, &mut errors));
    let krate = model
        .as_ref()
        .map_or_else(|| syn::parse_quote!(::diesel_seqgen), |m| m.krate.clone());
    match fields {
        Some(fields) if errors.is_empty() => implementation(input, &krate, &fields),
        _ => {
            // Still implement the trait, so one mistake gives one error, not a cascade at
            // every `assign_ids` call.
            let errors = errors.into_compile_errors();
            let fallback = fallback(input, &krate);
            quote!(#errors #fallback)
        }
    }
}

fn implementation(
    input: &DeriveInput,
    krate: &syn::Path,
    fields: &[ValidField<'_>],
) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let struct_fields = match &input.data {
        syn::Data::Struct(data) => data.fields.len(),
        _ => 0,
    };
    // Deferred fields are left to Diesel at the insert (NULL) and numbered after the commit:
    // the follower reads their specs, and the insert never sees them.
    let (deferred, fields): (Vec<&ValidField<'_>>, Vec<&ValidField<'_>>) =
        fields.iter().partition(|f| f.deferred);
    let spec_of = |f: &ValidField<'_>| {
        let spec = &f.spec;
        let (name, column, index, key, prefix, date, pad, batch) = (
            f.ident.to_string(),
            &f.column,
            f.index,
            spec.key(),
            spec.prefix(),
            spec.date(),
            spec.pad(),
            spec.batch(),
        );
        let mode = match spec.mode() {
            Mode::Gapless { nowait: false } => quote!(.gapless()),
            Mode::Gapless { nowait: true } => quote!(.gapless_nowait()),
            _ => quote!(),
        };
        let overflow = match spec.overflow() {
            Overflow::Widen => quote!(.overflow(#krate::__private::Overflow::Widen)),
            Overflow::Letters => quote!(.overflow(#krate::__private::Overflow::Letters)),
            Overflow::Cycle { max } => {
                quote!(.overflow(#krate::__private::Overflow::Cycle { max: #max }))
            }
            _ => quote!(),
        };
        let series = spec.series().map(|series| {
            let (codes, max) = (series.codes(), series.max());
            quote!(.series([#(#codes),*], #max))
        });
        let format = f.format.as_ref().map(|t| quote!(.format(#t)));
        let check = spec.check().map(|check| {
            let name = check.name();
            quote!(.check(
                #krate::__private::Check::parse(#name).expect("checked by #[derive(DistributedId)]")
            ))
        });
        let scoped = spec.is_scoped().then(|| quote!(.scoped()));
        let start = (spec.start() != 1).then(|| {
            let start = spec.start();
            quote!(.start(#start))
        });
        let step = (spec.step() != 1).then(|| {
            let step = spec.step();
            quote!(.step(#step))
        });
        let fiscal = spec.fiscal_year().map(|year| {
            let year = year.to_string();
            quote!(.fiscal_year(
                #krate::__private::FiscalYear::parse(#year).expect("checked by #[derive(DistributedId)]")
            ))
        });
        let reset = spec.reset().map(|reset| {
            let reset = reset.name();
            quote!(.reset(
                #krate::__private::Reset::parse(#reset).expect("checked by #[derive(DistributedId)]")
            ))
        });
        let tz = f.tz.as_ref().map(|tz| {
            quote!(.time_zone(
                #krate::__private::TimeZone::parse(#tz).expect("checked by #[derive(DistributedId)]")
            ))
        });
        let max_days_ahead = (spec.max_days_ahead() != DEFAULT_MAX_DAYS_AHEAD).then(|| {
            let days = spec.max_days_ahead();
            quote!(.max_days_ahead(#days))
        });
        let dated = f.period_from.is_some();
        let some = |name: Option<String>| match name {
            Some(name) if f.deferred => quote!(::core::option::Option::Some(#name)),
            _ => quote!(::core::option::Option::None),
        };
        let scope_column = some(f.scope.first().map(|i| i.to_string()));
        let date_column = some(f.period_from.map(|i| i.to_string()));
        let obfuscate = match &f.obfuscate {
            Some(var) => quote!(::core::option::Option::Some(#var)),
            None => quote!(::core::option::Option::None),
        };
        quote! {{
            let (spec, unbuilt) = #krate::__private::build_field_spec(
                #krate::__private::Spec::builder(#key)
                    .prefix(#prefix)
                    .date(#date)
                    .pad(#pad)
                    .batch(#batch)
                    #mode
                    #overflow
                    #series
                    #format
                    #check
                    #tz
                    #fiscal
                    #reset
                    #max_days_ahead
                    #start
                    #step
                    #scoped,
                #obfuscate,
            );
            #krate::__private::IdField {
                name: #name,
                column: #column,
                index: #index,
                struct_fields: #struct_fields,
                spec,
                unbuilt,
                dated: #dated,
                scope_column: #scope_column,
                date_column: #date_column,
            }
        }}
    };
    let specs = fields.iter().map(|f| spec_of(f));
    let deferred_fields = (!deferred.is_empty()).then(|| {
        let specs = deferred.iter().map(|f| spec_of(f));
        quote! {
            fn __deferred_fields() -> &'static [#krate::__private::IdField] {
                static FIELDS: #krate::__private::LazyLock<
                    ::std::vec::Vec<#krate::__private::IdField>,
                > = #krate::__private::LazyLock::new(|| ::std::vec![#(#specs),*]);
                &FIELDS
            }
        }
    });
    let slots = fields.iter().enumerate().map(|(index, f)| {
        let (member, ty) = (f.ident, f.ty_tokens);
        // Spanned at the field's type: a type seqgen cannot fill is reported there.
        quote_spanned!(ty.span()=> #index => <#ty as #krate::IdValue>::id_slot(&mut self.#member),)
    });
    // The scope of a record for each scoped field: its scope fields' values, through
    // `Display`; a field type without it is reported at the `scope` literal.
    let scopes = fields
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.scope.is_empty())
        .map(|(index, f)| {
            let span = f.scope_span;
            let parts = f.scope.iter().map(|member| {
                let member = syn::Ident::new(&member.to_string(), span);
                quote_spanned!(span=> &self.#member as &dyn ::core::fmt::Display)
            });
            quote! { #index => #krate::__private::scope_text(&[#(#parts),*]), }
        });
    // The document's date of a record for each dated field, from the field `period_from`
    // names; a field of another type is reported at the `period_from` literal.
    let dates = fields.iter().enumerate().filter_map(|(index, f)| {
        let span = f.period_span;
        let member = syn::Ident::new(&f.period_from?.to_string(), span);
        Some(quote_spanned! {span=>
            #index => ::core::option::Option::Some(
                #krate::__private::DocumentDate::from(&self.#member)
            ),
        })
    });
    // A type known only by its `IdValue` implementation may hold the i64 form: then its spec
    // must have one. Checked at compile time where the struct has no generics.
    let numeric_checks = fields
        .iter()
        .filter(|f| f.ty == FieldType::Other && !f.spec.is_numeric())
        .filter(|_| input.generics.params.is_empty())
        .map(|f| {
            let ty = f.ty_tokens;
            let message = format!(
                "field `{}` holds an i64 ID, but its spec has no i64 form: an i64 ID needs no prefix, template, series or letters, and a date part of digits only",
                f.ident
            );
            quote_spanned!(ty.span()=> const _: () = ::core::assert!(!<#ty as #krate::IdValue>::NUMERIC, #message);)
        });
    let row = crate::row::insert_row(input, krate);
    quote! {
        const _: () = {
            #(#numeric_checks)*

            #row

            #[automatically_derived]
            impl #impl_generics #krate::DistributedId for #ident #ty_generics #where_clause {
                fn __id_fields() -> &'static [#krate::__private::IdField] {
                    static FIELDS: #krate::__private::LazyLock<
                        ::std::vec::Vec<#krate::__private::IdField>,
                    > = #krate::__private::LazyLock::new(|| ::std::vec![#(#specs),*]);
                    &FIELDS
                }

                #deferred_fields

                fn __id_slot(&mut self, index: usize) -> #krate::IdSlot<'_> {
                    match index {
                        #(#slots)*
                        _ => ::core::panic!("no ID field number {}", index),
                    }
                }

                fn __id_scope(&self, index: usize) -> ::std::string::String {
                    match index {
                        #(#scopes)*
                        _ => ::std::string::String::new(),
                    }
                }

                fn __id_date(
                    &self,
                    index: usize,
                ) -> ::core::option::Option<#krate::__private::DocumentDate> {
                    match index {
                        #(#dates)*
                        _ => ::core::option::Option::None,
                    }
                }
            }
        };
    }
}

fn fallback(input: &DeriveInput, krate: &syn::Path) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let row = crate::row::not_written(input, krate);
    quote! {
        const _: () = {
            #row

            impl #impl_generics #krate::DistributedId for #ident #ty_generics #where_clause {
                fn __id_fields() -> &'static [#krate::__private::IdField] {
                    &[]
                }
                fn __id_slot(&mut self, _: usize) -> #krate::IdSlot<'_> {
                    ::core::panic!("#[derive(DistributedId)] failed to compile")
                }
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(src: &str) -> String {
        derive(&syn::parse_str(src).unwrap()).to_string()
    }

    #[test]
    fn expands_specs_and_slots_sorted_by_key() {
        let out = expand(
            r#"
            #[diesel(table_name = schema::orders)]
            struct NewOrder {
                #[distributed_id(prefix = "ORD", date = "%y%m", pad = 4)]
                order_no: String,
                #[distributed_id(key = "invoices", date = "", pad = 10, batch = 5)]
                invoice_no: Option<i64>,
                amount: i64,
            }"#,
        );
        let invoices = out.find("\"invoices\"").expect(&out);
        let orders = out.find("\"orders\"").expect(&out);
        assert!(invoices < orders, "sorted by key: {out}");
        assert!(out.contains(". pad (10u32) . batch (5u32)"), "{out}");
        assert!(
            out.contains(". prefix (\"ORD\") . date (\"%y%m\") . pad (4u32) . batch (100u32)"),
            "{out}"
        );
        assert!(
            out.contains("0usize => < Option < i64 > as :: diesel_seqgen :: IdValue > :: id_slot (& mut self . invoice_no)"),
            "{out}"
        );
        assert!(
            out.contains(
                "1usize => < String as :: diesel_seqgen :: IdValue > :: id_slot (& mut self . order_no)"
            ),
            "{out}"
        );
        assert!(!out.contains("cfg"), "{out}");
    }

    #[test]
    fn gapless_fields_build_gapless_specs() {
        let out = expand(
            r#"struct NewInvoice {
                #[distributed_id(prefix = "INV", date = "%Y", gapless)] no: String,
                #[distributed_id(key = "receipts", gapless, nowait)] receipt: String,
            }"#,
        );
        assert!(
            out.contains(". batch (100u32) . gapless () , :: core :: option :: Option :: None"),
            "{out}"
        );
        assert!(out.contains(". gapless_nowait () , :: core"), "{out}");
    }

    #[test]
    fn policies_reach_the_builder() {
        let out = expand(
            r#"struct Ticket {
                #[distributed_id(date = "", pad = 2, overflow = "cycle", max = 99, tz = "+08:00")] no: String,
                #[distributed_id(key = "t2", format = "{date}-{series}{seq}", series = ["a", "b"], max = 9, pad = 1)] t: String,
                #[distributed_id(key = "t3", check = "damm")] c: String,
            }"#,
        );
        assert!(out.contains("Check :: parse (\"damm\")"), "{out}");
        assert!(out.contains("Overflow :: Cycle { max : 99u64 }"), "{out}");
        assert!(out.contains("TimeZone :: parse (\"+08:00\")"), "{out}");
        assert!(
            out.contains(". series ([\"a\" , \"b\"] , 9u64) . format (\"{date}-{series}{seq}\")"),
            "{out}"
        );
    }

    #[test]
    fn defaults_the_key_to_diesels_inferred_table_name() {
        let out = expand("struct NewUser { #[distributed_id] id: String }");
        assert!(out.contains("Spec :: builder (\"new_users\") . prefix (\"\") . date (\"%Y%m%d\") . pad (6u32) . batch (100u32)"), "{out}");
    }

    #[test]
    fn names_the_column_diesel_inserts_each_field_into() {
        let out = expand(
            "struct NewUser { #[distributed_id] id: String, \
             #[distributed_id(key = \"b\")] #[diesel(column_name = r#type)] code: String, \
             #[distributed_id(key = \"c\")] r#ref: i64 }",
        );
        for column in ["column : \"id\"", "column : \"type\"", "column : \"ref\""] {
            assert!(out.contains(column), "{column} in {out}");
        }
    }

    #[test]
    fn errors_come_with_a_fallback_impl() {
        let out = expand("struct NewUser { #[distributed_id(pad = 0, batch = 0)] id: String }");
        assert_eq!(out.matches("compile_error").count(), 2, "{out}");
        assert!(out.contains("failed to compile"), "{out}");
    }

    #[test]
    fn deferred_fields_are_left_out_of_the_insert() {
        let out = expand(
            r#"struct NewInvoice {
                #[distributed_id(prefix = "INV", date = "", gapless = "deferred", scope = "company")]
                number: Option<String>,
                company: String,
            }"#,
        );
        assert!(!out.contains("compile_error"), "{out}");
        let (fields, deferred) = out.split_once("fn __deferred_fields").expect(&out);
        assert!(!fields.contains("\"INV\""), "{out}");
        assert!(deferred.contains(". gapless ()"), "{out}");
        assert!(
            deferred.contains("scope_column : :: core :: option :: Option :: Some (\"company\")"),
            "{out}"
        );
    }

    #[test]
    fn a_deferred_field_that_cannot_be_is_an_error() {
        for (field, error) in [
            (
                r#"#[distributed_id(gapless = "deferred")] no: String"#,
                "is an `Option<String>`",
            ),
            (
                r#"#[distributed_id(gapless = "deferred", nowait)] no: Option<String>"#,
                "nothing to wait for",
            ),
            (
                r#"#[distributed_id(gapless = "later")] no: Option<String>"#,
                "or `gapless = \\\"deferred\\\"`",
            ),
            (
                r#"#[distributed_id(gapless = "deferred", scope = "a, b")] no: Option<String>, a: i32, b: i32"#,
                "one column",
            ),
        ] {
            let out = expand(&format!("struct NewInvoice {{ {field} }}"));
            assert!(
                out.contains("compile_error") && out.contains(error),
                "{field}: {out}"
            );
        }
    }
}
