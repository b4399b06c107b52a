//! Parts of the page its first view does not show: embed mode, the comparison, the tour player
//! and the shortcuts help. Like Kafka's and Pulsar's parts (`ui::models`), the release page cuts each into a chunk
//! of its own (`--cfg mqviz_split`), fetched the first time the part is shown. A part's split
//! point gives the function that builds its view; `lazy_view!` shows that view once it is in the
//! page, or why it could not be fetched.

/// The view a part builds with `$arg`, once `$load` (a split point giving
/// `fn(A) -> AnyView`) has its code in the page.
macro_rules! lazy_view {
    ($load:expr, $arg:expr) => {{
        use leptos::prelude::*;
        let built: RwSignal<Option<Result<fn(_) -> AnyView, String>>> = RwSignal::new(None);
        #[cfg(mqviz_split)]
        {
            let load = $load;
            leptos::task::spawn_local(async move { built.set(Some(load.await.map_err(|e| e.to_string()))) });
        }
        #[cfg(not(mqviz_split))]
        {
            built.set(Some($load.map_err(|e| e.to_string())));
        }
        let arg = $arg;
        move || {
            built.get().map(|r| match r {
                Ok(build) => build(arg),
                Err(e) => {
                    let message = format!("This part of the page could not be loaded ({e}); check the connection and reload.");
                    view! { <p class="error" role="alert">{message}</p> }.into_any()
                }
            })
        }
    }};
}

pub(crate) use lazy_view;
