//! `PublicId` text parsing: never panics, and whatever parses is the canonical spelling.
#![no_main]

use idgen_core::{PublicId, PublicIdPrefix};
use idgen_fuzz::prefixes::{Order, PreFix};
use libfuzzer_sys::fuzz_target;

fn check<T: PublicIdPrefix>(s: &str) {
    if let Ok(id) = s.parse::<PublicId<T>>() {
        assert_eq!(
            id.to_string(),
            s,
            "strict parse accepted a non-canonical spelling"
        );
    }
    if let Ok(id) = PublicId::<T>::parse_ignore_case(s) {
        assert_eq!(id.to_string(), s.to_ascii_lowercase());
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        check::<Order>(s);
        check::<PreFix>(s);
        check::<()>(s);
    }
});
