//! `Id<T>` from text (`FromStr`) and from JSON: never panics; text that parses is the canonical
//! spelling and agrees with `SnowflakeId`; JSON that parses round-trips and agrees with
//! `SnowflakeId`'s JSON (the same rules, only the messages name `T`).
#![no_main]

use idgen_core::{Id, SnowflakeId};
use libfuzzer_sys::fuzz_target;

struct Order;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        let id = s.parse::<Id<Order>>();
        assert_eq!(
            id.as_ref().ok().map(|id| id.to_snowflake()),
            s.parse::<SnowflakeId>().ok(),
            "Id<T> and SnowflakeId disagree on {s:?}"
        );
        match id {
            Ok(id) => {
                assert_eq!(id.to_string(), s, "accepted a non-canonical spelling");
                assert_eq!(u64::try_from(id.get()).ok(), Some(id.as_u64()));
                assert_eq!(Id::<Order>::try_from(id.get()).ok(), Some(id));
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
    let json = serde_json::from_slice::<Id<Order>>(data);
    assert_eq!(
        json.as_ref().ok().map(|id| id.to_snowflake()),
        serde_json::from_slice::<SnowflakeId>(data).ok(),
        "Id<T> and SnowflakeId JSON disagree"
    );
    if let Ok(id) = json {
        let text = serde_json::to_string(&id).expect("an ID serializes");
        assert_eq!(text, format!("\"{id}\""));
        assert_eq!(serde_json::from_str::<Id<Order>>(&text).ok(), Some(id));
        // Binary formats and `as_number` carry the i64.
        assert_eq!(
            serde_json::from_str::<Id<Order>>(&id.get().to_string()).ok(),
            Some(id)
        );
    }
});
