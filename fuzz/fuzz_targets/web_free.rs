//! `POST /api/leases/free` bodies: never panics; the node ID read is exactly the trimmed
//! decimal text (see `idgen_fuzz::cli::web_free`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| idgen_fuzz::cli::web_free(data));
