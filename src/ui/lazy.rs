//! Parts of the page its first view does not show: embed mode, the comparison, the tour player,
//! the shortcuts help and RocketMQ's filter tab. Like Kafka's and Pulsar's parts (`ui::parts`),
//! the release page cuts each into a chunk of its own (`--cfg mqviz_split`), fetched the first
//! time the part is shown. A part's split point gives the function that builds its view;
//! `lazy_view!` shows that view once it is in the page, or why it could not be fetched.

/// The view a part builds with `$arg`, once `$load` (a call of a split point giving
/// `fn(A) -> AnyView`) has brought its code into the page. With `when $shown`, the code is
/// fetched only once `$shown` (a signal) is true: for a part that is mounted hidden.
macro_rules! lazy_view {
    ($load:expr, $arg:expr) => {
        $crate::ui::lazy::lazy_view!($load, $arg, when leptos::prelude::Signal::stored(true))
    };
    ($load:expr, $arg:expr, when $shown:expr) => {{
        use leptos::prelude::*;
        let built: RwSignal<Option<Result<fn(_) -> AnyView, String>>> = RwSignal::new(None);
        let shown: Signal<bool> = $shown;
        let asked = StoredValue::new(false);
        Effect::new(move |_| {
            if asked.get_value() || !shown.get() {
                return;
            }
            asked.set_value(true);
            #[cfg(mqviz_split)]
            {
                let load = $load;
                leptos::task::spawn_local(async move { built.set(Some(load.await.map_err(|e| e.to_string()))) });
            }
            #[cfg(not(mqviz_split))]
            {
                built.set(Some($load.map_err(|e| e.to_string())));
            }
        });
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
