//! `idgen web`'s page in a real browser (headless Chromium through WebDriver), beyond its
//! numbers: it fits 360, 768 and 1280 px wide without scrolling sideways, even with a
//! 5,000-character input; errors sit under their field, cut, without moving the other fields;
//! they are announced and focus goes to the first refused field; and axe-core finds nothing
//! serious or critical on any view (issue 39, items 3 to 5).

mod browser;

use browser::audit::WIDTHS;
use browser::{Browser, Server};
use serde_json::{Value, json};

/// The compose form's inputs, in the page's order.
const INPUTS: [&str; 4] = ["time", "node-datacenter", "node-worker", "sequence"];

/// Each input's box (left, top, width) and its error's (left, top, right), and the input's
/// bottom, as the page lays them out now.
async fn boxes(b: &Browser) -> Value {
    b.client
        .execute(
            "return Object.fromEntries(arguments[0].map(id => {
               const i = document.getElementById(id).getBoundingClientRect();
               const e = document.getElementById('err-' + id).getBoundingClientRect();
               const cell = document.getElementById(id).parentElement.getBoundingClientRect();
               return [id, { left: i.left, top: i.top, width: i.width, bottom: i.bottom,
                             err_left: e.left, err_top: e.top, err_right: e.right,
                             cell_left: cell.left, cell_right: cell.right }];
             }))",
            vec![json!(INPUTS)],
        )
        .await
        .expect("script runs")
}

/// Types the compose form's four inputs and submits it.
async fn compose(b: &Browser, values: [&str; 4]) {
    for (id, value) in INPUTS.iter().zip(values) {
        b.type_into(id, value).await;
    }
    b.submit("compose-button", "compose-out").await;
}

async fn show(b: &Browser, view: &str) {
    b.client
        .find(fantoccini::Locator::Css(&format!(
            "button[data-view='{view}']"
        )))
        .await
        .expect("tab")
        .click()
        .await
        .expect("click tab");
}

async fn js(b: &Browser, script: &str) -> Value {
    b.client.execute(script, vec![]).await.expect("script runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_view_scrolls_sideways_at_360_768_1280_even_with_5000_characters() {
    let server = Server::start(&[]);
    let b = Browser::start().await;
    b.open(&server.url).await;
    // Pasted with a script: typing 5,000 keys one by one is slow and proves nothing more.
    let long = "9".repeat(5000);
    for width in WIDTHS {
        b.set_width(width).await;
        show(&b, "compose").await;
        b.assert_no_sideways_scroll(&format!("{width} px, compose"))
            .await;
        compose(&b, ["1288834975657", "1", "1", "0"]).await;
        assert_eq!(b.text("id").await, "4194439168");
        b.assert_no_sideways_scroll(&format!("{width} px, an ID with its formula and bits"))
            .await;

        // Errors under their fields, cut: the fields do not move sideways; at 1280 px, where
        // all four share a row, not at all.
        compose(&b, ["1288834975657", "0", "0", "0"]).await;
        let before = boxes(&b).await;
        js(
            &b,
            &format!(
                "for (const id of ['time', 'node-datacenter', 'sequence'])
                   document.getElementById(id).value = '{long}'; return true"
            ),
        )
        .await;
        b.submit("compose-button", "compose-out").await;
        let after = boxes(&b).await;
        for id in INPUTS {
            let (was, now) = (&before[id], &after[id]);
            assert_eq!(was["left"], now["left"], "{width} px: {id} moved sideways");
            assert_eq!(was["width"], now["width"], "{width} px: {id} changed width");
            if width == 1280 {
                assert_eq!(was["top"], now["top"], "{width} px: {id} moved down");
            }
            if id != "node-worker" {
                let f = |k: &str| now[k].as_f64().unwrap();
                assert!(
                    f("err_top") >= f("bottom") - 0.5
                        && f("err_left") >= f("cell_left") - 0.5
                        && f("err_right") <= f("cell_right") + 0.5,
                    "{width} px: the error of {id} is not under it: {now}"
                );
                let message = b.text(&format!("err-{id}")).await;
                assert!(
                    message.contains("… (5000 characters)") && message.chars().count() < 500,
                    "{width} px: {id}: {} characters: {}",
                    message.chars().count(),
                    &message[..message.len().min(200)]
                );
            }
        }
        b.assert_no_sideways_scroll(&format!("{width} px, 5,000-character inputs refused"))
            .await;
        if width == 360 {
            b.screenshot("web-360-errors").await;
        }

        show(&b, "inspect").await;
        b.type_into("inspect-text", "4194439168").await;
        b.submit("inspect-button", "inspect-out").await;
        b.assert_no_sideways_scroll(&format!("{width} px, inspect"))
            .await;
        js(
            &b,
            &format!("document.getElementById('inspect-text').value = 'x{long}'; return true"),
        )
        .await;
        b.submit("inspect-button", "inspect-out").await;
        assert!(b.text("err-text").await.chars().count() < 500);
        b.assert_no_sideways_scroll(&format!("{width} px, inspect refused 5,000 characters"))
            .await;

        // A custom layout: its spec, and a 5,000-character one refused.
        b.by_id("layout")
            .await
            .select_by_value("custom")
            .await
            .unwrap();
        b.wait_for_js(
            "return document.getElementById('layout-summary').textContent.startsWith('custom:')",
        )
        .await;
        b.assert_no_sideways_scroll(&format!("{width} px, a custom layout"))
            .await;
        let spec = js(&b, "return document.getElementById('custom-spec').value").await;
        js(
            &b,
            &format!(
                "document.getElementById('custom-spec').value = 'custom:epoch=0,{long}'; return true"
            ),
        )
        .await;
        b.by_id("custom-apply").await.click().await.unwrap();
        b.wait_for_js("return document.getElementById('err-layout').textContent !== ''")
            .await;
        assert!(b.text("err-layout").await.chars().count() < 500);
        b.assert_no_sideways_scroll(&format!("{width} px, a 5,000-character layout refused"))
            .await;
        b.client
            .execute(
                "document.getElementById('custom-spec').value = arguments[0]; return true",
                vec![spec],
            )
            .await
            .unwrap();
        b.by_id("layout")
            .await
            .select_by_value("twitter")
            .await
            .unwrap();
        b.wait_for_js(
            "return document.getElementById('layout-summary').textContent.startsWith('twitter:')",
        )
        .await;
    }
    b.client.clone().close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_are_announced_under_their_field_and_focus_goes_to_the_first() {
    let server = Server::start(&[]);
    let b = Browser::start().await;
    b.open(&server.url).await;
    // Labels name the fields as the library, their errors and their bits do.
    let labels = js(
        &b,
        "return ['time', 'node-datacenter', 'node-worker', 'sequence'].map(id =>
           document.querySelector('label[for=\"' + id + '\"]').firstChild.textContent.trim())",
    )
    .await;
    assert_eq!(
        labels,
        json!(["timestamp t", "datacenter", "worker", "sequence"])
    );

    compose(&b, ["1288834975657", "0", "32", "4096"]).await;
    let focused = js(&b, "return document.activeElement.id").await;
    assert_eq!(focused, json!("node-worker"), "the first refused field");
    let state = js(
        &b,
        "return ['time', 'node-datacenter', 'node-worker', 'sequence'].map(id => {
           const i = document.getElementById(id), e = document.getElementById('err-' + id);
           return [i.getAttribute('aria-invalid'),
                   (i.getAttribute('aria-describedby') || '').split(' ').includes(e.id),
                   e.closest('[aria-live], [role=alert]') !== null, e.textContent !== ''];
         })",
    )
    .await;
    assert_eq!(
        state,
        json!([
            [null, true, true, false],
            [null, true, true, false],
            ["true", true, true, true],
            ["true", true, true, true],
        ])
    );
    assert!(
        b.text("err-node-worker")
            .await
            .starts_with("worker 32 does not fit in 5 bits")
    );
    // Put right, the errors go and the ID comes.
    compose(&b, ["1288834975657", "1", "1", "0"]).await;
    assert_eq!(b.text("id").await, "4194439168");
    let invalid = js(
        &b,
        "return document.querySelectorAll('[aria-invalid=true]').length",
    )
    .await;
    assert_eq!(invalid, json!(0));

    show(&b, "inspect").await;
    b.type_into("inspect-text", "not an id").await;
    b.submit("inspect-button", "inspect-out").await;
    assert_eq!(
        js(&b, "return document.activeElement.id").await,
        json!("inspect-text")
    );
    assert_ne!(b.text("err-text").await, "");
    b.client.clone().close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn js_safe_is_in_the_layout_list() {
    let server = Server::start(&["--layout", "js-safe"]);
    let b = Browser::start().await;
    b.open(&server.url).await;
    assert_eq!(
        js(&b, "return document.getElementById('layout').value").await,
        json!("js-safe")
    );
    b.wait_for_js(
        "return document.getElementById('layout-summary').textContent.startsWith('js-safe:')",
    )
    .await;
    b.client.clone().close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn axe_core_finds_nothing_serious_on_any_view() {
    let server = Server::start(&[]);
    let b = Browser::start().await;
    b.open(&server.url).await;
    b.assert_accessible("compose, as opened").await;
    compose(&b, ["1288834975657", "1", "1", "0"]).await;
    b.assert_accessible("compose, an ID").await;
    compose(&b, ["1", "32", "0", "4096"]).await;
    b.assert_accessible("compose, refused inputs").await;
    b.by_id("layout")
        .await
        .select_by_value("custom")
        .await
        .unwrap();
    b.wait_for_js(
        "return document.getElementById('layout-summary').textContent.startsWith('custom:')",
    )
    .await;
    b.assert_accessible("compose, a custom layout").await;
    show(&b, "inspect").await;
    b.type_into("inspect-text", "ord_01h455vb4pex5vsknk084sn02q")
        .await;
    b.submit("inspect-button", "inspect-out").await;
    b.assert_accessible("inspect, a public ID").await;
    b.type_into("inspect-text", "nonsense").await;
    b.submit("inspect-button", "inspect-out").await;
    b.assert_accessible("inspect, refused").await;

    // The audit itself: an input without a label is a critical finding.
    js(
        &b,
        "document.querySelector('main').append(document.createElement('input')); return true",
    )
    .await;
    let found = b.audit().await;
    assert!(
        found.iter().any(|f| f.rule == "label" && f.is_serious()),
        "axe-core did not report an unlabelled input: {found:?}"
    );
    b.client.clone().close().await.unwrap();
}
