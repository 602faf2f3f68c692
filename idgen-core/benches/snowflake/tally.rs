//! Totals of every timed run of each benchmark, and the comparison table printed at the end.

use std::cell::RefCell;
use std::time::Duration;

/// One benchmark's totals: IDs issued and time taken, over all of criterion's timed runs
/// (warm-up and measurement).
struct Row {
    section: &'static str,
    name: &'static str,
    /// IDs per second the generator cannot exceed, if it has such a cap.
    cap_per_s: Option<f64>,
    /// The name of our row this one is compared with; `None` for our own rows.
    versus: Option<&'static str>,
    ids: u64,
    elapsed: Duration,
}

impl Row {
    fn ns_per_id(&self) -> f64 {
        self.elapsed.as_secs_f64() * 1e9 / self.ids as f64
    }

    fn ids_per_s(&self) -> f64 {
        self.ids as f64 / self.elapsed.as_secs_f64()
    }
}

/// What one benchmark is: where it goes in the table and what it is compared with.
#[derive(Clone, Copy)]
pub(crate) struct Spec {
    pub(crate) section: &'static str,
    pub(crate) name: &'static str,
    pub(crate) cap_per_s: Option<f64>,
    pub(crate) versus: Option<&'static str>,
}

#[derive(Default)]
pub(crate) struct Tally {
    rows: RefCell<Vec<Row>>,
}

impl Tally {
    /// Adds a timed run of `ids` IDs to the row of `spec`.
    pub(crate) fn add(&self, spec: Spec, ids: u64, elapsed: Duration) {
        let mut rows = self.rows.borrow_mut();
        let row = match rows
            .iter_mut()
            .position(|r| r.section == spec.section && r.name == spec.name)
        {
            Some(i) => &mut rows[i],
            None => {
                rows.push(Row {
                    section: spec.section,
                    name: spec.name,
                    cap_per_s: spec.cap_per_s,
                    versus: spec.versus,
                    ids: 0,
                    elapsed: Duration::ZERO,
                });
                rows.last_mut().expect("just pushed")
            }
        };
        row.ids += ids;
        row.elapsed += elapsed;
    }

    /// The table in Markdown: IDs/s, ns per ID, share of the cap, and our cost per ID divided by
    /// the peer's (below 1: ours is cheaper).
    pub(crate) fn table(&self) -> String {
        let rows = self.rows.borrow();
        let mut out = String::from(
            "| section | generator | IDs/s | ns/ID | % of cap | ours ÷ peer (ns/ID) |\n\
             |---|---|---:|---:|---:|---:|\n",
        );
        for row in rows.iter() {
            let share = row.cap_per_s.map_or("—".to_string(), |cap| {
                format!("{:.1} %", 100.0 * row.ids_per_s() / cap)
            });
            let ratio = row
                .versus
                .and_then(|ours| {
                    rows.iter()
                        .find(|r| r.section == row.section && r.name == ours)
                })
                .map_or("—".to_string(), |ours| {
                    format!("{:.2}", ours.ns_per_id() / row.ns_per_id())
                });
            out.push_str(&format!(
                "| {} | {} | {} | {:.1} | {} | {} |\n",
                row.section,
                row.name,
                group_thousands(row.ids_per_s()),
                row.ns_per_id(),
                share,
                ratio
            ));
        }
        out
    }
}

fn group_thousands(x: f64) -> String {
    let digits = format!("{:.0}", x);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
