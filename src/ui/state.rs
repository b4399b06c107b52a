//! Shared UI state. The running model lives in a `StoredValue` as a `Box<dyn Simulation>`, so the
//! shell, canvas, tracker, plots and history never name a broker. `version` is bumped after every
//! change so views that read the model re-run.
//!
//! Invariant (a deliberate trade for speed): the model is not a reactive signal. Components read it
//! through `Sim::read` (which subscribes to `ui_version`) or `Sim::peek` (which does not), and every
//! change goes through `Sim` methods, which bump the version counters. Time moves through the
//! `History`, so edits entered earlier are re-entered whenever playback reaches their instant.

use leptos::prelude::*;
use serde_json::Value;

use super::frame::perf_now;
use super::presets::Texts;
use mqviz_app::history::{Entered, History};
use mqviz_app::link::{self, Link};
use mqviz_app::presets::CATALOGUE;
use mqviz_app::registry::{self, Loaded};
use mqviz_app::story::Story;
use mqviz_app::tour::{Pinned, Tour};
use mqviz_engine::decimal;
use mqviz_engine::json_path::{parse_json, PathError};
use mqviz_engine::scenario::compare_variant;
use mqviz_engine::Millis;
use mqviz_model::{BrokerKind, Simulation, View};

pub fn errors_text(errs: &[PathError]) -> String {
    errs.iter().map(|e| format!("{}: {}", e.path, e.message)).collect::<Vec<_>>().join("; ")
}

/// A guided tour being played: its steps pinned to events of this run, and the step shown.
#[derive(Clone, Debug, PartialEq)]
pub struct TourRun {
    pub tour: Tour,
    pub pinned: Vec<Pinned>,
    /// The step whose caption is shown (`None` before the first).
    pub step: Option<usize>,
}

/// Where the loaded scenario came from.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    Preset(usize),
    /// Opened from a file, pasted, or carried by a link.
    Own {
        name: String,
    },
}

/// The second run of a side-by-side comparison, advancing in lockstep with the first.
pub struct Compare {
    pub label: String,
    pub model: Box<dyn Simulation>,
    pub history: History,
}

/// Everything the components share. `Copy`, so closures can capture it freely.
#[derive(Clone, Copy)]
pub struct Sim {
    pub model: StoredValue<Option<Box<dyn Simulation>>, LocalStorage>,
    /// Bumped on every change of the model (the frame loop redraws the canvas on it).
    pub version: RwSignal<u64>,
    /// What the DOM panels follow: equal to `version` when paused; while playing the frame loop
    /// catches it up at most every 100 ms, so tables and the log do not re-render every frame.
    pub ui_version: RwSignal<u64>,
    /// The event-log digest as shown; `None` while lines logged since are still being hashed.
    /// After a long seek that is millions of lines, seconds of work: the frame loop hashes them
    /// a slice at a time (`fold_digest`) instead of freezing the page once the seek is done.
    pub digest_shown: RwSignal<Option<u64>>,
    pub playing: RwSignal<bool>,
    /// log10 of the speed factor, -2..=2.
    pub speed_log: RwSignal<f64>,
    /// The preset shown in the picker (the last one chosen, when an own scenario is loaded).
    pub preset: RwSignal<usize>,
    pub source: RwSignal<Source>,
    /// The scenario JSON as loaded, without edits: what an export or a link starts from.
    pub scenario: StoredValue<Option<Value>, LocalStorage>,
    /// The loaded model's kind: model-specific panels switch on it.
    pub kind: RwSignal<Option<BrokerKind>>,
    pub load_error: RwSignal<Option<String>>,
    /// The bad fields of the link the page was opened with (the rest of it opened). While it
    /// shows, the address bar keeps that link, so its recipient can mend it.
    pub link_error: RwSignal<Option<String>>,
    /// An embed whose link names nothing it can show (its preset or scenario was bad): it shows
    /// the error alone, never the default diagram, which its page did not ask for.
    pub embed_refused: RwSignal<bool>,
    /// The panel a link asked for, opened once its run (and so its model's tabs) is in.
    panel_asked: StoredValue<Option<String>>,
    pub show_help: RwSignal<bool>,
    /// The import dialog (`ui::import`) is open.
    pub show_import: RwSignal<bool>,
    /// The run was read from an admin tool's output (`mqviz import`): its names are the user's
    /// cluster's, so the page says where a link or an export would carry them.
    pub imported: RwSignal<bool>,
    /// Captures dropped on the page (name, text), waiting for the import dialog to take them.
    pub dropped_captures: RwSignal<Vec<(String, String)>>,
    /// Bumped whenever a different model is loaded (the frame tracker starts over).
    pub epoch: StoredValue<u64>,
    /// The outcome sentence and the model state it was counted at (`Sim::outcome`): the outcome
    /// line and the live region ask for it at the same state, and counting reads every message.
    outcome: StoredValue<Option<(OutcomeAt, Said)>>,
    /// A long run's outcome is being counted in the next frame (`outcome::current`): the page is
    /// not ready until it is, and the frame loop leaves that frame to the counting.
    pub outcome_pending: RwSignal<bool>,
    /// The log event whose provenance is shown.
    pub selected: RwSignal<Option<u32>>,
    /// Checkpoints and entered commands, for time travel.
    pub history: StoredValue<Option<History>, LocalStorage>,
    /// Bumped when the entered commands or branches change (marks and menus re-render).
    pub edits_version: RwSignal<u64>,
    /// The run's key moments, computed ahead on a clone (chapter marks, pacing).
    pub story: StoredValue<Option<Story>, LocalStorage>,
    /// Bumped when the story is recomputed (the marks re-render).
    pub story_version: RwSignal<u64>,
    /// Slow down around key moments and skip idle stretches while playing.
    pub pacing: RwSignal<bool>,
    /// While Pace plays slower or faster than the chosen speed: log10 of the speed it plays at
    /// (rounded to a half), so the speed label can say so.
    pub paced_log: RwSignal<Option<f64>>,
    pub tour: RwSignal<Option<TourRun>>,
    /// The text of the `aria-live` region.
    pub announce: RwSignal<String>,
    /// What the last edit, undo or redo did to the edit list, said where it happened (beside
    /// the timeline's edit marks): a new branch, an edit taken back or entered again.
    pub notice: RwSignal<Option<String>>,
    /// The view last announced (changes are said relative to it).
    pub announced: StoredValue<Option<View>, LocalStorage>,
    /// The inspector tab shown (0 = Inspector, then the model's tabs).
    pub tab: RwSignal<usize>,
    /// A side-by-side comparison, when one is open.
    pub compare: StoredValue<Option<Compare>, LocalStorage>,
    pub comparing: RwSignal<bool>,
    /// Embed mode (`#embed`): canvas and minimal controls only.
    pub embed: RwSignal<bool>,
    /// The embedding pages an embed answers (`origin=` in its link); `None`: any.
    pub embed_origins: StoredValue<Option<Vec<String>>>,
    /// A long seek still under way: the frame loop advances it a slice per frame.
    pub seeking: RwSignal<Option<SeekJob>>,
    /// The time bar's handle is held (a drag under way): a seek that reaches the handle leaves
    /// the DOM panels as they are until it is let go, so a drag's frames go to the seek and the
    /// canvas (`Sim::hold_scrub`).
    scrub_held: StoredValue<bool>,
    /// Counts the runs installed: with the source, the identity of the run shown (`run_id`).
    runs: RwSignal<u64>,
    /// Counts the runs asked for (preset, file, paste, link, comparison) and the runs installed.
    /// A run whose model's code is still being fetched is built only if nothing was asked for or
    /// installed since: the last choice wins, not the last fetch to finish.
    asked: StoredValue<u64>,
}

/// A seek that did not finish within one frame's budget. `chunk` is the simulated time one
/// step of a slice advances, adapted so that a step costs about `1/STEPS_PER_SLICE` of the
/// slice's wall time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeekJob {
    pub from: Millis,
    pub to: Millis,
    pub chunk: Millis,
}

/// Wall time a seek may take before the page gets a frame (the rest runs in later frames).
pub const SEEK_FIRST_MS: f64 = 40.0;
/// Wall time per frame for a seek under way: the page keeps drawing and answering input. Each
/// frame costs the page a few milliseconds besides the seek (the tracker, the progress bar,
/// the browser's own rendering), so longer slices finish a little sooner: measured over a seek
/// to the end of `#bench=1000000`, 26 ms slices took about 3% less time than 20 ms ones and
/// 30-40 ms ones about 6% less. But a frame that also redraws, or ends the seek and renders
/// the panels, takes up to 20 ms more than its slice, and frame work must stay under 50 ms
/// with room to spare on a busy machine: at 28 ms the 95th percentile reached 50, and at
/// 24 ms it was 43 in CI (where other browser tests run alongside), against 35 at 20 ms.
pub const SLICE_MS: f64 = 20.0;
/// A slice advances in about this many steps: it stops before a step that would overrun it,
/// so the steps must be short.
const STEPS_PER_SLICE: f64 = 8.0;
/// Wall time a panel sync spends hashing new log lines before the digest shows as pending; the
/// frame loop goes on with `DIGEST_FRAME_MS` a frame (a seek's slice: the same trade-off).
pub const DIGEST_SYNC_MS: f64 = 4.0;
pub const DIGEST_FRAME_MS: f64 = SLICE_MS;
/// Lines hashed between looks at the clock: few enough that a piece cannot overrun a sync's
/// 4 ms by much (2,048 lines took about 18 ms in the page at the end of the 1 M bench, so
/// letting go of the time bar spent 22 ms hashing in one task).
const DIGEST_PIECE_LINES: usize = 256;
/// A model state as `Sim::outcome` tells them apart: (epoch, version, events run, time, log length).
type OutcomeAt = (u64, u64, u64, Millis, usize);
/// The outcome sentence, and whether it is an alarm (`Totals::sentence`).
type Said = Option<(String, bool)>;

impl Default for Sim {
    fn default() -> Self {
        Sim::new()
    }
}

impl Sim {
    /// A Sim on the default preset, paused at t=0. Needs a reactive owner (call inside a component).
    pub fn new() -> Sim {
        let sim = Sim {
            history: StoredValue::new_local(None),
            model: StoredValue::new_local(None),
            version: RwSignal::new(0),
            ui_version: RwSignal::new(0),
            digest_shown: RwSignal::new(None),
            playing: RwSignal::new(false),
            speed_log: RwSignal::new(1.0),
            preset: RwSignal::new(0),
            source: RwSignal::new(Source::Preset(0)),
            scenario: StoredValue::new_local(None),
            kind: RwSignal::new(None),
            load_error: RwSignal::new(None),
            link_error: RwSignal::new(None),
            embed_refused: RwSignal::new(false),
            panel_asked: StoredValue::new(None),
            show_help: RwSignal::new(false),
            show_import: RwSignal::new(false),
            imported: RwSignal::new(false),
            dropped_captures: RwSignal::new(Vec::new()),
            epoch: StoredValue::new(0),
            outcome: StoredValue::new(None),
            outcome_pending: RwSignal::new(false),
            selected: RwSignal::new(None),
            edits_version: RwSignal::new(0),
            story: StoredValue::new_local(None),
            story_version: RwSignal::new(0),
            pacing: RwSignal::new(true),
            paced_log: RwSignal::new(None),
            tour: RwSignal::new(None),
            announce: RwSignal::new(String::new()),
            notice: RwSignal::new(None),
            announced: StoredValue::new_local(None),
            tab: RwSignal::new(0),
            compare: StoredValue::new_local(None),
            comparing: RwSignal::new(false),
            embed: RwSignal::new(false),
            embed_origins: StoredValue::new(None),
            seeking: RwSignal::new(None),
            scrub_held: StoredValue::new(false),
            runs: RwSignal::new(0),
            asked: StoredValue::new(0),
        };
        sim.load(0);
        sim
    }

    /// Recomputes the story from the model as it is now, with the edits still ahead.
    pub fn refresh_story(&self) {
        let pending: Vec<Entered> = self.history.with_value(|h| h.as_ref().map(|h| h.pending().to_vec()).unwrap_or_default());
        let story = self.peek(|m| Story::compute_with(m, &pending));
        self.story.set_value(story);
        self.story_version.update(|v| *v += 1);
    }

    /// The preset file loaded, if a preset is.
    pub fn preset_file(&self) -> Option<&'static str> {
        match self.source.get_untracked() {
            Source::Preset(i) => CATALOGUE.get(i).map(|p| p.file),
            Source::Own { .. } => None,
        }
    }

    /// Installs a freshly loaded run (or shows why it could not load) and starts over from it.
    fn install(&self, r: Result<(Loaded, Value), String>, source: Source) {
        self.playing.set(false);
        self.seeking.set(None);
        self.close_compare();
        match r {
            Ok((Loaded { sim: mut m, edits }, scenario)) => {
                self.imported
                    .set(scenario["description"].as_str().is_some_and(|d| d.starts_with(mqviz_app::import::DESCRIPTION_PREFIX)));
                // Paths that need no fetch (an embed `load`, Reset) install directly: a fetch
                // still under way must not replace their run either.
                self.asked.update_value(|n| *n += 1);
                let mut h = History::with_commands(&*m, edits);
                // Edits at t=0 apply at once, as they did when entered.
                let _ = h.advance(&mut m, 0);
                self.history.set_value(Some(h));
                self.kind.set(Some(m.kind()));
                self.model.set_value(Some(m));
                self.scenario.set_value(Some(scenario));
                if let Source::Preset(i) = source {
                    self.preset.set(i);
                }
                self.source.set(source);
                self.runs.update(|n| *n += 1);
                self.load_error.set(None);
            }
            Err(e) => {
                self.load_error.set(Some(e));
                return;
            }
        }
        // Another model may have fewer tabs: back to the Inspector then.
        if self.tab.get_untracked() > super::parts::tabs(self.kind.get_untracked()).len() {
            self.tab.set(0);
        }
        if let Some(panel) = self.panel_asked.get_value() {
            self.panel_asked.set_value(None);
            self.open_panel(&panel);
        }
        self.epoch.update_value(|e| *e += 1);
        self.selected.set(None);
        self.notice.set(None);
        self.tour.set(None);
        self.announced.set_value(None);
        super::canvas::reset();
        self.edits_version.update(|v| *v += 1);
        self.refresh_story();
        // A scenario may open straight into a comparison.
        if let Some((label, variant)) = self.scenario.with_value(|s| s.as_ref().and_then(compare_variant)) {
            if let Err(e) = self.open_compare(variant, &label) {
                self.load_error.set(Some(format!("compare: {e}")));
            }
        }
        self.bump();
    }

    /// The run shown, as `<preset file or "own">:<n>`, n counting the runs installed (tracked).
    pub fn run_id(&self) -> String {
        let n = self.runs.get();
        match self.source.get() {
            Source::Preset(i) => format!("{}:{n}", CATALOGUE.get(i).map_or("", |p| p.file)),
            Source::Own { .. } => format!("own:{n}"),
        }
    }

    /// The run's identity once the page shows what was asked for, `None` while it does not yet:
    /// while a run's texts or code or a link are being fetched, a seek is under way, it plays,
    /// or the panels have not caught up with the model. The clock carries it as `data-ready`,
    /// which is what the browser tests wait for before they read the page (tracked).
    pub fn ready(&self) -> Option<String> {
        let id = self.run_id();
        let settled = super::fetching::what().is_none()
            && self.seeking.get().is_none()
            && !self.playing.get()
            && self.version.get() == self.ui_version.get()
            && !self.outcome_pending.get()
            && self.model.with_value(Option::is_some);
        settled.then_some(id)
    }

    /// Asks for a run: the ticket stays current until another run is asked for or installed.
    pub fn ask(&self) -> u64 {
        self.asked.update_value(|n| *n += 1);
        self.asked.get_value()
    }

    pub fn still_asked(&self, ticket: u64) -> bool {
        self.asked.get_value() == ticket
    }

    /// Runs `then` once the model `v` names is in the page (see `ui::parts::when_ready`),
    /// unless another run was asked for meanwhile.
    fn when_ready(&self, v: &Value, then: impl FnOnce(Result<(), String>) + 'static) {
        let (this, ticket) = (*self, self.ask());
        super::parts::when_ready_for(v, move |r| {
            if this.still_asked(ticket) {
                then(r)
            }
        });
    }

    /// Runs `then` with the texts of preset `i` once they are in the page (see `ui::presets`),
    /// unless another run was asked for meanwhile.
    fn when_texts(&self, i: usize, then: impl FnOnce(Result<Texts, String>) + 'static) {
        let (this, ticket) = (*self, self.ask());
        super::presets::when_ready(i, move |r| {
            if this.still_asked(ticket) {
                then(r)
            }
        });
    }

    /// Loads preset `i` at t=0.
    pub fn load(&self, i: usize) {
        if i >= CATALOGUE.len() {
            return;
        }
        let this = *self;
        self.when_texts(i, move |texts| {
            let v = match texts.and_then(|t| parse_json(t.scenario).map_err(|e| errors_text(&[e]))) {
                Ok(v) => v,
                Err(e) => return this.install(Err(e), Source::Preset(i)),
            };
            this.when_ready(&v.clone(), move |fetched| {
                let r =
                    fetched.and_then(|()| super::parts::load_value(v.clone()).map(|l| (l, v)).map_err(|errs| errors_text(&errs)));
                this.install(r, Source::Preset(i));
            });
        });
    }

    /// Loads a scenario document (opened, pasted or from a link), with its `edits` if it has
    /// any. Nothing changes when it is invalid; the errors (with their JSON paths) are returned.
    pub fn load_text(&self, text: &str, name: &str) -> Result<(), String> {
        let v = parse_json(text).map_err(|e| errors_text(&[e]))?;
        self.load_value(v, name)
    }

    /// `load_text`, once the model's code is in the page (fetched first if need be); `done` gets
    /// the outcome.
    pub fn load_text_then(&self, text: &str, name: String, done: impl FnOnce(Result<(), String>) + 'static) {
        let this = *self;
        match parse_json(text) {
            Ok(v) => this.when_ready(&v.clone(), move |fetched| done(fetched.and_then(|()| this.load_value(v, &name)))),
            Err(e) => done(Err(errors_text(&[e]))),
        }
    }

    pub fn load_value(&self, v: Value, name: &str) -> Result<(), String> {
        let mut scenario = v.clone();
        if let Value::Object(o) = &mut scenario {
            o.remove("edits");
        }
        // A bad document leaves the current run alone: check first.
        let loaded = super::parts::load_value(v).map_err(|errs| errors_text(&errs))?;
        self.install(Ok((loaded, scenario)), Source::Own { name: name.to_string() });
        Ok(())
    }

    /// Loads preset `i` changed by a link (its seed, its edits in `edits`).
    fn load_preset_value(&self, v: Value, i: usize) -> Result<(), String> {
        let mut scenario = v.clone();
        if let Value::Object(o) = &mut scenario {
            o.remove("edits");
        }
        let loaded = super::parts::load_value(v).map_err(|errs| errors_text(&errs))?;
        self.install(Ok((loaded, scenario)), Source::Preset(i));
        Ok(())
    }

    /// Loads the generated benchmark scenario (`#bench`), thousands of messages in flight.
    pub fn load_bench(&self, messages: u64) {
        let _ = self.load_text(&mqviz_app::presets::load_scenario(messages), "benchmark");
        // The benchmark measures frames, not pacing.
        self.pacing.set(false);
    }

    /// Opens a link: the preset or carried scenario, the seed, the edits, then the playhead.
    /// When the model's code has to be fetched first, this returns at once and opens the link
    /// once it has arrived; errors then show as `load_error`.
    pub fn open_link(&self, l: &Link) -> Result<(), String> {
        // At once, even when the run comes later: the page picks its layout when it starts.
        self.embed.set(l.embed);
        let base = match (&l.scenario, l.preset) {
            (Some(s), _) => Some((s.clone(), "linked scenario".to_string(), None)),
            (None, Some(file)) => match CATALOGUE.iter().position(|p| p.file == file) {
                Some(i) => match super::presets::in_page(i) {
                    Some(texts) => parse_json(texts.scenario).ok().map(|v| (v, file.to_string(), Some(i))),
                    None => {
                        let (this, l) = (*self, l.clone());
                        self.when_texts(i, move |texts| {
                            if let Err(e) = texts.and_then(|_| this.open_link(&l)) {
                                this.load_error.set(Some(format!("link: {e}")));
                            }
                        });
                        return Ok(());
                    }
                },
                None => None,
            },
            (None, None) => None,
        };
        let base = base.map(|(mut v, name, preset)| {
            if let Value::Object(o) = &mut v {
                if let Some(seed) = l.seed {
                    o.insert("seed".into(), Value::from(seed));
                }
                if let Some(edits) = &l.edits {
                    o.insert("edits".into(), Value::Array(edits.clone()));
                }
            }
            (v, name, preset)
        });
        // With its edits: an edit may subscribe with SQL92.
        if let Some((v, ..)) = base.as_ref().filter(|(v, ..)| !super::parts::ready_for(v)) {
            let (this, l) = (*self, l.clone());
            self.when_ready(v, move |fetched| {
                if let Err(e) = fetched.and_then(|()| this.open_link(&l)) {
                    this.load_error.set(Some(format!("link: {e}")));
                }
            });
            return Ok(());
        }
        // The panel opens with the link's run, whose model's tabs it names.
        if let Some(panel) = &l.panel {
            match base.is_some() {
                true => self.panel_asked.set_value(Some(panel.clone())),
                false => self.open_panel(panel),
            }
        }
        if let Some((v, name, preset)) = base {
            let plain = l.seed.is_none() && l.edits.as_ref().is_none_or(|e| e.is_empty());
            match preset {
                Some(i) if plain => self.load(i),
                // The preset with the link's seed or edits is still that preset, with its name
                // and its tour: the page says "with your edits", and its own links stay short.
                Some(i) => self.load_preset_value(v, i)?,
                None => self.load_value(v, &name)?,
            }
        }
        if let Some(speed) = l.speed {
            self.speed_log.set(super::math::log10(speed));
        }
        match (l.time, l.event) {
            (Some(t), Some(event)) => self.advance_to_event(t, event),
            (Some(t), None) => self.advance(t),
            _ => {}
        }
        Ok(())
    }

    /// Opens the inspector panel a link names (`inspector`, or one of the model's tabs); an
    /// unknown name is said beside the link's other faults.
    fn open_panel(&self, panel: &str) {
        let tabs = super::parts::tabs(self.kind.get_untracked());
        match tabs.iter().position(|t| t.label.eq_ignore_ascii_case(panel)) {
            Some(i) => self.tab.set(i + 1),
            None if panel == "inspector" => self.tab.set(0),
            None => {
                let names: Vec<String> =
                    std::iter::once("inspector".to_string()).chain(tabs.iter().map(|t| t.label.to_ascii_lowercase())).collect();
                let fault = format!("panel: this run has no panel {panel:?} (it has {})", names.join(", "));
                self.link_error.update(|e| {
                    *e = Some(match e.take() {
                        Some(before) => format!("{before} Also {fault}."),
                        None => format!("This link asked for a panel the run does not have: {fault}. The rest of it opened."),
                    })
                });
            }
        }
    }

    /// The run as a link fragment: preset (or the scenario itself), every edit, the playhead,
    /// the speed and the open panel. A link with packed fields takes the link packer: until it is
    /// in the page this is `Err` and asks for it; it tracks the packer, so an effect or a view
    /// that wrote nothing writes again once it has arrived.
    pub fn link(&self) -> Result<String, String> {
        let l = self.link_fields();
        let packer = super::url::packer();
        if packer.is_none() && link::needs_pack(&l) {
            super::url::prefetch_packer();
        }
        link::write_fragment_with(&l, packer)
    }

    /// `link`, once the packer is in the page if the link needs it (for Copy link).
    pub fn link_then(&self, then: impl FnOnce(Result<String, String>) + 'static) {
        let l = self.link_fields();
        match super::url::packer_untracked() {
            Some(p) => then(link::write_fragment_with(&l, Some(p))),
            None if !link::needs_pack(&l) => then(link::write_fragment_with(&l, None)),
            None => super::url::when_packer(move |p| then(p.and_then(|p| link::write_fragment_with(&l, Some(p))))),
        }
    }

    fn link_fields(&self) -> Link {
        let edits: Vec<Value> = self
            .history
            .with_value(|h| h.as_ref().map(|h| h.commands().iter().map(|c| c.command.clone()).collect()))
            .unwrap_or_default();
        let (preset, scenario, seed) = match self.source.get_untracked() {
            Source::Preset(i) => (CATALOGUE.get(i).map(|p| p.file), None, self.seed_changed(i)),
            Source::Own { .. } => (None, self.scenario.get_value(), None),
        };
        // A Step that stopped inside an instant: the event names where, as `t` alone cannot.
        let event = self.peek(|m| (m.next_event_time() == Some(m.now())).then(|| m.events_run())).flatten();
        let panel = match self.tab.get_untracked() {
            0 => None,
            i => super::parts::tabs(self.kind.get_untracked()).get(i - 1).map(|t| t.label.to_ascii_lowercase()),
        };
        Link {
            preset,
            scenario,
            seed,
            edits: Some(edits),
            time: Some(self.peek(|m| m.now()).unwrap_or(0)),
            event,
            speed: Some((self.speed() * 1000.0).round() / 1000.0),
            panel,
            embed: self.embed.get_untracked(),
            ..Link::default()
        }
    }

    /// The seed of preset `i` as loaded, when a link changed it from the preset's own.
    fn seed_changed(&self, i: usize) -> Option<u64> {
        let seed_of = |v: &Value| v.get("seed").and_then(Value::as_u64);
        let loaded = self.scenario.with_value(|s| s.as_ref().and_then(seed_of));
        let own = super::presets::in_page(i).and_then(|t| parse_json(t.scenario).ok()).and_then(|v| seed_of(&v));
        loaded.filter(|s| Some(*s) != own)
    }

    /// The scenario with every edit of this run, as a file `mqviz run` reproduces.
    pub fn export(&self) -> Option<Value> {
        let scenario = self.scenario.get_value()?;
        let now = self.peek(|m| m.now()).unwrap_or(0);
        Some(self.history.with_value(|h| registry::export(&scenario, h.as_ref().map(History::commands).unwrap_or(&[]), now)))
    }

    /// Hashes log lines for about `budget_ms` of wall time, going on from the lines already
    /// hashed, and shows the digest once they cover the log. True when it is shown.
    pub fn fold_digest(&self, budget_ms: f64) -> bool {
        let start = perf_now();
        let digest = self.peek(|m| loop {
            match m.digest_within(DIGEST_PIECE_LINES) {
                Some(d) => break Some(d),
                None if perf_now() - start >= budget_ms => break None,
                None => {}
            }
        });
        let digest = digest.flatten();
        if self.digest_shown.get_untracked() != digest {
            self.digest_shown.set(digest);
        }
        digest.is_some()
    }

    /// The event-log digest of the run so far, as 16 hex digits (hashing every line not hashed
    /// yet, however many: for callers that need the value now).
    pub fn digest(&self) -> String {
        self.peek(|m| format!("{:016x}", m.digest())).unwrap_or_default()
    }

    /// Runs forward to the next key moment and pauses there.
    pub fn next_moment(&self) {
        let now = self.peek(|m| m.now()).unwrap_or(0);
        let next = self.story.with_value(|s| s.as_ref().and_then(|s| s.next_mark(now)).map(|m| m.at));
        if let Some(at) = next {
            self.playing.set(false);
            self.advance(at);
        }
    }

    /// Starts the preset's tour from the beginning (reloading the preset).
    pub fn start_tour(&self) {
        let Some(file) = self.preset_file() else { return };
        let Some(tour) = super::presets::tour(file) else { return };
        self.load(self.preset.get_untracked());
        // Pin the steps on a run to the end: the future is determined by the scenario.
        let pinned = self.peek(|m| {
            let mut ahead = m.clone_box();
            let until = ahead.until();
            ahead.run_until(until);
            tour.pin(&*ahead)
        });
        match pinned {
            Some(Ok(pinned)) => {
                self.tour.set(Some(TourRun { tour, pinned, step: None }));
                self.tour_step(0);
            }
            Some(Err(e)) => self.load_error.set(Some(e)),
            None => {}
        }
    }

    /// Shows step `k` of the running tour: the model is moved to its event and paused.
    pub fn tour_step(&self, k: usize) {
        let Some(run) = self.tour.get_untracked() else { return };
        let Some(p) = run.pinned.get(k) else { return };
        let at = p.at;
        self.playing.set(false);
        self.seek(at);
        self.tour.update(|t| {
            if let Some(t) = t {
                t.step = Some(k);
            }
        });
    }

    pub fn end_tour(&self) {
        self.tour.set(None);
    }

    pub fn bump(&self) {
        self.version.update(|v| *v += 1);
        // While playing or seeking, the frame loop decides when the panels catch up.
        if !self.playing.get_untracked() && self.seeking.get_untracked().is_none() {
            self.sync_ui();
        }
    }

    /// Play, or pause and bring the panels up to date.
    pub fn toggle_play(&self) {
        if self.playing.get_untracked() {
            self.playing.set(false);
            self.sync_ui();
        } else {
            self.playing.set(true);
        }
    }

    /// Brings the DOM panels up to date with the model.
    pub fn sync_ui(&self) {
        let v = self.version.get_untracked();
        if self.ui_version.get_untracked() != v {
            self.ui_version.set(v);
        }
        self.fold_digest(DIGEST_SYNC_MS);
    }

    /// The run's outcome in words (`Totals::sentence`) at the model's state now, counted once per
    /// state (without subscribing).
    pub fn outcome(&self) -> Option<(String, bool)> {
        if let Some(said) = self.counted_outcome() {
            return said;
        }
        let at = self.outcome_at()?;
        let said = self.peek(|m| m.totals().sentence()).flatten();
        self.outcome.set_value(Some((at, said.clone())));
        said
    }

    /// The outcome if it has been counted at the model's state now.
    pub fn counted_outcome(&self) -> Option<Said> {
        let at = self.outcome_at()?;
        self.outcome.with_value(|o| o.as_ref().filter(|(was, _)| *was == at).map(|(_, s)| s.clone()))
    }

    fn outcome_at(&self) -> Option<OutcomeAt> {
        self.peek(|m| (self.epoch.get_value(), self.version.get_untracked(), m.events_run(), m.now(), m.log_len()))
    }

    /// Reads the model (subscribing to `ui_version`); `None` when no scenario loaded.
    pub fn read<R>(&self, f: impl FnOnce(&dyn Simulation) -> R) -> Option<R> {
        self.ui_version.track();
        self.peek(f)
    }

    /// Like `read` but without subscribing.
    pub fn peek<R>(&self, f: impl FnOnce(&dyn Simulation) -> R) -> Option<R> {
        self.model.with_value(|m| m.as_deref().map(f))
    }

    /// Reads the model as its concrete world type (for `ui/<model>/` panels), subscribing to
    /// `ui_version`. `None` when another model is loaded.
    pub fn read_as<W: 'static, R>(&self, f: impl FnOnce(&W) -> R) -> Option<R> {
        self.ui_version.track();
        self.peek_as(f)
    }

    /// Like `read_as` but without subscribing.
    pub fn peek_as<W: 'static, R>(&self, f: impl FnOnce(&W) -> R) -> Option<R> {
        self.model.with_value(|m| m.as_deref().and_then(|m| m.as_any().downcast_ref::<W>()).map(f))
    }

    /// Applies a history operation to the model (and the comparison's run, kept in lockstep),
    /// then bumps the version. `backwards` when it may move time back (panels and the frame
    /// tracker start over).
    fn with_history(&self, backwards: bool, f: impl FnOnce(&mut History, &mut Box<dyn Simulation>)) {
        let commands = || self.history.with_value(|h| h.as_ref().map(|h| (h.commands().len(), h.branches().len())));
        let before = commands();
        self.model.update_value(|m| {
            if let Some(m) = m {
                self.history.update_value(|h| {
                    if let Some(h) = h {
                        f(h, m);
                    }
                });
            }
        });
        // The comparison follows the same clock.
        let now = self.peek(|m| m.now()).unwrap_or(0);
        self.compare.update_value(|c| {
            if let Some(c) = c {
                c.history.seek(&mut c.model, now);
            }
        });
        if backwards {
            self.playing.set(false);
            self.epoch.update_value(|e| *e += 1);
            self.selected.set(None);
        }
        if commands() != before {
            self.edits_version.update(|v| *v += 1);
            self.refresh_story();
        }
        self.bump();
    }

    /// Runs forward to `t`, re-entering edits as their instants come.
    pub fn advance(&self, t: Millis) {
        self.with_history(false, |h, m| {
            let _ = h.advance(m, t);
        });
    }

    /// Runs forward (or back) to the `event`-th event of the run, inside instant `t`: where a
    /// link made after Step stopped.
    pub fn advance_to_event(&self, t: Millis, event: u64) {
        let backwards = self.peek(|m| t < m.now() || m.events_run() > event).unwrap_or(false);
        self.with_history(backwards, |h, m| {
            let _ = h.advance_to_event(m, t, event);
        });
    }

    /// One step back: the state right after the previous instant at which something happened.
    pub fn step_back(&self) {
        self.with_history(true, |h, m| h.step_back(m));
    }

    /// Moves to simulated time `t` (backwards by checkpoint + replay). Edits are kept. A seek that
    /// takes longer than `SEEK_FIRST_MS` goes on in slices across frames (`seeking`), with a
    /// progress bar and a cancel button, so a long run never freezes the page.
    pub fn seek(&self, t: Millis) {
        self.seeking.set(None);
        let from = self.peek(|m| m.now()).unwrap_or(0);
        self.seek_slices(SeekJob { from, to: t, chunk: 50 }, SEEK_FIRST_MS, true);
    }

    /// Moves toward simulated time `t` without doing the work now: the time bar's input. A seek
    /// under way is turned toward `t` (the positions the handle has passed are dropped); else a
    /// seek starts. Either way the frame loop advances it a slice per frame, so dragging the bar
    /// over a long run never holds up the page, however many positions it reports.
    pub fn seek_toward(&self, t: Millis) {
        let job = match self.seeking.get_untracked() {
            Some(job) => SeekJob { to: t, ..job },
            None => {
                let now = self.peek(|m| m.now()).unwrap_or(0);
                if now == t {
                    return;
                }
                SeekJob { from: now, to: t, chunk: 50 }
            }
        };
        self.seeking.set(Some(job));
    }

    /// Whether the time bar's handle is held: the frame loop then leaves the live region and
    /// the digest, like the panels, to the moment it is let go.
    pub fn scrub_held(&self) -> bool {
        self.scrub_held.get_value()
    }

    /// The time bar's handle is pressed (`true`) or let go (`false`). Let go with its seek done,
    /// the panels catch up in the next frame (the frame loop syncs them when no handle is held),
    /// not in the pointer's task: with the outcome's counting over a million messages, the two
    /// together were one long task.
    pub fn hold_scrub(&self, held: bool) {
        self.scrub_held.set_value(held);
    }

    /// Advances a seek for about `budget_ms` of wall time; what is left stays in `seeking` for
    /// the next frame. Each slice is one `History::advance`, so edits and checkpoints happen
    /// exactly as in a seek done at once. A seek turned back behind the model's time (the time
    /// bar dragged back) first restores the checkpoint before its target: a clone.
    pub fn seek_slices(&self, mut job: SeekJob, budget_ms: f64, sync_now: bool) {
        let start = perf_now();
        let mut done = false;
        if self.peek(|m| job.to < m.now()).unwrap_or(false) {
            // `seeking` stays set meanwhile: the panels wait for the seek's end.
            let mut restored = false;
            self.with_history(true, |h, m| restored = h.rewind(m, job.to));
            if !restored {
                self.seeking.set(None);
                return;
            }
            job.from = self.peek(|m| m.now()).unwrap_or(0);
        }
        // The DOM panels wait for the end: re-rendering them per slice would cost more than the
        // slices (the clock and the progress bar follow `version`).
        self.seeking.set(Some(job));
        self.with_history(false, |h, m| loop {
            if m.now() >= job.to {
                done = true;
                break;
            }
            let next = m.now().saturating_add(job.chunk).min(job.to);
            let t0 = perf_now();
            let _ = h.advance(m, next);
            // Aim each step at a fraction of the budget: cheap stretches grow the chunk fast,
            // a burst of events shrinks it (never below one simulated millisecond).
            let step = budget_ms / STEPS_PER_SLICE;
            let took = (perf_now() - t0).max(0.05);
            let scale = decimal::clamp(step / took, 0.25, 8.0);
            job.chunk = ((job.chunk as f64 * scale) as Millis).max(1);
            // Stop before a step that would end past the budget, which is what keeps a frame's
            // work under the limit the page promises.
            if perf_now() - start + took * scale > budget_ms {
                break;
            }
        });
        self.seeking.set(if done { None } else { Some(job) });
        // A seek done within its first call (`seek`) shows its panels at once; one the frame
        // loop finished has spent this frame's budget, and the next frame syncs them.
        if done && sync_now && !self.scrub_held.get_value() {
            self.sync_ui();
        }
    }

    /// Stops a seek under way where it has got to.
    pub fn cancel_seek(&self) {
        if self.seeking.get_untracked().is_some() {
            self.seeking.set(None);
            self.sync_ui();
        }
    }

    /// Makes an earlier branch the current one, at the same instant.
    pub fn switch_branch(&self, i: usize) {
        self.with_history(true, |h, m| h.switch_branch(m, i));
    }

    pub fn now(&self) -> Millis {
        self.version.track();
        self.peek(|m| m.now()).unwrap_or(0)
    }

    pub fn speed(&self) -> f64 {
        super::math::pow10(self.speed_log.get_untracked())
    }

    pub fn until(&self) -> Millis {
        self.peek(|m| m.until()).unwrap_or(0)
    }

    /// Runs the next scheduled event, or the next edit if it comes first.
    pub fn step(&self) {
        let next_edit = self.history.with_value(|h| h.as_ref().and_then(|h| h.pending().first().map(|c| c.at)));
        let next_event = self.peek(|m| m.next_event_time()).flatten();
        match (next_event, next_edit) {
            (_, Some(e)) if next_event.is_none_or(|t| e <= t) => self.advance(e),
            (Some(t), _) => self.with_history(false, |h, m| {
                m.step_until(t);
                h.after_advance(&**m);
            }),
            _ => {}
        }
    }

    pub fn run_to_end(&self) {
        self.playing.set(false);
        let until = self.until();
        self.seek(until);
    }

    /// Enters a command (a timeline entry in the model's JSON form, without `at`) at the current
    /// time and applies it right away (and whatever else is due at this instant), so the editors
    /// see its effect while paused. An invalid command changes nothing; its errors are returned.
    pub fn command(&self, command: Value) -> Result<(), String> {
        // An edit lands at the playhead: a seek under way stops where it is.
        self.cancel_seek();
        let mut result = Ok(());
        let mut forked = None;
        self.model.update_value(|m| {
            if let Some(m) = m {
                self.history.update_value(|h| {
                    result = match h {
                        Some(h) => {
                            // Edits still ahead of the playhead: entering this one forks a branch.
                            let later = h.pending().len();
                            let r = h.command(m, command);
                            if r.is_ok() && later > 0 {
                                forked = Some((m.now(), later));
                            }
                            r
                        }
                        None => m.enter_command(&command),
                    };
                });
            }
        });
        if result.is_ok() {
            self.edits_version.update(|v| *v += 1);
            self.refresh_story();
            self.notice.set(forked.map(|(at, later)| {
                let later = if later == 1 { "the later edit is".to_string() } else { format!("the {later} later edits are") };
                format!(
                    "This edit at {} started a new branch: {later} kept under \"Earlier branches\". Ctrl+Z takes it back.",
                    fmt_ms(at)
                )
            }));
        }
        self.bump();
        result.map_err(|errs| errors_text(&errs))
    }

    /// Takes back the latest edit of the current branch (Ctrl+Z): the run is rebuilt at the
    /// playhead without it, and a branch that edit had forked is current again.
    pub fn undo(&self) {
        self.cancel_seek();
        let mut taken = None;
        self.with_history(true, |h, m| taken = h.undo(m));
        self.notice.set(
            taken.map(|c| format!("Took back {} at {}. Ctrl+Shift+Z enters it again.", edit_name(&c.command), fmt_ms(c.at))),
        );
    }

    /// Enters the edit `undo` took back last, at its own instant (Ctrl+Shift+Z).
    pub fn redo(&self) {
        self.cancel_seek();
        let mut entered = None;
        self.with_history(true, |h, m| entered = h.redo(m));
        self.notice.set(entered.map(|c| format!("Entered {} again at {}.", edit_name(&c.command), fmt_ms(c.at))));
    }

    pub fn can_undo(&self) -> bool {
        self.edits_version.track();
        self.history.with_value(|h| h.as_ref().is_some_and(History::can_undo))
    }

    pub fn can_redo(&self) -> bool {
        self.edits_version.track();
        self.history.with_value(|h| h.as_ref().is_some_and(History::can_redo))
    }

    /// The number of edits in the current branch.
    pub fn edit_count(&self) -> usize {
        self.edits_version.track();
        self.history.with_value(|h| h.as_ref().map(|h| h.commands().len()).unwrap_or(0))
    }

    /// Where the story ends (playing pauses there once; Play continues past it).
    pub fn at_end(&self) -> bool {
        self.version.track();
        self.peek(|m| m.now() >= m.until()).unwrap_or(true)
    }

    /// Opens a comparison: `scenario` (a variant of this one) runs beside the current run, in
    /// lockstep from t=0.
    /// When the variant's model has to be fetched first, this returns at once and opens the
    /// comparison once it has arrived; errors then show as `load_error`.
    pub fn open_compare(&self, scenario: Value, label: &str) -> Result<(), String> {
        if !super::parts::ready_for(&scenario) {
            let (this, label) = (*self, label.to_string());
            self.when_ready(&scenario.clone(), move |fetched| {
                if let Err(e) = fetched.and_then(|()| this.open_compare(scenario, &label)) {
                    this.load_error.set(Some(format!("compare: {e}")));
                }
            });
            return Ok(());
        }
        let Loaded { sim: mut other, edits } = super::parts::load_value(scenario).map_err(|errs| errors_text(&errs))?;
        let mut h = History::with_commands(&*other, edits);
        let now = self.peek(|m| m.now()).unwrap_or(0);
        let _ = h.advance(&mut other, now);
        self.compare.set_value(Some(Compare { label: label.to_string(), model: other, history: h }));
        self.comparing.set(true);
        self.epoch.update_value(|e| *e += 1);
        self.bump();
        Ok(())
    }

    /// Compares with an earlier branch of this run.
    pub fn compare_branch(&self, i: usize) -> Result<(), String> {
        let Some(scenario) = self.scenario.get_value() else { return Err("no scenario".into()) };
        let branch = self.history.with_value(|h| h.as_ref().and_then(|h| h.branches().get(i).cloned()));
        let Some(branch) = branch else { return Err("no such branch".into()) };
        let v = registry::export(&scenario, &branch.commands, 0);
        self.open_compare(v, &format!("branch forked at {}", fmt_ms(branch.forked_at)))
    }

    pub fn close_compare(&self) {
        if self.comparing.get_untracked() {
            self.compare.set_value(None);
            self.comparing.set(false);
            self.epoch.update_value(|e| *e += 1);
        }
    }

    /// Reads the comparison's run.
    pub fn peek_compare<R>(&self, f: impl FnOnce(&dyn Simulation) -> R) -> Option<R> {
        self.compare.with_value(|c| c.as_ref().map(|c| f(&*c.model)))
    }
}

/// An edit as a reader names it: its action and whom it is for (`subscribe ConsumerA`).
pub fn edit_name(command: &Value) -> String {
    let what = command.get("action").and_then(Value::as_str).unwrap_or("edit");
    // A consumer is named by "consumer" (or "clientId", the older spelling); an added one by its
    // object's name, which defaults to its clientId.
    let named = |c: &Value| c.get("name").or_else(|| c.get("clientId")).and_then(Value::as_str).map(str::to_string);
    let who = ["consumer", "clientId", "group", "topic", "producer"]
        .iter()
        .find_map(|k| command.get(*k).and_then(|v| v.as_str().map(str::to_string).or_else(|| named(v))));
    match who {
        Some(who) => format!("{what} {who}"),
        None => what.to_string(),
    }
}

/// "12.345 s".
pub fn fmt_ms(ms: Millis) -> String {
    format!("{}.{:03} s", ms / 1000, ms % 1000)
}

/// Escapes text for HTML built as a string (read-only tables rendered with `inner_html`).
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes an identifier for HTML and lets it wrap where a reader would split it: after `%`,
/// `-`, `_`, `.`, `:`, `@`, and between a lower-case letter and an upper-case one
/// (`%RETRY%<wbr>test<wbr>Group<wbr>Consumer`), never in the middle of a word.
pub fn esc_ident(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let chars: Vec<char> = s.chars().collect();
    let mut prev: Option<char> = None;
    for (i, &c) in chars.iter().enumerate() {
        // Only before a capital that starts a word ("Group" in "testGroup"), not a lone suffix
        // ("B" in "ConsumerB").
        // ASCII case only: the page carries no Unicode case tables for a line-break hint.
        let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
        if prev.is_some_and(|p| p.is_ascii_lowercase() && c.is_ascii_uppercase()) && next_lower {
            out.push_str("<wbr>");
        }
        out.push_str(&esc(&c.to_string()));
        if matches!(c, '%' | '-' | '_' | '.' | ':' | '@') {
            out.push_str("<wbr>");
        }
        prev = Some(c);
    }
    out
}
