//! Implementation detail of [`seqgen`](https://docs.rs/seqgen): `#[derive(DistributedId)]`.
//!
//! Use it through `seqgen`, which re-exports it and documents it; this crate releases in
//! lockstep with `seqgen`. Parsing (`attr`), the crate's model of the input (`ast`), the
//! rules (`valid`, which builds each spec with `seqgen-core`, so a rule exists once) and code
//! generation (`expand`) each live in their own module.
#![forbid(unsafe_code)]

mod ast;
mod attr;
mod errors;
mod expand;
mod valid;

use proc_macro::TokenStream;

/// `#[derive(DistributedId)]`: documented, with examples, at `seqgen::DistributedId`.
#[proc_macro_derive(DistributedId, attributes(distributed_id))]
pub fn derive_distributed_id(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input).into()
}
