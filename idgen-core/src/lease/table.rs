//! The lease table's name: checked, then quoted for each database.

use crate::Error;

/// The longest identifier part accepted: PostgreSQL truncates names past 63 bytes.
const MAX_PART_LEN: usize = 63;

/// A checked lease-table name, `table` or `schema.table`, each part `[A-Za-z_][A-Za-z0-9_]*` of
/// at most 63 characters: what the database adapters' lease stores accept.
///
/// The name is interpolated into SQL (identifiers cannot be bound), so anything else is refused
/// with [`Error::InvalidOptions`] naming the name and the rule it breaks.
///
/// ```
/// use idgen_core::lease::TableName;
///
/// let t = TableName::parse("ops.worker_lease")?;
/// assert_eq!(t.quoted('"'), r#""ops"."worker_lease""#);
/// assert_eq!(t.quoted('`'), "`ops`.`worker_lease`");
/// assert!(TableName::parse("lease; DROP TABLE x").is_err());
/// # Ok::<(), idgen_core::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableName {
    parts: Vec<String>,
}

impl TableName {
    /// Checks `name`.
    pub fn parse(name: &str) -> Result<Self, Error> {
        Self::parse_as("lease table name", name)
    }

    /// Checks `name`, an SQL name of another kind (`what`, e.g. `"generator function name"`,
    /// for the error message).
    pub(crate) fn parse_as(what: &str, name: &str) -> Result<Self, Error> {
        let invalid = |why: String| {
            Err(Error::InvalidOptions {
                reason: format!("{what} {name:?} {why}"),
            })
        };
        let parts: Vec<&str> = name.split('.').collect();
        if parts.len() > 2 {
            return invalid(format!(
                "has {} dot-separated parts; at most 2 (schema.table) are allowed",
                parts.len()
            ));
        }
        for part in &parts {
            let mut chars = part.chars();
            match chars.next() {
                None => return invalid("has an empty part".to_owned()),
                Some(c) if !(c.is_ascii_alphabetic() || c == '_') => {
                    return invalid(format!(
                        "must start each part with an ASCII letter or '_', not {c:?}"
                    ));
                }
                _ => {}
            }
            if let Some(c) = chars.find(|c| !(c.is_ascii_alphanumeric() || *c == '_')) {
                return invalid(format!(
                    "may contain only ASCII letters, digits and '_', not {c:?}"
                ));
            }
            if part.len() > MAX_PART_LEN {
                return invalid(format!(
                    "has a part of {} characters; the limit is {MAX_PART_LEN}",
                    part.len()
                ));
            }
        }
        Ok(TableName {
            parts: parts.into_iter().map(str::to_owned).collect(),
        })
    }

    /// The name as given, unquoted: `schema.table` or `table`.
    pub(crate) fn unquoted(&self) -> String {
        self.parts.join(".")
    }

    /// Each part in `q` quotes: `"schema"."table"` (PostgreSQL, SQLite), `` `table` `` (MySQL).
    pub fn quoted(&self, q: char) -> String {
        self.parts
            .iter()
            .map(|p| format!("{q}{p}{q}"))
            .collect::<Vec<_>>()
            .join(".")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_schema_qualified_names_are_quoted() {
        let t = TableName::parse("idgen_worker_lease").unwrap();
        assert_eq!(t.quoted('"'), "\"idgen_worker_lease\"");
        assert_eq!(t.quoted('`'), "`idgen_worker_lease`");
        let t = TableName::parse("ops.Leases_2").unwrap();
        assert_eq!(t.quoted('"'), "\"ops\".\"Leases_2\"");
    }

    #[test]
    fn anything_that_could_escape_the_identifier_is_refused() {
        for (name, needle) in [
            ("", "empty part"),
            ("a.", "empty part"),
            ("a.b.c", "3 dot-separated parts"),
            ("1abc", "start each part"),
            ("lease; DROP TABLE users", "not ';'"),
            ("lease users", "not ' '"),
            ("lease\"", "not '\"'"),
            ("lease`", "not '`'"),
            ("tæble", "not 'æ'"),
        ] {
            let err = TableName::parse(name).unwrap_err();
            assert!(matches!(err, Error::InvalidOptions { .. }));
            let text = err.to_string();
            assert!(text.contains(needle), "{name:?}: {text}");
            assert!(text.contains(&format!("{name:?}")), "{text}");
        }
        let long = "a".repeat(64);
        let err = TableName::parse(&long).unwrap_err().to_string();
        assert!(err.contains("64 characters; the limit is 63"), "{err}");
        assert!(TableName::parse(&"a".repeat(63)).is_ok());
    }
}
