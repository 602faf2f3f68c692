//! Usage errors (exit status 2): clap's own, with the bad value named once.
//!
//! clap words a value parser's error as `invalid value 'X' for '--opt <V>': <message>`. Our
//! parsers' messages already name the value (`"x" is not a node: …`), so that would say it
//! twice; such errors are printed as `--opt <V>: <message>` instead. Messages that do not name
//! the value (std's `invalid digit found in string`) keep clap's wording.

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// The text to print for `err` (ending in a newline), and whether it is clap's own rendering.
pub(crate) fn render(err: &clap::Error) -> String {
    if err.kind() != ErrorKind::ValueValidation {
        return err.render().to_string();
    }
    let text = |kind| match err.get(kind) {
        Some(ContextValue::String(s)) => Some(s.as_str()),
        _ => None,
    };
    let (Some(arg), Some(value)) = (
        text(ContextKind::InvalidArg),
        text(ContextKind::InvalidValue),
    ) else {
        return err.render().to_string();
    };
    let Some(source) = std::error::Error::source(err) else {
        return err.render().to_string();
    };
    let message = source.to_string();
    if value.is_empty() || !message.contains(value) {
        return err.render().to_string();
    }
    format!("error: {arg}: {message}\n\nFor more information, try '--help'.\n")
}

/// Parses `-n`/`--count`: a whole number of at least 1.
pub(crate) fn parse_count(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("0 is too few: the count is at least 1".into()),
        Ok(n) if !text.starts_with('+') => Ok(n),
        _ => Err(format!(
            "{text:?} is not a count: give a whole number from 1 to {}",
            u64::MAX
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_whole_numbers_from_one() {
        assert_eq!(parse_count("1"), Ok(1));
        assert_eq!(parse_count("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(
            parse_count("0").unwrap_err(),
            "0 is too few: the count is at least 1"
        );
        for bad in ["-3", "+3", "", "1.5", "18446744073709551616", "ten"] {
            let err = parse_count(bad).unwrap_err();
            assert!(err.starts_with(&format!("{bad:?} is not a count")), "{err}");
        }
    }
}
