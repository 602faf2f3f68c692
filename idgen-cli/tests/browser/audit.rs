//! What the browser tests check of every view besides its numbers: the accessibility audit
//! (axe-core, vendored as `axe.min.js`: see README.md here) and the page's width (no sideways
//! scrolling).

use serde_json::{Value, json};

use super::Browser;

/// axe-core 4.12.1 (MPL-2.0), from the PyPI package axe-playwright-python 0.1.8.
const AXE: &str = include_str!("axe.min.js");

/// The widths the page must fit without scrolling sideways: a small phone, a tablet, a laptop.
pub const WIDTHS: [u32; 3] = [360, 768, 1280];

/// One finding of axe-core: the rule, its impact, the elements and the rule's help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: String,
    pub impact: String,
    pub targets: Vec<String>,
    pub help: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}): {} [{}]",
            self.rule,
            self.impact,
            self.help,
            self.targets.join(", ")
        )
    }
}

impl Finding {
    /// Serious or critical: what the tests allow none of.
    pub fn is_serious(&self) -> bool {
        self.impact == "serious" || self.impact == "critical"
    }
}

impl Browser {
    /// Runs axe-core (WCAG 2.x A and AA, and its best practices) on the page as it is now:
    /// every finding (violation), of any impact.
    pub async fn audit(&self) -> Vec<Finding> {
        let loaded = self
            .client
            .execute("return typeof window.axe === 'object'", vec![])
            .await
            .expect("script runs");
        if loaded != json!(true) {
            self.client
                .execute(&format!("{AXE}\n;return true;"), vec![])
                .await
                .expect("axe-core loads");
        }
        let found = self
            .client
            .execute_async(
                "const done = arguments[arguments.length - 1];
                 axe.run(document, { resultTypes: ['violations'] }).then(
                   r => done(r.violations.map(v => ({
                     rule: v.id, impact: v.impact || 'none', help: v.help,
                     targets: v.nodes.map(n => n.target.join(' ')) }))),
                   e => done('axe failed: ' + e))",
                vec![],
            )
            .await
            .expect("axe runs");
        let Value::Array(found) = found else {
            panic!("{found}");
        };
        found
            .iter()
            .map(|v| Finding {
                rule: v["rule"].as_str().unwrap_or_default().to_owned(),
                impact: v["impact"].as_str().unwrap_or_default().to_owned(),
                help: v["help"].as_str().unwrap_or_default().to_owned(),
                targets: v["targets"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|t| t.as_str().unwrap_or_default().to_owned())
                    .collect(),
            })
            .collect()
    }

    /// Asserts that axe-core finds nothing serious or critical on the page (`view` names it in
    /// the failure); prints every finding, of any impact.
    pub async fn assert_accessible(&self, view: &str) {
        let found = self.audit().await;
        for f in &found {
            eprintln!("axe on {view}: {f}");
        }
        let serious: Vec<String> = found
            .iter()
            .filter(|f| f.is_serious())
            .map(ToString::to_string)
            .collect();
        assert!(
            serious.is_empty(),
            "axe-core: {} serious or critical finding(s) on {view}:\n{}",
            serious.len(),
            serious.join("\n")
        );
    }

    /// Resizes the window so that its viewport is `width` CSS pixels wide (`innerWidth`: the
    /// window's frame, if any, is added; headless Chromium reports an `outerWidth` of at least
    /// 500 but lays out narrower viewports as asked).
    pub async fn set_width(&self, width: u32) {
        let mut outer = width;
        for _ in 0..4 {
            self.client
                .set_window_size(outer, 900)
                .await
                .expect("window resized");
            let inner = self
                .client
                .execute("return window.innerWidth", vec![])
                .await
                .expect("script runs")
                .as_u64()
                .and_then(|w| u32::try_from(w).ok())
                .unwrap_or(0);
            if inner == width {
                return;
            }
            outer = (outer + width).saturating_sub(inner);
        }
        panic!("the window's viewport cannot be made {width} px wide");
    }

    /// The page's scroll width and its width (`scrollWidth`, `clientWidth` of the document).
    pub async fn widths(&self) -> (u64, u64) {
        let v = self
            .client
            .execute(
                "const d = document.documentElement; return [d.scrollWidth, d.clientWidth]",
                vec![],
            )
            .await
            .expect("script runs");
        (v[0].as_u64().unwrap_or(0), v[1].as_u64().unwrap_or(0))
    }

    /// Asserts that the page does not scroll sideways (`what` names the state in the failure),
    /// naming the widest element when it does.
    pub async fn assert_no_sideways_scroll(&self, what: &str) {
        let (scroll, client) = self.widths().await;
        if scroll <= client {
            return;
        }
        let culprit = self
            .client
            .execute(
                "const w = document.documentElement.clientWidth;
                 const wide = [...document.querySelectorAll('body *')]
                   .filter(e => e.getBoundingClientRect().right > w + 0.5);
                 return wide.slice(-3).map(e => e.tagName + '#' + e.id + '.' + e.className +
                   ' right=' + Math.round(e.getBoundingClientRect().right)).join('; ')",
                vec![],
            )
            .await
            .expect("script runs");
        panic!("{what}: the page is {scroll} px wide in {client} px (too wide: {culprit})");
    }
}
