//! Implementation detail of [`diesel-seqgen`](https://docs.rs/diesel-seqgen): `#[derive(DistributedId)]`.
//!
//! Use it through `diesel-seqgen`, which re-exports it and documents it; this crate releases in
//! lockstep with `diesel-seqgen`. Parsing (`attr`), the crate's model of the input (`ast`), the
//! rules (`valid`, which builds each spec with `diesel-seqgen-core`, so a rule exists once), code
//! generation (`expand`) and the row seqgen's inserts write (`row`, from Diesel's attributes)
//! each live in their own module.
#![forbid(unsafe_code)]

mod ast;
mod attr;
mod errors;
mod expand;
mod row;
mod valid;

use proc_macro::TokenStream;

/// `#[derive(DistributedId)]`: documented, with examples, at `diesel_seqgen::DistributedId`.
#[proc_macro_derive(DistributedId, attributes(distributed_id))]
pub fn derive_distributed_id(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input).into()
}
