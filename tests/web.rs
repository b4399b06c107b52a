//! Component tests for the editor and the inspector, mounted into a test `<div>` in headless
//! Chromium. Run with:
//! `CHROMEDRIVER=$(command -v chromedriver) CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
//!  cargo test --target wasm32-unknown-unknown --test web`
#![cfg(all(target_arch = "wasm32", feature = "web"))]

use leptos::prelude::*;
use mqviz::ui::rocketmq::Editor;
use mqviz::ui::{Inspector, Sim};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{Element, HtmlElement, HtmlInputElement};

wasm_bindgen_test_configure!(run_in_browser);

fn container() -> HtmlElement {
    let doc = web_sys::window().and_then(|w| w.document()).expect("document");
    let div = doc.create_element("div").expect("div");
    doc.body().expect("body").append_child(&div).expect("append");
    div.unchecked_into()
}

/// Lets pending effects and re-renders run.
async fn tick() {
    let p = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 10);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(p).await;
}

fn all(root: &Element, sel: &str) -> Vec<Element> {
    let list = root.query_selector_all(sel).expect("selector");
    (0..list.length()).filter_map(|i| list.item(i)?.dyn_into::<Element>().ok()).collect()
}

/// Mounts `view` with a fresh `Sim` (default preset) in context; `prepare` runs on it first.
fn mount<V: IntoView + 'static>(prepare: impl FnOnce(&Sim) + 'static, view: fn() -> V) -> HtmlElement {
    let div = container();
    let handle = leptos::mount::mount_to(div.clone(), move || {
        let sim = Sim::new();
        prepare(&sim);
        provide_context(sim);
        view()
    });
    handle.forget();
    div
}

#[wasm_bindgen_test]
async fn editor_renders_one_row_per_consumer_of_the_preset() {
    let div = mount(|_| {}, || view! { <Editor /> });
    tick().await;
    let rows = all(&div, "[data-testid=consumer-row]");
    let ids: Vec<String> = rows.iter().filter_map(|r| r.get_attribute("data-client-id")).collect();
    assert_eq!(ids, ["ConsumerA", "ConsumerB"]);
    assert_eq!(all(&div, "[data-testid=subscription-input]").len(), 2);
    assert!(div.query_selector("[data-testid=add-consumer]").ok().flatten().is_some());
    assert!(div.query_selector("[data-testid=strategy-select]").ok().flatten().is_some());
}

#[wasm_bindgen_test]
async fn an_invalid_expression_shows_an_inline_error_and_a_valid_one_clears_it() {
    let div = mount(|_| {}, || view! { <Editor /> });
    tick().await;
    let input: HtmlInputElement = div
        .query_selector("[data-client-id=ConsumerA] [data-testid=subscription-input]")
        .ok()
        .flatten()
        .and_then(|e| e.dyn_into().ok())
        .expect("ConsumerA's subscription input");
    input.set_value("||");
    input.dispatch_event(&web_sys::Event::new("input").expect("event")).expect("dispatch");
    tick().await;
    let err = div.query_selector("[data-testid=subscription-error]").ok().flatten().expect("inline error shown");
    assert!(err.text_content().unwrap_or_default().contains("split error"), "{:?}", err.text_content());
    assert_eq!(input.get_attribute("aria-invalid").as_deref(), Some("true"));
    input.set_value("TagA || TagB");
    input.dispatch_event(&web_sys::Event::new("input").expect("event")).expect("dispatch");
    tick().await;
    assert!(div.query_selector("[data-testid=subscription-error]").ok().flatten().is_none());
    assert_eq!(input.get_attribute("aria-invalid").as_deref(), Some("false"));
}

#[wasm_bindgen_test]
async fn inspector_assignment_rows_carry_queue_and_owner() {
    let div = mount(|sim| sim.run_to_end(), || view! { <Inspector /> });
    tick().await;
    let rows = all(&div, "[data-testid=assignment-table] tr[data-queue]");
    let got: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r.get_attribute("data-queue").unwrap_or_default(), r.get_attribute("data-owner").unwrap_or_default()))
        .collect();
    let want: Vec<(String, String)> = (0..4).map(|q| (format!("TopicTestA:q{q}"), "ConsumerB".to_string())).collect();
    assert_eq!(got, want);
    let counts: Vec<(String, String)> = all(&div, "[data-testid=consumed-count]")
        .iter()
        .map(|e| (e.get_attribute("data-client-id").unwrap_or_default(), e.text_content().unwrap_or_default()))
        .collect();
    assert_eq!(counts, [("ConsumerA".to_string(), "0".to_string()), ("ConsumerB".to_string(), "6".to_string())]);
    assert!(!all(&div, "[data-testid=warning]").is_empty(), "the subscription warning is shown");
    assert!(div.query_selector("[data-testid=provenance]").ok().flatten().is_some());
}

#[wasm_bindgen_test]
async fn clicking_a_log_row_shows_its_provenance() {
    let div = mount(|sim| sim.run_to_end(), || view! { <Inspector /> });
    tick().await;
    let rows = all(&div, "[data-testid=event-log] [data-event-id]");
    let consumed = rows
        .iter()
        .find(|r| r.text_content().unwrap_or_default().contains(" consumed m"))
        .and_then(|r| r.clone().dyn_into::<HtmlElement>().ok())
        .expect("a consumed row in the last 200 events");
    consumed.click();
    tick().await;
    let chain = all(&div, "[data-testid=cause-chain] li");
    assert!(chain.len() >= 2, "a consumed event has causes: {}", chain.len());
    let msg_events = all(&div, "[data-testid=message-events] li");
    assert!(msg_events.iter().any(|e| e.text_content().unwrap_or_default().contains("stored m")));
}

#[wasm_bindgen_test]
async fn an_invalid_sql92_expression_shows_an_inline_error_at_its_position() {
    let sql = mqviz_app::presets::PRESETS.iter().position(|p| p.file == "sql92-filter.json").expect("sql92 preset");
    let div = mount(move |sim| sim.load(sql), || view! { <Editor /> });
    tick().await;
    let row = div.query_selector("[data-client-id=SqlConsumer]").ok().flatten().expect("SqlConsumer row");
    let input: HtmlInputElement = row
        .query_selector("[data-testid=subscription-input]")
        .ok()
        .flatten()
        .and_then(|e| e.dyn_into().ok())
        .expect("SqlConsumer's subscription input");
    assert_eq!(input.value(), "a > 5 AND region = 'eu'");
    let bad = "a > 5 AND (region = 'eu'";
    input.set_value(bad);
    input.dispatch_event(&web_sys::Event::new("input").expect("event")).expect("dispatch");
    tick().await;
    let err = row.query_selector("[data-testid=sql-error]").ok().flatten().expect("inline SQL error shown");
    let pos: usize = err.get_attribute("data-position").and_then(|p| p.parse().ok()).expect("data-position");
    assert!(pos > 0 && pos <= bad.chars().count(), "position {pos}");
    assert!(err.text_content().unwrap_or_default().contains(&format!("at {pos}: ")), "{:?}", err.text_content());
    assert!(err.query_selector("mark.caret").ok().flatten().is_some(), "a caret marks the position");
    assert_eq!(input.get_attribute("aria-invalid").as_deref(), Some("true"));
    // Nothing was entered: the World is still at t=0 with the original expression.
    input.set_value("a > 5");
    input.dispatch_event(&web_sys::Event::new("input").expect("event")).expect("dispatch");
    tick().await;
    assert!(row.query_selector("[data-testid=sql-error]").ok().flatten().is_none());
}
