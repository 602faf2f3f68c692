//! `AnyPublicId` (a public ID whose prefix is known only at run time), from text and from JSON:
//! never panics; what parses is the canonical spelling, is rebuilt by `AnyPublicId::new` from
//! its prefix and UUID, and agrees with the typed `PublicId<T>` parser for `T`'s prefix.
#![no_main]

use idgen_core::{AnyPublicId, PublicId, PublicIdPrefix};
use idgen_fuzz::prefixes::{Order, PreFix};
use libfuzzer_sys::fuzz_target;

fn agrees<T: PublicIdPrefix>(s: &str, any: &Result<AnyPublicId, idgen_core::Error>) {
    let typed = s.parse::<PublicId<T>>();
    match (any, &typed) {
        (Ok(a), Ok(t)) => assert_eq!(a.typed::<T>().ok().as_ref(), Some(t), "{s:?}"),
        (Ok(a), Err(_)) => {
            assert_ne!(a.prefix(), T::PREFIX, "{s:?}: typed refuses, any accepts");
            assert!(a.typed::<T>().is_err());
        }
        (Err(e), Ok(_)) => panic!("{s:?}: typed accepts, any refuses: {e}"),
        (Err(_), Err(_)) => {}
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        let any = s.parse::<AnyPublicId>();
        agrees::<Order>(s, &any);
        agrees::<PreFix>(s, &any);
        agrees::<()>(s, &any);
        match &any {
            Ok(id) => {
                assert_eq!(id.to_string(), s, "accepted a non-canonical spelling");
                let rebuilt = AnyPublicId::new(id.prefix(), id.uuid()).expect("its own prefix");
                assert_eq!(&rebuilt, id);
                assert!(id.prefix().len() <= 63);
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
        // A runtime prefix: whatever `new` accepts prints as text that parses back to it.
        if let Some((prefix, _)) = s.rsplit_once('_') {
            if let Ok(id) = AnyPublicId::new(prefix, idgen_core::uuid::Uuid::from_u128(0x0123)) {
                assert_eq!(id.to_string().parse::<AnyPublicId>().ok(), Some(id));
            }
        }
    }
    if let Ok(id) = serde_json::from_slice::<AnyPublicId>(data) {
        let json = serde_json::to_string(&id).expect("a public ID serializes");
        assert_eq!(serde_json::from_str::<AnyPublicId>(&json).ok(), Some(id));
    }
});
