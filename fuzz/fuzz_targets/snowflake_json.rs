//! serde_json deserialization of `SnowflakeId`: never panics, and what it accepts round-trips.
#![no_main]

use idgen_core::SnowflakeId;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(id) = serde_json::from_slice::<SnowflakeId>(data) {
        assert!(id.get() >= 0);
        let json = serde_json::to_string(&id).expect("an ID serializes");
        assert_eq!(serde_json::from_str::<SnowflakeId>(&json).ok(), Some(id));
    }
});
