//! ID templates: `format = "{prefix}{date}-{series}{seq}"`.
//!
//! Shared, as source, by the runtime (`SpecBuilder::format`) and by `seqgen-derive` (compile
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
}

/// Why a template is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TemplateError {
    /// `{name}` is not one of `{prefix}`, `{date}`, `{series}`, `{seq}`.
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
                "unknown placeholder `{{{name}}}`; expected `{{prefix}}`, `{{date}}`, `{{series}}`, `{{seq}}` or `{{check}}`"
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

/// Parses a template; `{{` and `}}` are literal braces.
pub(crate) fn parse_template(template: &str) -> Result<Vec<Part>, TemplateError> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                literal.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                literal.push('}');
            }
            '}' => return Err(TemplateError::Unopened),
            '{' => {
                let mut name = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => name.push(c),
                        None => return Err(TemplateError::Unclosed),
                    }
                }
                let part = match name.as_str() {
                    "prefix" => Part::Prefix,
                    "date" => Part::Date,
                    "series" => Part::Series,
                    "seq" => Part::Seq,
                    "check" => Part::Check,
                    _ => return Err(TemplateError::UnknownPlaceholder(name)),
                };
                if parts.contains(&part) {
                    return Err(TemplateError::Repeated(name));
                }
                if !literal.is_empty() {
                    parts.push(Part::Literal(std::mem::take(&mut literal)));
                }
                parts.push(part);
            }
            c => literal.push(c),
        }
    }
    if !literal.is_empty() {
        parts.push(Part::Literal(literal));
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
    } else {
        Ok(())
    }
}
