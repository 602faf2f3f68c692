//! [`SqlName`]: the one rule for names written into SQL (identifiers cannot be bound) and
//! into the etcd and Redis stores' keys.

use crate::error::{Error, ErrorKind};

/// The longest identifier part accepted: PostgreSQL truncates names past 63 bytes.
const MAX_PART_LEN: usize = 63;

/// A checked table, sequence or counter name: `name` or `schema.name`, each part
/// `[A-Za-z_][A-Za-z0-9_]*` of at most 63 characters. Names are interpolated into SQL, so
/// anything else is refused with [`ErrorKind::InvalidSqlName`] naming what the name is for, the
/// name, and the rule it breaks.
///
/// The same rule checks the etcd and Redis stores' key prefixes and counter names. In SQL, the
/// lease table's name is written quoted ([`quoted_with`](Self::quoted_with), or
/// `idgen_sql::QuotedName::quoted` for a dialect); hi-lo counter names are written as they are
/// ([`as_str`](Self::as_str)), so PostgreSQL folds them to lower case.
///
/// ```
/// use idgen_engine::SqlName;
///
/// let t = SqlName::parse("lease table", "ops.worker_lease")?;
/// assert_eq!(t.quoted_with('"'), r#""ops"."worker_lease""#);
/// assert_eq!(t.quoted_with('`'), "`ops`.`worker_lease`");
/// assert_eq!(t.as_str(), "ops.worker_lease");
///
/// let err = SqlName::parse("hi-lo counter", "orders; DROP TABLE x").unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "hi-lo counter name \"orders; DROP TABLE x\" is invalid: it may contain only ASCII letters, \
///      digits and '_', not ';' (a name is `name` or `schema.name`, each part 1 to 63 ASCII \
///      letters, digits or `_`, not starting with a digit)"
/// );
/// # Ok::<(), idgen_engine::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SqlName {
    name: String,
}

impl SqlName {
    /// Checks `name`; `what` says what it names in the error (`"lease table"`, `"hi-lo
    /// counter"`, …).
    pub fn parse(what: &'static str, name: &str) -> Result<SqlName, Error> {
        match rule_broken(name) {
            None => Ok(SqlName {
                name: name.to_owned(),
            }),
            Some(reason) => Err(ErrorKind::InvalidSqlName {
                what,
                name: name.chars().take(64).collect(),
                reason,
            }
            .into()),
        }
    }

    /// The name as given (`schema.name`), for SQL that does not quote it.
    pub fn as_str(&self) -> &str {
        &self.name
    }

    /// Each part in `quote` quotes (for SQL written by hand: `"` or `` ` ``).
    ///
    /// ```
    /// let t = idgen_engine::SqlName::parse("table", "ops.leases")?;
    /// assert_eq!(t.quoted_with('`'), "`ops`.`leases`");
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn quoted_with(&self, q: char) -> String {
        self.name
            .split('.')
            .map(|p| format!("{q}{p}{q}"))
            .collect::<Vec<_>>()
            .join(".")
    }
}

impl std::fmt::Display for SqlName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

/// The rule `name` breaks, in words, or `None`.
fn rule_broken(name: &str) -> Option<String> {
    let parts: Vec<&str> = name.split('.').collect();
    if parts.len() > 2 {
        return Some(format!(
            "it has {} dot-separated parts; at most 2 (schema.name) are allowed",
            parts.len()
        ));
    }
    for part in &parts {
        let mut chars = part.chars();
        match chars.next() {
            None => return Some("it has an empty part".to_owned()),
            Some(c) if !(c.is_ascii_alphabetic() || c == '_') => {
                return Some(format!(
                    "it must start each part with an ASCII letter or '_', not {c:?}"
                ));
            }
            _ => {}
        }
        if let Some(c) = chars.find(|c| !(c.is_ascii_alphanumeric() || *c == '_')) {
            return Some(format!(
                "it may contain only ASCII letters, digits and '_', not {c:?}"
            ));
        }
        if part.len() > MAX_PART_LEN {
            return Some(format!(
                "it has a part of {} characters; the limit is {MAX_PART_LEN}",
                part.len()
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_schema_qualified_names_pass_and_are_quoted() {
        for name in [
            "hilo",
            "orders_id_seq",
            "app.orders",
            "_x9",
            &"a".repeat(63),
        ] {
            assert!(SqlName::parse("t", name).is_ok(), "{name}");
        }
        let t = SqlName::parse("t", "ops.Leases_2").unwrap();
        assert_eq!(t.quoted_with('"'), "\"ops\".\"Leases_2\"");
        assert_eq!(t.quoted_with('`'), "`ops`.`Leases_2`");
    }

    #[test]
    fn anything_that_could_escape_the_identifier_is_refused_naming_it() {
        for (name, needle) in [
            ("", "empty part"),
            ("a.", "empty part"),
            (".a", "empty part"),
            ("a.b.c", "3 dot-separated parts"),
            ("1abc", "start each part"),
            ("lease; DROP TABLE users", "not ';'"),
            ("lease users", "not ' '"),
            ("o'rders", "not '\\''"),
            ("lease\"", "not '\"'"),
            ("lease`", "not '`'"),
            ("tæble", "not 'æ'"),
        ] {
            let err = SqlName::parse("lease table", name).unwrap_err();
            assert!(matches!(
                err.kind(),
                ErrorKind::InvalidSqlName {
                    what: "lease table",
                    ..
                }
            ));
            let text = err.to_string();
            assert!(text.contains(needle), "{name:?}: {text}");
            assert!(text.contains(&format!("{name:?}")), "{text}");
        }
        let err = SqlName::parse("t", &"a".repeat(64))
            .unwrap_err()
            .to_string();
        assert!(err.contains("64 characters; the limit is 63"), "{err}");
    }
}
