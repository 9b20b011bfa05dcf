//! ID templates: `format = "{prefix}{date}-{series}{seq}"`.
//!
//! Shared, as source, by the runtime (`SpecBuilder::format`) and by `diesel-seqgen-derive` (compile
//! errors on `#[distributed_id(format = "…")]`). No dependencies.

/// One piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    /// Literal text.
    Literal(String),
    /// `{prefix}`: the spec's prefix.
    Prefix,
    /// `{date}`: the period, the clock formatted with the date pattern.
    Date,
    /// `{series}`: the current series code.
    Series,
    /// `{seq}`: the counter.
    Seq,
    /// `{check}`: the check character(s) of the rest of the ID.
    Check,
    /// `{scope}`: the scope the counter counts in (a scoped spec's company, tenant, ...).
    Scope,
}

/// Why a template is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TemplateError {
    /// `{name}` is not one of `{prefix}`, `{date}`, `{series}`, `{seq}`, `{check}`, `{scope}`.
    UnknownPlaceholder(String),
    /// A `{` without its `}`.
    Unclosed,
    /// A `}` without its `{` (write `}}` for a literal one).
    Unopened,
    /// No `{seq}`: every ID would be the same.
    MissingSeq,
    /// A placeholder used twice.
    Repeated(String),
}

impl std::fmt::Display for TemplateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TemplateError::UnknownPlaceholder(name) => write!(
                f,
                "unknown placeholder `{{{name}}}`; expected `{{prefix}}`, `{{date}}`, `{{series}}`, `{{seq}}`, `{{check}}` or `{{scope}}`"
            ),
            TemplateError::Unclosed => f.write_str("a `{` is not closed; write `{{` for a literal brace"),
            TemplateError::Unopened => f.write_str("a `}` has no `{`; write `}}` for a literal brace"),
            TemplateError::MissingSeq => f.write_str("the template has no `{seq}`, so every ID would be the same"),
            TemplateError::Repeated(name) => write!(f, "`{{{name}}}` appears twice"),
        }
    }
}

/// The template the plain `prefix`/`date`/`pad` spelling stands for: the check, if any, last.
pub(crate) fn default_template(series: bool, check: bool) -> Vec<Part> {
    let mut parts = vec![Part::Prefix, Part::Date];
    if series {
        parts.push(Part::Series);
    }
    parts.push(Part::Seq);
    if check {
        parts.push(Part::Check);
    }
    parts
}

/// A piece of a template's text: literal text (braces unescaped), or what stands between a
/// `{` and its `}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token<'a> {
    Literal(String),
    Placeholder(&'a str),
}

/// The pieces of a template, in order, each error where the text breaks; `{{` and `}}` are
/// literal braces. Read by [`parse_template`] and by `Spec::from_shape`, whose placeholders
/// carry settings (`{date:%Y}`).
pub(crate) fn tokens(template: &str) -> impl Iterator<Item = Result<Token<'_>, TemplateError>> {
    let mut rest = template;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut literal = String::new();
        loop {
            let Some(i) = rest.find(['{', '}']) else {
                literal.push_str(rest);
                rest = "";
                return Some(Ok(Token::Literal(literal)));
            };
            literal.push_str(&rest[..i]);
            let tail = &rest[i..];
            if tail.starts_with("{{") || tail.starts_with("}}") {
                literal.push_str(&tail[..1]);
                rest = &tail[2..];
                if rest.is_empty() {
                    return Some(Ok(Token::Literal(literal)));
                }
                continue;
            }
            if !literal.is_empty() {
                rest = tail;
                return Some(Ok(Token::Literal(literal)));
            }
            // Nothing follows an error.
            let placeholder = tail
                .strip_prefix('{')
                .ok_or(TemplateError::Unopened)
                .and_then(|inner| Ok((inner, inner.find('}').ok_or(TemplateError::Unclosed)?)));
            return Some(match placeholder {
                Ok((inner, end)) => {
                    rest = &inner[end + 1..];
                    Ok(Token::Placeholder(&inner[..end]))
                }
                Err(e) => {
                    rest = "";
                    Err(e)
                }
            });
        }
    })
}

/// Parses a template; `{{` and `}}` are literal braces.
pub(crate) fn parse_template(template: &str) -> Result<Vec<Part>, TemplateError> {
    let mut parts = Vec::new();
    for token in tokens(template) {
        let name = match token? {
            Token::Literal(text) => {
                parts.push(Part::Literal(text));
                continue;
            }
            Token::Placeholder(name) => name,
        };
        let part = match name {
            "prefix" => Part::Prefix,
            "date" => Part::Date,
            "series" => Part::Series,
            "seq" => Part::Seq,
            "check" => Part::Check,
            "scope" => Part::Scope,
            _ => return Err(TemplateError::UnknownPlaceholder(name.to_owned())),
        };
        if parts.contains(&part) {
            return Err(TemplateError::Repeated(name.to_owned()));
        }
        parts.push(part);
    }
    if !parts.contains(&Part::Seq) {
        return Err(TemplateError::MissingSeq);
    }
    Ok(parts)
}

/// Every part a spec sets must appear in its template: above all the date, or the counter's
/// restart in a new period would give IDs that look like the last period's.
pub(crate) fn check_template(
    template: &[Part],
    prefix: bool,
    date: bool,
    series: bool,
    check: bool,
    scoped: bool,
) -> Result<(), &'static str> {
    let has = |part: &Part| template.contains(part);
    if date && !has(&Part::Date) {
        Err("the date part is set but the template has no `{date}`: IDs of different periods would look alike")
    } else if prefix && !has(&Part::Prefix) {
        Err("the prefix is set but the template has no `{prefix}`")
    } else if series && !has(&Part::Series) {
        Err("series are set but the template has no `{series}`")
    } else if !series && has(&Part::Series) {
        Err("the template has `{series}` but no series are set")
    } else if check && !has(&Part::Check) {
        Err("`check` is set but the template has no `{check}`")
    } else if !check && has(&Part::Check) {
        Err("the template has `{check}` but no `check` scheme is set")
    } else if !scoped && has(&Part::Scope) {
        Err("the template has `{scope}` but the key does not count per scope (`scope = \"...\"`, `.scoped()`)")
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_read_left_to_right_and_fail_at_the_first_mistake() {
        assert_eq!(
            parse_template("x{{y}}-{seq}"),
            Ok(vec![Part::Literal("x{y}-".into()), Part::Seq])
        );
        assert_eq!(
            parse_template("{bad} }"),
            Err(TemplateError::UnknownPlaceholder("bad".into()))
        );
        assert_eq!(parse_template("a}b{seq}"), Err(TemplateError::Unopened));
        assert_eq!(parse_template("{seq}{a"), Err(TemplateError::Unclosed));
        assert_eq!(
            parse_template("{seq}{seq}"),
            Err(TemplateError::Repeated("seq".into()))
        );
        assert_eq!(parse_template("{date}"), Err(TemplateError::MissingSeq));
    }

    #[test]
    fn placeholders_keep_what_stands_between_their_braces() {
        let tokens: Vec<_> = tokens("U{date:%Y}{seq:6,widen}}}").collect();
        assert_eq!(
            tokens,
            [
                Ok(Token::Literal("U".into())),
                Ok(Token::Placeholder("date:%Y")),
                Ok(Token::Placeholder("seq:6,widen")),
                Ok(Token::Literal("}".into())),
            ]
        );
    }
}
