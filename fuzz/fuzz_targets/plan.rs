//! `idgen plan`'s inputs (`Requirements`) through `Layout::plan`: never panics; a plan meets
//! the requirements (both its layout and the narrowest), its spec reads back through the CLI's
//! `--layout` parser; a refusal's "at most" figures are exact: the figure plans, one more does
//! not.
//!
//! Input: 29 bytes, little-endian: nodes u64, rate per node u64, years u32, max bits u8,
//! epoch ms i64 (shorter input is padded with zeros).
#![no_main]

use idgen_core::Layout;
use idgen_core::snowflake::plan::{PlanError, Requirements};
use libfuzzer_sys::fuzz_target;

fn requirements(data: &[u8]) -> Requirements {
    let mut b = [0u8; 29];
    let n = data.len().min(29);
    b[..n].copy_from_slice(&data[..n]);
    let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
    Requirements {
        nodes: u64_at(0),
        rate_per_node: u64_at(8),
        years: u32::from_le_bytes(b[16..20].try_into().unwrap()),
        max_bits: b[20],
        epoch_ms: i64::from_le_bytes(b[21..29].try_into().unwrap()),
    }
}

fn plans(r: &Requirements) -> bool {
    Layout::plan(r).is_ok()
}

fuzz_target!(|data: &[u8]| {
    let r = requirements(data);
    match Layout::plan(&r) {
        Ok(plan) => {
            assert!(r.is_met_by(&plan.layout), "{r:?}: {:?}", plan.layout);
            assert!(r.is_met_by(&plan.narrowest), "{r:?}: {:?}", plan.narrowest);
            assert!(plan.narrowest.total_bits() <= plan.layout.total_bits());
            assert_eq!(
                plan.spare_bits(),
                plan.layout.total_bits() - plan.narrowest.total_bits()
            );
            let _ = plan.preferred_unit();
            let l = plan.layout;
            // What `idgen plan` prints of it.
            let _ = (l.lifetime_years(), l.last_rfc3339(), l.ids_per_second());
            idgen_fuzz::cli::spec_reads_back(&l);
        }
        Err(e) => {
            let _ = idgen_core::Error::from(e.clone()).to_string();
            if let PlanError::TooWide(w) = e {
                assert!(w.needs_bits() > r.max_bits);
                let _ = w.over_by();
                if let Some(y) = w.max_years {
                    assert!(
                        plans(&Requirements { years: y, ..r }),
                        "{r:?}: max years {y}"
                    );
                    if let Some(more) = y.checked_add(1) {
                        assert!(
                            !plans(&Requirements { years: more, ..r }),
                            "{r:?}: {more} years plan"
                        );
                    }
                }
                if let Some(v) = w.max_rate_per_node {
                    assert!(
                        plans(&Requirements {
                            rate_per_node: v,
                            ..r
                        }),
                        "{r:?}: max rate {v}"
                    );
                    if let Some(more) = v.checked_add(1) {
                        assert!(
                            !plans(&Requirements {
                                rate_per_node: more,
                                ..r
                            }),
                            "{r:?}: rate {more} plans"
                        );
                    }
                }
                if let Some(n) = w.max_nodes {
                    assert!(
                        plans(&Requirements { nodes: n, ..r }),
                        "{r:?}: max nodes {n}"
                    );
                    if let Some(more) = n.checked_add(1) {
                        assert!(
                            !plans(&Requirements { nodes: more, ..r }),
                            "{r:?}: {more} nodes plan"
                        );
                    }
                }
            }
        }
    }
});
