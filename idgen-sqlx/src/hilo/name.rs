//! Counter names: they are written into SQL, so only plain identifiers pass.

use crate::Error;

/// The longest identifier part PostgreSQL keeps (63 bytes); MySQL/MariaDB allow 64.
const MAX_PART: usize = 63;

/// Checks that `name` is `name` or `schema.name`, each part 1..=63 ASCII letters, digits or
/// `_`, not starting with a digit.
pub(crate) fn validate(name: &str) -> Result<(), Error> {
    let invalid = |reason| Error::HiLoInvalidCounterName {
        name: name.to_owned(),
        reason,
    };
    let parts: Vec<&str> = name.split('.').collect();
    if parts.len() > 2 {
        return Err(invalid("more than one `.`"));
    }
    for part in parts {
        if part.is_empty() {
            return Err(invalid("an empty part"));
        }
        if part.len() > MAX_PART {
            return Err(invalid("a part longer than 63 characters"));
        }
        if part.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(invalid("a part starts with a digit"));
        }
        if !part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(invalid(
                "a character other than ASCII letters, digits, `_` and one `.`",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::validate;

    #[test]
    fn plain_and_qualified_names_pass() {
        for name in [
            "hilo",
            "orders_id_seq",
            "app.orders",
            "_x9",
            &"a".repeat(63),
        ] {
            assert!(validate(name).is_ok(), "{name}");
        }
    }

    #[test]
    fn everything_else_is_refused_naming_the_value() {
        for name in [
            "",
            "a.b.c",
            ".a",
            "a.",
            "9lives",
            "orders; DROP TABLE x",
            "o'rders",
            "\"q\"",
            "ünï",
            &"a".repeat(64),
        ] {
            let err = validate(name).expect_err(name);
            assert!(err.to_string().contains(&format!("{name:?}")), "{err}");
        }
    }
}
