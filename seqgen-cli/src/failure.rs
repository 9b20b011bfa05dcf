//! Why a command failed, and so its exit code: the library's errors sorted into bad input
//! (2) and a failing database (3).

/// Why a command failed, and so its exit code.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Bad input, or a change refused: nothing changed. Exit code 2.
    Input(String),
    /// The database failed, or writing the output did. Exit code 3.
    Database(String),
    /// Whoever read the output stopped (`seqgen keys | head`): stop too, quietly.
    Closed,
}

impl From<std::io::Error> for Failure {
    fn from(err: std::io::Error) -> Self {
        if err.kind() == std::io::ErrorKind::BrokenPipe {
            Failure::Closed
        } else {
            Failure::Database(format!("could not write the output: {err}"))
        }
    }
}

impl From<diesel_seqgen::Error> for Failure {
    fn from(err: diesel_seqgen::Error) -> Self {
        use diesel_seqgen::Error::*;
        match err {
            UnknownKey { .. }
            | Refused { .. }
            | InvalidSpec(_)
            | Overflow { .. }
            | SeriesExhausted { .. }
            | InvalidId { .. }
            | NotIssued { .. }
            | AlreadyVoided { .. }
            | InvalidScope { .. } => Failure::Input(err.to_string()),
            // In the command line's words: the library's name its functions.
            ScopeMismatch { key, scoped: true } => Failure::Input(format!(
                "key `{key}` counts per scope: say which with --scope"
            )),
            ScopeMismatch { key, scoped: false } => Failure::Input(format!(
                "key `{key}` has one counter, not one per scope: leave out --scope"
            )),
            MissingTable(_) => {
                Failure::Input("db_key is missing or out of date: run `seqgen migrate`".to_owned())
            }
            other => Failure::Database(describe(&other)),
        }
    }
}

/// An error with its causes, one after another.
pub(crate) fn describe(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
