//! `POST /api/compose` bodies: never panics; an ID that comes back decomposes into exactly the
//! inputs and composes again into itself (see `idgen_fuzz::cli::web_compose`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| idgen_fuzz::cli::web_compose(data));
