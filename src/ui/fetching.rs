//! What the page fetches after its first download: a model's code (`ui::parts`) and a preset's
//! texts (`ui::presets`). While anything is on its way the page says so, and it does not rewrite
//! the address bar, since what it shows is not yet what was asked for.

use leptos::prelude::*;

thread_local! {
    // An `Arc` signal: owned by no component, so no view that reads it can dispose it.
    static UNDER_WAY: ArcRwSignal<Vec<String>> = ArcRwSignal::new(Vec::new());
}

/// What is being fetched, as the page names it ("the Kafka model"), if anything is (tracked).
pub fn what() -> Option<String> {
    UNDER_WAY.with(|u| u.with(|v| v.first().cloned()))
}

/// Marks `what` as under way until the guard is dropped.
#[cfg_attr(not(mqviz_split), allow(dead_code))]
pub fn begin(what: String) -> UnderWay {
    UNDER_WAY.with(|u| u.update(|v| v.push(what.clone())));
    UnderWay(what)
}

pub struct UnderWay(String);

impl Drop for UnderWay {
    fn drop(&mut self) {
        UNDER_WAY.with(|u| {
            u.update(|v| {
                if let Some(k) = v.iter().position(|w| *w == self.0) {
                    v.remove(k);
                }
            })
        });
    }
}

/// The text of a file next to the page (relative to it, so the page works under any sub-path).
#[cfg(mqviz_split)]
pub async fn text(path: &str) -> Result<String, String> {
    use js_sys::futures::JsFuture;
    use wasm_bindgen::JsCast;
    let failed = |e: wasm_bindgen::JsValue| e.as_string().unwrap_or_else(|| format!("{e:?}"));
    let window = web_sys::window().ok_or("no window")?;
    let response = JsFuture::from(window.fetch_with_str(path)).await.map_err(failed)?;
    let response: web_sys::Response = response.dyn_into().map_err(failed)?;
    if !response.ok() {
        return Err(format!("{path}: HTTP {}", response.status()));
    }
    let text = JsFuture::from(response.text().map_err(failed)?).await.map_err(failed)?;
    text.as_string().ok_or_else(|| format!("{path}: not text"))
}
