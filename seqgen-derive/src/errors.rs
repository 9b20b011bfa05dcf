//! Errors are collected, not thrown at the first one: a user with three mistakes sees three.

use std::fmt::Display;

use proc_macro2::TokenStream;
use quote::ToTokens;

#[derive(Default)]
pub(crate) struct Errors {
    errors: Vec<syn::Error>,
}

impl Errors {
    /// Records an error pointing at `tokens`.
    pub(crate) fn at<T: ToTokens, M: Display>(&mut self, tokens: T, message: M) {
        self.errors.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an error built elsewhere (e.g. by syn's parser).
    pub(crate) fn push(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    /// How many errors were recorded so far.
    pub(crate) fn len(&self) -> usize {
        self.errors.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// All errors as `compile_error!` invocations.
    pub(crate) fn into_compile_errors(self) -> TokenStream {
        self.errors
            .iter()
            .map(syn::Error::to_compile_error)
            .collect()
    }
}
