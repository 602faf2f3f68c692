//! `POST /api/inspect` bodies: never panics; what comes back is the pasted ID (see
//! `idgen_fuzz::cli::web_inspect`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| idgen_fuzz::cli::web_inspect(data));
