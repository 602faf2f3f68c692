//! `SnowflakeId::from_str`: never panics, and agrees with `i64::from_str` on what it accepts.
#![no_main]

use idgen_core::SnowflakeId;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    match s.parse::<SnowflakeId>() {
        Ok(id) => {
            assert!(
                s.bytes().all(|b| b.is_ascii_digit()),
                "accepted a non-digit in {s:?}"
            );
            assert_eq!(s.parse::<i64>().ok(), Some(id.get()));
            assert_eq!(id.to_string().parse::<SnowflakeId>().ok(), Some(id));
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
