//! A spec in one of its scopes: what every call that takes numbers is given.

use super::{DocumentDate, Spec};

/// A spec and the scope to take its numbers in: `spec.scope("acme")` for a
/// [scoped](super::SpecBuilder::scoped) spec, or the spec alone (`&spec`, which converts) for
/// one without scopes. Every call of `diesel-seqgen` that takes, previews or voids numbers takes one
/// (`impl Into<Scoped>`), so a scope is a value you pass, not a second function.
///
/// ```
/// use diesel_seqgen_core::{Scoped, Spec};
///
/// let invoices = Spec::builder("invoices").date("").pad(4).scoped().build()?;
/// let acme: Scoped = invoices.scope("acme");
/// assert_eq!((acme.spec().key(), acme.scope()), ("invoices", "acme"));
///
/// let orders = Spec::builder("orders").date("").pad(4).build()?;
/// let unscoped: Scoped = (&orders).into();
/// assert_eq!(unscoped.scope(), "");
///
/// // Shared specs convert too.
/// let shared = std::sync::Arc::new(orders);
/// assert_eq!(Scoped::from(&shared).spec().key(), "orders");
/// # Ok::<(), diesel_seqgen_core::SpecError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scoped<'a> {
    spec: &'a Spec,
    scope: &'a str,
    date: Option<DocumentDate>,
}

impl<'a> Scoped<'a> {
    /// The spec.
    pub fn spec(&self) -> &'a Spec {
        self.spec
    }

    /// The scope value; empty for a spec without scopes.
    pub fn scope(&self) -> &'a str {
        self.scope
    }

    /// Numbering in the period of the document's `date` instead of the clock's (see
    /// [`DocumentDate`]).
    pub fn dated(mut self, date: impl Into<DocumentDate>) -> Self {
        self.date = Some(date.into());
        self
    }

    /// The document's date, if the numbers are taken in its period.
    pub fn date(&self) -> Option<DocumentDate> {
        self.date
    }
}

impl Spec {
    /// This spec in `scope` (a company, an order, a tenant): each scope value of a
    /// [scoped](super::SpecBuilder::scoped) spec has its own counter. See [`Scoped`].
    pub fn scope<'a>(&'a self, scope: &'a str) -> Scoped<'a> {
        Scoped {
            spec: self,
            scope,
            date: None,
        }
    }
}

impl<'a> From<&'a Spec> for Scoped<'a> {
    fn from(spec: &'a Spec) -> Self {
        Scoped {
            spec,
            scope: "",
            date: None,
        }
    }
}

/// A spec shared as `&Arc<Spec>`, `&LazyLock<Spec>`, `&Box<Spec>`, `&&Spec`: unscoped.
impl<'a, T> From<&'a T> for Scoped<'a>
where
    T: std::ops::Deref<Target = Spec>,
{
    fn from(spec: &'a T) -> Self {
        Scoped {
            spec,
            scope: "",
            date: None,
        }
    }
}

impl<'a> From<&Scoped<'a>> for Scoped<'a> {
    fn from(scoped: &Scoped<'a>) -> Self {
        *scoped
    }
}
