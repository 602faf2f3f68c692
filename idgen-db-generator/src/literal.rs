//! The lease namespace as a string literal inside the fence's SQL, read the same whatever the
//! session that creates or fires the fence has set: PostgreSQL's
//! `standard_conforming_strings` (a trigger's `WHEN` clause is parsed under the installing
//! session's setting, a PL/pgSQL body under the calling session's) and MariaDB's
//! `NO_BACKSLASH_ESCAPES` (a trigger body is parsed under the `sql_mode` it was created with).
//! A trigger cannot take bound values, so the namespace, which may be any text (it must equal
//! the applications' `LeaseOptions::namespace`), is written so that no setting changes it.

use super::Host;

/// `text` as a literal of `host`'s SQL that reads as `text` under every setting:
///
/// - PostgreSQL: an escape string, `E'…'`, whose backslashes are escapes whatever
///   `standard_conforming_strings` says; `\` and `'` are doubled.
/// - MariaDB: a hexadecimal literal with a character set introducer, `_utf8mb4 X'…'`: no
///   quote or backslash is written, so `sql_mode` cannot change it, and it compares under the
///   column's collation, as a bound value does.
pub(super) fn text_literal(host: Host, text: &str) -> String {
    match host {
        Host::Postgres => format!("E'{}'", text.replace('\\', "\\\\").replace('\'', "''")),
        Host::MariaDb => {
            let hex: String = text.bytes().map(|b| format!("{b:02X}")).collect();
            format!("_utf8mb4 X'{hex}'")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_and_backslashes_are_written_so_that_no_setting_changes_them() {
        let text = r"o'k\n\";
        assert_eq!(text_literal(Host::Postgres, text), r"E'o''k\\n\\'");
        assert_eq!(
            text_literal(Host::MariaDb, text),
            "_utf8mb4 X'6F276B5C6E5C'"
        );
        assert_eq!(text_literal(Host::MariaDb, ""), "_utf8mb4 X''");
        assert_eq!(text_literal(Host::MariaDb, "é"), "_utf8mb4 X'C3A9'");
    }
}
