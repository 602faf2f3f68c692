//! The result tables, in Markdown, with every figure also as a ratio to `BIGINT` identity.

use crate::keys::KeyKind;
use crate::measure::KindResult;

const MIB: f64 = 1024.0 * 1024.0;

/// `value / baseline` as `1.23×`, or `—` when there is no baseline or it is zero.
fn ratio(value: f64, baseline: Option<f64>) -> String {
    match baseline {
        Some(base) if base > 0.0 => format!("{:.2}×", value / base),
        _ => "—".to_owned(),
    }
}

/// The table for one database. `innodb` drops the `pgstatindex` columns and names the index
/// as what it is there (the clustered `PRIMARY`, rows included).
pub(crate) fn table(results: &[(KeyKind, KindResult)], innodb: bool) -> String {
    let base = results
        .iter()
        .find(|(kind, _)| *kind == KeyKind::Identity)
        .map(|(_, result)| *result);
    let mut out = String::new();
    if innodb {
        out.push_str(
            "| key | rows/s | ×ident | PRIMARY (clustered) MiB | ×ident | leaf pages | rows/leaf page | ×ident |\n\
             |---|---:|---:|---:|---:|---:|---:|---:|\n",
        );
    } else {
        out.push_str(
            "| key | rows/s | ×ident | PK index MiB | ×ident | leaf pages | rows/leaf page | \
             avg leaf density % | ×ident | leaf fragmentation % | ×ident |\n\
             |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        );
    }
    for (kind, result) in results {
        let index = result.index;
        let mib = index.index_bytes as f64 / MIB;
        let mut row = format!(
            "| {} | {:.0} | {} | {:.2} | {} | {} | {:.1} |",
            kind.label(),
            result.rows_per_sec,
            ratio(result.rows_per_sec, base.map(|b| b.rows_per_sec)),
            mib,
            ratio(mib, base.map(|b| b.index.index_bytes as f64 / MIB)),
            index.leaf_pages,
            result.rows_per_leaf(),
        );
        if innodb {
            row.push_str(&format!(
                " {} |",
                ratio(result.rows_per_leaf(), base.map(|b| b.rows_per_leaf()))
            ));
        } else {
            let density = index.leaf_density_pct.unwrap_or(f64::NAN);
            let fragmentation = index.leaf_fragmentation_pct.unwrap_or(f64::NAN);
            row.push_str(&format!(
                " {:.1} | {} | {:.1} | {} |",
                density,
                ratio(density, base.and_then(|b| b.index.leaf_density_pct)),
                fragmentation,
                ratio(
                    fragmentation,
                    base.and_then(|b| b.index.leaf_fragmentation_pct)
                ),
            ));
        }
        out.push_str(&row);
        out.push('\n');
    }
    out
}
