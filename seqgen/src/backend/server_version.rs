//! The oldest server each backend's SQL runs on, checked before migrating: a server below it
//! gets an error that names the version it needs and why, not a syntax error at the first
//! reservation. Each backend reads its version (`SELECT version()` or its like) and asks
//! [`refuse_older`].

use std::fmt;

/// The oldest version of a server seqgen runs on, and the SQL that needs it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Oldest {
    product: &'static str,
    version: (u32, u32, u32),
    needs: &'static str,
}

#[cfg(seqgen_pg)]
pub(crate) const POSTGRES: Oldest = Oldest {
    product: "PostgreSQL",
    version: (12, 0, 0),
    needs: "`WITH … AS MATERIALIZED`",
};

#[cfg(feature = "sqlite")]
pub(crate) const SQLITE: Oldest = Oldest {
    product: "SQLite",
    version: (3, 35, 0),
    needs: "`RETURNING`",
};

#[cfg(seqgen_mysql)]
pub(crate) const MARIADB: Oldest = Oldest {
    product: "MariaDB",
    version: (10, 2, 1),
    needs: "enforced `CHECK` constraints and `ADD COLUMN IF NOT EXISTS`",
};

#[cfg(seqgen_mysql)]
pub(crate) const MYSQL: Oldest = Oldest {
    product: "MySQL",
    version: (8, 0, 16),
    needs: "enforced `CHECK` constraints",
};

/// A server older than seqgen's SQL needs (see the README's "Versions").
#[derive(Debug)]
pub(crate) struct ServerTooOld {
    oldest: Oldest,
    found: String,
}

impl fmt::Display for ServerTooOld {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (major, minor, patch) = self.oldest.version;
        write!(
            f,
            "{} {} is older than {major}.{minor}.{patch}, the oldest seqgen runs on (its SQL \
             needs {}): upgrade the server",
            self.oldest.product, self.found, self.oldest.needs
        )
    }
}

impl std::error::Error for ServerTooOld {}

/// `Err` when the version text `found` (as the server reports it: `15.4 (Debian 15.4-1)`,
/// `10.11.6-MariaDB-0+deb12u1`, `3.40.1`) is below `oldest`; a text with no leading version
/// number passes (nothing to compare: the SQL will tell).
pub(crate) fn refuse_older(found: &str, oldest: Oldest) -> Result<(), ServerTooOld> {
    let digits = found
        .trim()
        .split(|c: char| !c.is_ascii_digit() && c != '.')
        .next()
        .unwrap_or_default();
    let mut parts = digits.split('.').map(|part| part.parse::<u32>().ok());
    let version = match (parts.next().flatten(), parts.next(), parts.next()) {
        (Some(major), minor, patch) => (
            major,
            minor.flatten().unwrap_or(0),
            patch.flatten().unwrap_or(0),
        ),
        (None, ..) => return Ok(()),
    };
    if version < oldest.version {
        return Err(ServerTooOld {
            oldest,
            found: found.trim().to_owned(),
        });
    }
    Ok(())
}

#[cfg(all(test, feature = "sqlite", seqgen_pg, seqgen_mysql))]
mod tests {
    use super::*;

    #[test]
    fn versions_as_servers_report_them() {
        let passes = [
            ("15.4 (Debian 15.4-1.pgdg120+1)", POSTGRES),
            ("12.0", POSTGRES),
            ("17devel", POSTGRES),
            ("10.11.6-MariaDB-0+deb12u1", MARIADB),
            ("10.2.1-MariaDB", MARIADB),
            ("8.0.36", MYSQL),
            ("3.40.1", SQLITE),
            ("3.35.0", SQLITE),
            ("something else", POSTGRES),
        ];
        for (found, oldest) in passes {
            assert!(refuse_older(found, oldest).is_ok(), "{found}");
        }
        let refused = [
            ("11.22 (Ubuntu 11.22-1)", POSTGRES),
            ("10.1.48-MariaDB", MARIADB),
            ("8.0.15", MYSQL),
            ("5.7.44-log", MYSQL),
            ("3.34.1", SQLITE),
        ];
        for (found, oldest) in refused {
            let err = refuse_older(found, oldest).unwrap_err().to_string();
            assert!(err.contains(found) && err.contains("upgrade"), "{err}");
        }
    }
}
