//! idgen-adopt's identifier checks (`SqlName::parse`, which `AdoptOptions` runs on every
//! table, column, sequence and progress-table name): never panics; a name that passes is kept
//! exactly, quotes back to itself for each dialect with no quote character inside a part, and
//! is accepted by exactly the `AdoptOptions` setters whose rule it meets.
#![no_main]

use idgen_core::Layout;
use idgen_adopt::AdoptOptions;
use idgen_sql::{Dialect, QuotedName, SqlName};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let name = SqlName::parse("table", s);
    match &name {
        Ok(n) => {
            assert_eq!(n.as_str(), s);
            assert_eq!(n.to_string(), s);
            let parts: Vec<&str> = s.split('.').collect();
            assert!(parts.len() <= 2, "{s:?}");
            for p in &parts {
                assert!((1..=63).contains(&p.len()), "{s:?}");
                assert!(!p.as_bytes()[0].is_ascii_digit(), "{s:?}");
                assert!(
                    p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
                    "{s:?}"
                );
            }
            for dialect in [Dialect::Postgres, Dialect::MySql, Dialect::Sqlite] {
                let q = dialect.quote();
                let quoted = n.quoted(dialect);
                let unquoted: Vec<&str> = quoted
                    .split('.')
                    .map(|p| {
                        let inner = p.strip_prefix(q).and_then(|p| p.strip_suffix(q));
                        let inner = inner.unwrap_or_else(|| panic!("{quoted:?} part {p:?}"));
                        assert!(!inner.contains(q), "{quoted:?} escapes its quotes");
                        inner
                    })
                    .collect();
                assert_eq!(unquoted, parts);
            }
        }
        Err(e) => {
            let text = e.to_string();
            assert!(text.starts_with("table name "), "{text}");
        }
    }
    let ok = name.is_ok();
    let options = AdoptOptions::snowflake(s, Layout::TWITTER);
    assert_eq!(options.is_ok(), ok, "{s:?}");
    if let Ok(o) = &options {
        assert_eq!(o.table(), s);
    }
    let valid = AdoptOptions::keep_keys("orders").expect("a plain name");
    assert_eq!(
        valid.clone().public_id(s).is_ok(),
        ok && !s.contains('.'),
        "public-ID column {s:?}"
    );
    assert_eq!(valid.progress_table(s).is_ok(), ok, "progress table {s:?}");
    let hilo = AdoptOptions::hilo("orders", 100).expect("a plain name");
    assert_eq!(hilo.sequence(s).is_ok(), ok, "sequence {s:?}");
});
