//! The SQL92 engine (`mqviz_rocketmq::sql92::Engine`: the parser and evaluator) is not in the
//! release page's first download. It is fetched before the first run that names a SQL92
//! subscription is built (`ui::parts::when_ready_for`) and when an editor switches a
//! subscription to SQL92. A run that would need it is never built without it
//! (`ui::parts::load_value` refuses), so no verdict is ever reached without the engine.

use serde_json::Value;

use mqviz_rocketmq::{scenario::uses_sql92, sql92};

/// The split point: the chunk holds everything only the engine's function pointers reach.
#[cfg(mqviz_split)]
#[wasm_split_helpers::wasm_split(sql92, fallible)]
fn fetched() -> Result<sql92::Engine, wasm_split_helpers::SplitLoaderError> {
    Ok(sql92::Engine::built_in())
}

/// Whether a run of `v` (a scenario document, with its edits) could be built now: it needs no
/// engine, or the engine is in the page.
pub fn has_code_for(v: &Value) -> bool {
    sql92::is_ready() || !uses_sql92(v)
}

/// Runs `then` once the engine is in the page: at once if it is, else after its chunk has
/// arrived (`Err`, and nothing installed, if it could not be fetched).
pub fn when_ready(then: impl FnOnce(Result<(), String>) + 'static) {
    if sql92::is_ready() {
        return then(Ok(()));
    }
    fetch(then)
}

#[cfg(not(mqviz_split))]
fn fetch(then: impl FnOnce(Result<(), String>)) {
    // Not reached: without the split the engine is built in, so it is always ready.
    then(Err("the SQL92 engine is not in this build".into()))
}

#[cfg(mqviz_split)]
fn fetch(then: impl FnOnce(Result<(), String>) + 'static) {
    let under_way = crate::ui::fetching::begin("the SQL92 engine".into());
    leptos::task::spawn_local(async move {
        match fetched().await {
            Ok(engine) => {
                sql92::install(engine);
                then(Ok(()));
            }
            Err(e) => then(Err(format!("the SQL92 engine could not be loaded ({e}); check the connection and try again"))),
        }
        drop(under_way);
    });
}
