//! Reading a spec back from the shape `db_key` records ([`Spec::shape`]), for tools that have
//! the table but not the application's code (the `seqgen` command line: `gaps`, `prune`).

use super::Spec;
use crate::check::Check;
use crate::error::SpecError;
use crate::policy::Overflow;
use crate::template::{self, TemplateError, Token};

impl Spec {
    /// The same spec with its periods taken in `tz`: what a tool reading a recorded shape
    /// (which has no time zone) needs to tell the current period the way the application does.
    pub fn with_time_zone(mut self, tz: crate::TimeZone) -> Spec {
        self.tz = tz;
        self.cache_key = super::CacheKey::new(&self);
        self
    }

    /// The same spec in gapless mode: what a tool that numbers a key's rows after their commit
    /// (`seqgen number`) needs of a spec read back from a shape, which does not record a mode.
    pub fn into_gapless(mut self) -> Spec {
        self.mode = super::Mode::Gapless { nowait: false };
        self.cache_key = super::CacheKey::new(&self);
        self
    }

    /// The spec whose IDs look like `shape` (as [`Spec::shape`] prints it and `db_key.shape`
    /// records it), drawing from `key`: it formats and [parses](Spec::parse) the same IDs as
    /// the spec that recorded the shape. What a shape leaves out takes its default: batched
    /// mode, batch 100, UTC (a shape does not say in which time zone periods begin).
    ///
    /// ```
    /// use diesel_seqgen_core::Spec;
    ///
    /// let orders = Spec::builder("orders").prefix("ORD").date("%y%m").pad(4).build()?;
    /// let read_back = Spec::from_shape("orders", orders.shape())?;
    /// assert_eq!(read_back.format("2507", 1), "ORD25070001");
    /// assert_eq!(read_back.shape(), orders.shape());
    /// # Ok::<(), diesel_seqgen_core::SpecError>(())
    /// ```
    pub fn from_shape(key: &str, shape: &str) -> Result<Spec, SpecError> {
        let malformed = |reason: String| {
            SpecError::TemplateMalformed(format!("the recorded shape {shape:?} {reason}"))
        };
        let mut builder = Spec::builder(key).date("");
        // The shape as literal text (unescaped) and placeholder names, in order.
        let mut tokens: Vec<Token<'_>> = Vec::new();
        for token in template::tokens(shape) {
            let token = token.map_err(|e| {
                malformed(match e {
                    TemplateError::Unopened => "has a `}` without its `{`".to_owned(),
                    TemplateError::Unclosed => "has a `{` without its `}`".to_owned(),
                    e => e.to_string(),
                })
            })?;
            let Token::Placeholder(placeholder) = token else {
                tokens.push(token);
                continue;
            };
            let (name, setting) = placeholder.split_once(':').unwrap_or((placeholder, ""));
            if name == "scoped" {
                builder = builder.scoped(); // prints nothing
                continue;
            }
            if name == "fiscal" {
                builder = builder.fiscal_year(super::FiscalYear::parse(setting)?); // nor this
                continue;
            }
            if name == "reset" {
                builder = builder.reset(super::Reset::parse(setting)?); // nor this
                continue;
            }
            builder = match name {
                "date" => builder.date(setting),
                "seq" if setting.contains("obfuscated=") => {
                    return Err(SpecError::ObfuscationKey(format!(
                        "the IDs of key `{key}` are obfuscated, and the shape {shape:?} holds only a fingerprint of the key: \
                         this needs the spec with its key, from the application"
                    )))
                }
                "seq" => {
                    let (setting, step) = match setting.split_once(",step=") {
                        Some((rest, step)) => (rest, Some(step)),
                        None => (setting, None),
                    };
                    if let Some(step) = step {
                        let (step, start) = super::step::Stepping::parse_shape(step)
                            .ok_or_else(|| malformed(format!("has a step {step:?}")))?;
                        builder = builder.step(step).start(start);
                    }
                    let (pad, policy) = setting.split_once(',').unwrap_or((setting, ""));
                    let pad = pad
                        .parse()
                        .map_err(|_| malformed(format!("has a pad {pad:?}")))?;
                    let overflow = match (policy, policy.strip_prefix("cycle=")) {
                        ("", _) => Overflow::Error,
                        ("widen", _) => Overflow::Widen,
                        ("letters", _) => Overflow::Letters,
                        (_, Some(max)) => Overflow::Cycle {
                            max: max
                                .parse()
                                .map_err(|_| malformed(format!("has a cycle {max:?}")))?,
                        },
                        _ => return Err(malformed(format!("has a policy {policy:?}"))),
                    };
                    builder.pad(pad).overflow(overflow)
                }
                "series" => {
                    let (codes, max) = setting
                        .rsplit_once('/')
                        .and_then(|(codes, max)| Some((codes, max.parse().ok()?)))
                        .ok_or_else(|| malformed(format!("has a series {setting:?}")))?;
                    builder.series(codes.split(','), max)
                }
                // The scope printed: its counters per scope come with the `{scoped}` marker.
                "scope" => builder,
                "check" => builder.check(
                    Check::parse(setting)
                        .ok_or_else(|| malformed(format!("has a check {setting:?}")))?,
                ),
                _ => return Err(malformed(format!("has a placeholder `{{{name}}}`"))),
            };
            tokens.push(Token::Placeholder(name));
        }
        // The plain spelling (prefix, date, series, counter) where the shape is one: only that
        // spelling can have an `i64` form, as the spec that recorded it may have.
        let (prefix, placeholders) = match tokens.split_first() {
            Some((Token::Literal(prefix), rest)) => (prefix.as_str(), rest),
            _ => ("", tokens.as_slice()),
        };
        let placeholders = match placeholders.split_last() {
            Some((Token::Placeholder("check"), rest)) => rest,
            _ => placeholders,
        };
        let plain = matches!(
            placeholders,
            [Token::Placeholder("date"), Token::Placeholder("seq")]
                | [
                    Token::Placeholder("date"),
                    Token::Placeholder("series"),
                    Token::Placeholder("seq")
                ]
        );
        if plain {
            // Unless the text before the date is no valid prefix (a space in `No. `): then the
            // template below prints the same IDs.
            if let Ok(spec) = builder.clone().prefix(prefix).build() {
                return Ok(spec);
            }
        }
        let template = tokens.iter().map(|token| match token {
            Token::Literal(text) => text.replace('{', "{{").replace('}', "}}"),
            Token::Placeholder(name) => format!("{{{name}}}"),
        });
        builder.format(template.collect::<String>()).build()
    }
}
