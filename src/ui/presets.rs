//! Preset texts in the page. The picker lists `mqviz_app::presets::CATALOGUE`, which has no texts; a
//! preset's scenario and tour come from here. The release page carries only the default preset's
//! (the first view runs it) and fetches the others from `scenarios/` and `tours/` next to
//! index.html the first time they are chosen. Other builds (the dev server, the wasm tests) have
//! every text compiled in.

use mqviz_app::presets::CATALOGUE;
use mqviz_app::tour::{self, Tour};

/// A preset's scenario text and its tour's, if it has one.
#[derive(Clone, Copy)]
pub struct Texts {
    pub scenario: &'static str,
    pub tour: Option<&'static str>,
}

/// The texts of preset `i` if they are in the page.
#[cfg(not(mqviz_split))]
pub fn in_page(i: usize) -> Option<Texts> {
    let file = CATALOGUE.get(i)?.file;
    let scenario = mqviz_app::presets::by_file(file)?.text;
    Some(Texts { scenario, tour: tour::text_of(file) })
}

#[cfg(mqviz_split)]
thread_local! {
    // Kept for the rest of the visit: at most one per preset.
    static FETCHED: std::cell::RefCell<Vec<(usize, Texts)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The texts of preset `i` if they are in the page.
#[cfg(mqviz_split)]
pub fn in_page(i: usize) -> Option<Texts> {
    use mqviz_app::presets::{DEFAULT_SCENARIO, DEFAULT_TOUR};
    match i {
        0 => Some(Texts { scenario: DEFAULT_SCENARIO, tour: Some(DEFAULT_TOUR) }),
        _ => FETCHED.with(|f| f.borrow().iter().find(|(j, _)| *j == i).map(|(_, t)| *t)),
    }
}

/// Runs `then` with the texts of preset `i` once they are in the page: at once if they are,
/// else after they have arrived. `then` gets `Err` if they could not be fetched.
pub fn when_ready(i: usize, then: impl FnOnce(Result<Texts, String>) + 'static) {
    match in_page(i) {
        Some(t) => then(Ok(t)),
        None => fetch(i, then),
    }
}

#[cfg(not(mqviz_split))]
fn fetch(i: usize, then: impl FnOnce(Result<Texts, String>)) {
    then(Err(format!("there is no preset {i}")))
}

#[cfg(mqviz_split)]
fn fetch(i: usize, then: impl FnOnce(Result<Texts, String>) + 'static) {
    let Some(entry) = CATALOGUE.get(i).copied() else { return then(Err(format!("there is no preset {i}"))) };
    let under_way = super::fetching::begin(format!("the scenario “{}”", entry.label));
    leptos::task::spawn_local(async move {
        let fetched = async {
            let scenario = super::fetching::text(&format!("scenarios/{}", entry.file)).await?;
            let tour = match entry.tour {
                true => Some(super::fetching::text(&format!("tours/{}", entry.file)).await?),
                false => None,
            };
            // Leaked: texts are `&'static str` like the compiled-in ones, and are kept for the
            // rest of the visit anyway (one per preset: a second fetch's copy is not kept).
            Ok::<_, String>(Texts { scenario: leak(scenario), tour: tour.map(leak) })
        }
        .await;
        match fetched {
            Ok(fetched) => {
                let texts = in_page(i).unwrap_or_else(|| {
                    FETCHED.with(|f| f.borrow_mut().push((i, fetched)));
                    fetched
                });
                then(Ok(texts))
            }
            Err(e) => {
                then(Err(format!("the scenario “{}” could not be loaded ({e}); check the connection and try again", entry.label)))
            }
        }
        // Only now: a model's code asked for by `then` is under way by then, so the page never
        // looks idle between the two (embed mode says `ready` once nothing is under way).
        drop(under_way);
    });
}

#[cfg(mqviz_split)]
fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

/// The tour of preset file `file`, if it has one (its text is in the page once the preset ran).
pub fn tour(file: &str) -> Option<Tour> {
    let i = CATALOGUE.iter().position(|e| e.file == file)?;
    in_page(i)?.tour.and_then(|t| tour::parse_tour(t).ok())
}
