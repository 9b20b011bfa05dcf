//! Code generation only. Everything generated sits in `const _: () = { ... };` and reaches
//! the runtime through `::seqgen::__private` alone; nothing depends on cargo features.

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

use crate::ast::{FieldType, Model};
use crate::errors::Errors;
use crate::valid::{self, ValidField};
use seqgen_core::{Mode, Overflow};

pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let fields =
        Model::from_input(input, &mut errors).map(|model| valid::check(&model, &mut errors));
    match fields {
        Some(fields) if errors.is_empty() => implementation(input, &fields),
        _ => {
            // Still implement the trait, so one mistake gives one error, not a cascade at
            // every `assign_ids` call.
            let errors = errors.into_compile_errors();
            let fallback = fallback(input);
            quote!(#errors #fallback)
        }
    }
}

fn implementation(input: &DeriveInput, fields: &[ValidField<'_>]) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let specs = fields.iter().map(|f| {
        let spec = &f.spec;
        let (name, key, prefix, date, pad, batch) = (
            f.ident.to_string(),
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
            Overflow::Widen => quote!(.overflow(::seqgen::__private::Overflow::Widen)),
            Overflow::Letters => quote!(.overflow(::seqgen::__private::Overflow::Letters)),
            Overflow::Cycle { max } => {
                quote!(.overflow(::seqgen::__private::Overflow::Cycle { max: #max }))
            }
            _ => quote!(),
        };
        let series = spec.series().map(|series| {
            let (codes, max) = (series.codes(), series.max());
            quote!(.series([#(#codes),*], #max))
        });
        let format = f.format.as_ref().map(|t| quote!(.format(#t)));
        let tz = f.tz.as_ref().map(|tz| {
            quote!(.time_zone(
                ::seqgen::__private::TimeZone::parse(#tz).expect("checked by #[derive(DistributedId)]")
            ))
        });
        quote! {
            ::seqgen::__private::IdField {
                name: #name,
                spec: ::seqgen::__private::Spec::builder(#key)
                    .prefix(#prefix)
                    .date(#date)
                    .pad(#pad)
                    .batch(#batch)
                    #mode
                    #overflow
                    #series
                    #format
                    #tz
                    .build()
                    .expect("checked by #[derive(DistributedId)]"),
            }
        }
    });
    let slots = fields.iter().enumerate().map(|(index, f)| {
        let member = f.ident;
        let variant = match f.ty {
            FieldType::Text => quote!(Text),
            FieldType::OptionalText => quote!(OptionalText),
            FieldType::Number => quote!(Number),
            FieldType::OptionalNumber => quote!(OptionalNumber),
        };
        quote!(#index => ::seqgen::__private::IdSlot::#variant(&mut self.#member),)
    });
    quote! {
        const _: () = {
            #[automatically_derived]
            impl #impl_generics ::seqgen::DistributedId for #ident #ty_generics #where_clause {
                fn __id_fields() -> &'static [::seqgen::__private::IdField] {
                    static FIELDS: ::seqgen::__private::LazyLock<
                        ::std::vec::Vec<::seqgen::__private::IdField>,
                    > = ::seqgen::__private::LazyLock::new(|| ::std::vec![#(#specs),*]);
                    &FIELDS
                }

                fn __id_slot(&mut self, index: usize) -> ::seqgen::__private::IdSlot<'_> {
                    match index {
                        #(#slots)*
                        _ => ::core::panic!("no ID field number {}", index),
                    }
                }
            }
        };
    }
}

fn fallback(input: &DeriveInput) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        const _: () = {
            impl #impl_generics ::seqgen::DistributedId for #ident #ty_generics #where_clause {
                fn __id_fields() -> &'static [::seqgen::__private::IdField] {
                    &[]
                }
                fn __id_slot(&mut self, _: usize) -> ::seqgen::__private::IdSlot<'_> {
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
        assert!(out.contains("0usize => :: seqgen :: __private :: IdSlot :: OptionalNumber (& mut self . invoice_no)"), "{out}");
        assert!(
            out.contains(
                "1usize => :: seqgen :: __private :: IdSlot :: Text (& mut self . order_no)"
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
            out.contains(". batch (100u32) . gapless () . build ()"),
            "{out}"
        );
        assert!(out.contains(". gapless_nowait () . build ()"), "{out}");
    }

    #[test]
    fn policies_reach_the_builder() {
        let out = expand(
            r#"struct Ticket {
                #[distributed_id(date = "", pad = 2, overflow = "cycle", max = 99, tz = "+08:00")] no: String,
                #[distributed_id(key = "t2", format = "{date}-{series}{seq}", series = ["a", "b"], max = 9, pad = 1)] t: String,
            }"#,
        );
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
    fn errors_come_with_a_fallback_impl() {
        let out = expand("struct NewUser { #[distributed_id(pad = 0, batch = 0)] id: String }");
        assert_eq!(out.matches("compile_error").count(), 2, "{out}");
        assert!(out.contains("failed to compile"), "{out}");
    }
}
