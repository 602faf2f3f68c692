//! The layout text `--layout` and the web page take (presets, `custom:KEY=VALUE,…`): never
//! panics; what parses is a valid layout whose canonical spec and display read back as the
//! same layout under the same name (see `idgen_fuzz::cli::layout_text`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        idgen_fuzz::cli::layout_text(s);
    }
});
