//! Counter and table names: they are written into SQL, so only plain identifiers pass.

use crate::DieselError;

/// The longest identifier part PostgreSQL keeps (63 bytes); MySQL/MariaDB allow 64.
const MAX_PART: usize = 63;

/// Checks that `name` is `name` or `schema.name`, each part 1..=63 ASCII letters, digits or
/// `_`, not starting with a digit (idgen-sqlx's rule).
pub(crate) fn validate(name: &str) -> Result<(), DieselError> {
    let invalid = |reason| {
        DieselError::Core(idgen_core::Error::HiLoInvalidCounterName {
            name: name.to_owned(),
            reason,
        })
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
            return Err(invalid("a part starting with a digit"));
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
    fn plain_and_qualified_names_pass_everything_else_is_refused_by_name() {
        for name in ["hilo", "orders_id_seq", "app.orders", "_x9"] {
            assert!(validate(name).is_ok(), "{name}");
        }
        for name in [
            "",
            "a.b.c",
            ".a",
            "9lives",
            "orders; DROP TABLE x",
            "o'rders",
            "ünï",
        ] {
            let err = validate(name).expect_err(name);
            assert!(err.to_string().contains(&format!("{name:?}")), "{err}");
        }
        assert!(validate(&"a".repeat(64)).is_err());
    }
}
