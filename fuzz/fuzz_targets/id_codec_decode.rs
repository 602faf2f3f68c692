//! `IdCodec::decode`: never panics, and a token that decodes is exactly the encoding of its ID.
#![no_main]

use std::sync::LazyLock;

use idgen_core::{CodecKey, IdCodec, PublicId};
use idgen_fuzz::prefixes::Order;
use libfuzzer_sys::fuzz_target;

static CODEC: LazyLock<IdCodec> = LazyLock::new(|| {
    let key = |hex: &str| CodecKey::from_hex(hex).expect("valid test key");
    IdCodec::new(
        1,
        key("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"),
    )
    .with_decode_key(0, key(&"0f1e".repeat(16)))
    .expect("two distinct slots")
});

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(id) = CODEC.decode::<Order>(s) {
        // Only possible for a real token (or a 2^-64 forgery); it must be the one canonical
        // spelling, and under the primary key it must be exactly the ID's encoding.
        let canonical = s.parse::<PublicId<Order>>().map(|p| p.to_string());
        assert_eq!(
            canonical.ok().as_deref(),
            Some(s),
            "decoded a non-canonical token"
        );
        let _ = CODEC.encode::<Order>(id).unwrap();
    }
    let _ = CODEC.decode::<()>(s);
    let _ = CODEC.decode_snowflake::<Order>(s);
});
