//! Whether to colour the output: `--color`, `NO_COLOR`, and whether stdout is a terminal.

use std::ffi::OsStr;

/// `--color`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ColorChoice {
    /// Colour when stdout is a terminal and `NO_COLOR` is unset or empty.
    #[default]
    Auto,
    /// Always colour (even into a pipe or with `NO_COLOR`).
    Always,
    /// Never colour.
    Never,
}

/// The decision, from the choice, whether stdout is a terminal, and the value of `NO_COLOR`
/// (which disables colour when set to anything but the empty string, as no-color.org says).
pub(crate) fn use_colour(
    choice: ColorChoice,
    stdout_is_terminal: bool,
    no_color: Option<&OsStr>,
) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => stdout_is_terminal && no_color.is_none_or(OsStr::is_empty),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_colours_only_a_terminal_without_no_color() {
        let set = Some(OsStr::new("1"));
        let empty = Some(OsStr::new(""));
        assert!(use_colour(ColorChoice::Auto, true, None));
        assert!(use_colour(ColorChoice::Auto, true, empty));
        assert!(!use_colour(ColorChoice::Auto, true, set));
        assert!(!use_colour(ColorChoice::Auto, false, None));
        assert!(use_colour(ColorChoice::Always, false, set));
        assert!(!use_colour(ColorChoice::Never, true, None));
    }
}
