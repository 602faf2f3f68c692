//! `idgen web` in a real browser (headless Chromium through WebDriver): what a user types into
//! the compose and inspect forms gives what the library gives.

mod browser;

use browser::{Browser, Server};
use fantoccini::Locator;
use idgen_core::{Layout, Parts, SnowflakeId};
use rand::Rng;
use serde_json::{Value, json};

/// Switches to a view by its tab.
async fn show(b: &Browser, view: &str) {
    b.client
        .find(Locator::Css(&format!("button[data-view='{view}']")))
        .await
        .expect("tab")
        .click()
        .await
        .expect("click tab");
}

/// Chooses a preset in the layout select and waits until the form has its inputs.
async fn choose_layout(b: &Browser, name: &str) {
    b.by_id("layout")
        .await
        .select_by_value(name)
        .await
        .expect("select layout");
    b.wait_for_js(&format!(
        "return document.getElementById('layout-summary').textContent.startsWith('{name}:')"
    ))
    .await;
}

/// Types the fields into the compose form and submits it.
async fn compose(b: &Browser, time: &str, node: &[(&str, String)], seq: &str) {
    b.type_into("time", time).await;
    for (name, value) in node {
        b.type_into(&format!("node-{name}"), value).await;
    }
    b.type_into("sequence", seq).await;
    b.submit("compose-button", "compose-out").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_worked_example_gives_4194439168_and_its_bit_groups() {
    let server = Server::start(&[]);
    let b = Browser::start().await;
    b.open(&server.url).await;
    let node = [("datacenter", "1".to_string()), ("worker", "1".to_string())];
    compose(&b, "1288834975657", &node, "0").await;
    assert_eq!(b.text("id").await, "4194439168");
    let groups = b.text("bit-groups").await;
    assert_eq!(
        groups,
        format!("0 | {:041b} | 00001 | 00001 | 000000000000", 1000)
    );
    assert!(
        groups.starts_with("0 | 000")
            && groups.contains("1111101000 | 00001 | 00001 | 000000000000")
    );
    // Each field's box names the field, its width and value, beside its bits.
    let boxes = b
        .client
        .execute(
            "return [...document.querySelectorAll('#compose-bits .field')].map(e => e.innerText.replace(/\\n/g, ' '))",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        boxes,
        json!([
            "sign 1 bit · 0 0",
            format!("timestamp 41 bits · 1000 {:041b}", 1000),
            "datacenter 5 bits · 1 00001",
            "worker 5 bits · 1 00001",
            "sequence 12 bits · 0 000000000000",
        ])
    );
    assert_eq!(
        b.text("formula").await,
        "I = (1000 << 22) | (1 << 17) | (1 << 12) | 0 = 4194439168"
    );
    assert_eq!(
        b.text("delta-formula").await,
        "d = t − epoch = 1288834975657 − 1288834974657 = 1000"
    );
    b.screenshot("web-compose").await;
    b.client.clone().close().await.unwrap();
}

/// A random instant the layout can hold, up to the year 2200.
fn random_time(layout: &Layout, rng: &mut impl Rng) -> i64 {
    let last = layout.last_unix_ms().min(7_258_118_400_000);
    rng.random_range(layout.epoch_ms().max(0)..=last)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_ids_composed_and_inspected_on_the_page_equal_the_library() {
    let server = Server::start(&[]);
    let b = Browser::start().await;
    b.open(&server.url).await;
    let mut rng = rand::rng();
    for (name, layout) in [
        ("twitter", Layout::TWITTER),
        ("sonyflake", Layout::SONYFLAKE),
        ("instagram", Layout::INSTAGRAM),
    ] {
        show(&b, "compose").await;
        choose_layout(&b, name).await;
        let mut ids = Vec::new();
        for _ in 0..20 {
            let t = random_time(&layout, &mut rng);
            let values: Vec<u64> = layout
                .node_fields()
                .iter()
                .map(|f| rng.random_range(0..1u64 << f.bits))
                .collect();
            let seq = rng.random_range(0..=layout.max_sequence());
            let node: Vec<(&str, String)> = layout
                .node_fields()
                .iter()
                .zip(&values)
                .map(|(f, v)| (f.name, v.to_string()))
                .collect();
            compose(&b, &t.to_string(), &node, &seq.to_string()).await;
            let want = layout
                .compose(Parts {
                    ticks: layout.ticks_at(t).unwrap(),
                    node: layout.node_from_fields(&values).unwrap(),
                    sequence: seq,
                })
                .unwrap();
            assert_eq!(
                b.text("id").await,
                want.to_string(),
                "{name}: t={t} node={values:?} seq={seq}"
            );
            ids.push(want);
        }
        show(&b, "inspect").await;
        for id in ids {
            inspect_matches_decompose(&b, name, &layout, id).await;
        }
    }
    b.screenshot("web-inspect").await;

    // A public ID and a UUIDv7: prefix, UUID and time.
    for (text, prefix) in [
        ("ord_01h455vb4pex5vsknk084sn02q", Some("ord")),
        ("01890a5d-ac96-774b-bcce-b302099a8057", None),
    ] {
        b.type_into("inspect-text", text).await;
        b.submit("inspect-button", "inspect-out").await;
        let rows = table(&b).await;
        assert_eq!(
            rows["uuid"], "01890a5d-ac96-774b-bcce-b302099a8057",
            "{text}"
        );
        assert_eq!(rows["utc"], "2023-06-30T03:34:18.518Z", "{text}");
        assert_eq!(rows.get("prefix").and_then(Value::as_str), prefix, "{text}");
    }
    b.screenshot("web-inspect-public-id").await;
    b.client.clone().close().await.unwrap();
}

/// The inspect table: row name → text.
async fn table(b: &Browser) -> Value {
    b.client
        .execute(
            "return Object.fromEntries([...document.querySelectorAll('#inspect-table td')].map(td => [td.dataset.row, td.textContent]))",
            vec![],
        )
        .await
        .unwrap()
}

/// Pastes `id` (as a JSON string every other time) and compares the table with `decompose`.
async fn inspect_matches_decompose(b: &Browser, name: &str, layout: &Layout, id: SnowflakeId) {
    let text = if id.get() % 2 == 0 {
        format!("\"{id}\"")
    } else {
        id.to_string()
    };
    b.type_into("inspect-text", &text).await;
    b.submit("inspect-button", "inspect-out").await;
    let rows = table(b).await;
    let d = layout.decompose(id).unwrap();
    let mut want = serde_json::Map::new();
    want.insert("id".into(), json!(id.to_string()));
    want.insert("unix ms".into(), json!(d.unix_ms.to_string()));
    want.insert("timestamp".into(), json!(d.ticks.to_string()));
    want.insert("sequence".into(), json!(d.sequence.to_string()));
    want.insert("node".into(), json!(d.node.to_string()));
    for (field, value) in d.node_fields() {
        want.insert(field.into(), json!(value.to_string()));
    }
    for (k, v) in want {
        assert_eq!(rows[&k], v, "{name} {id}: row {k} in {rows}");
    }
    let utc = jiff::Timestamp::from_millisecond(d.unix_ms).unwrap();
    assert_eq!(rows["utc"], json!(format!("{utc:.3}")), "{name} {id}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_out_of_range_input_shows_the_librarys_error_and_no_id() {
    let server = Server::start(&[]);
    let b = Browser::start().await;
    b.open(&server.url).await;
    let l = Layout::TWITTER;
    let ok_time = "1288834975657".to_string();
    let cases = [
        (
            "node-datacenter",
            ok_time.clone(),
            ["32", "0", "0"],
            l.node_from_fields(&[32, 0]).unwrap_err(),
        ),
        (
            "node-worker",
            ok_time.clone(),
            ["0", "32", "0"],
            l.node_from_fields(&[0, 32]).unwrap_err(),
        ),
        (
            "sequence",
            ok_time.clone(),
            ["0", "0", "4096"],
            l.compose(Parts {
                ticks: 0,
                node: 0,
                sequence: 4096,
            })
            .unwrap_err(),
        ),
        (
            "time",
            (l.epoch_ms() - 1).to_string(),
            ["0", "0", "0"],
            l.ticks_at(l.epoch_ms() - 1).unwrap_err(),
        ),
        (
            "time",
            (l.last_unix_ms() + 1).to_string(),
            ["0", "0", "0"],
            l.ticks_at(l.last_unix_ms() + 1).unwrap_err(),
        ),
    ];
    for (input, time, [dc, worker, seq], err) in cases {
        let node = [
            ("datacenter", dc.to_string()),
            ("worker", worker.to_string()),
        ];
        compose(&b, &time, &node, seq).await;
        let want = err.to_string();
        assert_eq!(b.text(&format!("err-{input}")).await, want, "{input}");
        assert_eq!(
            b.by_id(input)
                .await
                .attr("aria-invalid")
                .await
                .unwrap()
                .as_deref(),
            Some("true")
        );
        assert_eq!(b.text("id").await, "", "{input}: no ID");
        assert!(
            !b.by_id("compose-result")
                .await
                .is_displayed()
                .await
                .unwrap()
        );
        if input == "node-datacenter" {
            b.screenshot("web-compose-error").await;
        }
    }
    b.client.clone().close().await.unwrap();
}
