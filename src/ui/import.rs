//! "Import…": what an admin tool printed (pasted, or files picked) read into a snapshot scenario
//! by `mqviz_app::import`, its notes shown row by row (what was read, what was derived, every
//! line that was not used, with its line number), then opened as a run. A part fetched when first
//! shown (`ui::lazy`). Everything happens in the page: nothing imported is sent anywhere.

use leptos::prelude::*;
use mqviz_app::import::{import, Capture, Format, Imported, NoteKind};

use super::state::Sim;

/// The split point of the import dialog.
#[cfg_attr(mqviz_split, wasm_split_helpers::wasm_split(import, fallible))]
pub fn part() -> Result<fn(Sim) -> AnyView, wasm_split_helpers::SplitLoaderError> {
    Ok(|sim| dialog(sim).into_any())
}

/// Captures this large are read two frames later, after the dialog has shown that it is reading.
const LARGE_CAPTURE_BYTES: usize = 1 << 20;

/// The notes the dialog lists; the summary counts them all.
const NOTES_SHOWN: usize = 1_000;

/// The notes of one import, as the dialog lists them.
#[derive(Clone)]
struct Read {
    scenario: String,
    title: String,
    notes: Vec<(NoteKind, String)>,
}

fn read_captures(pasted: &str, files: &[(String, String)]) -> Result<Read, String> {
    let mut captures: Vec<Capture> =
        files.iter().map(|(name, text)| Capture { name: name.clone(), text: text.clone(), format: Format::Auto }).collect();
    if !pasted.trim().is_empty() {
        captures.push(Capture { name: "paste".into(), text: pasted.to_string(), format: Format::Auto });
    }
    if captures.is_empty() {
        return Err(
            "Paste what kafka-consumer-groups.sh, mqadmin or pulsar-admin printed, or add the files it was saved in.".into()
        );
    }
    let Imported { scenario, notes } = import(&captures).map_err(|e| e.to_string())?;
    let title = scenario["name"].as_str().unwrap_or("Imported").to_string();
    Ok(Read { scenario: scenario.to_string(), title, notes: notes.iter().map(|n| (n.kind, n.to_string())).collect() })
}

fn dialog(sim: Sim) -> impl IntoView {
    let pasted = RwSignal::new(String::new());
    let files = RwSignal::new(Vec::<(String, String)>::new());
    let result = RwSignal::new(None::<Result<Read, String>>);
    let file_input: NodeRef<leptos::html::Input> = NodeRef::new();
    // A large capture takes a while to read: the dialog says so first (this frame paints it),
    // and the reading runs in a later task.
    let reading = RwSignal::new(None::<String>);
    let read = move || {
        let (text, fs) = (pasted.get_untracked(), files.get_untracked());
        let bytes = text.len() + fs.iter().map(|(_, t)| t.len()).sum::<usize>();
        if bytes < LARGE_CAPTURE_BYTES {
            result.set(Some(read_captures(&text, &fs)));
            return;
        }
        reading.set(Some(format!("Reading {}…", mqviz_engine::budget::mb(bytes as u64))));
        result.set(None);
        // The frame after next: the next one paints the status first.
        request_animation_frame(move || {
            request_animation_frame(move || {
                result.set(Some(read_captures(&text, &fs)));
                reading.set(None);
            })
        });
    };
    // Captures dropped on the page (before or while the dialog is open) join the files.
    Effect::new(move |_| {
        let dropped = sim.dropped_captures.get();
        if dropped.is_empty() {
            return;
        }
        sim.dropped_captures.set(Vec::new());
        files.update(|fs| fs.extend(dropped));
        read();
    });
    let on_files = move |_| {
        let Some(input) = file_input.get_untracked() else { return };
        let Some(list) = input.files() else { return };
        for i in 0..list.length() {
            if let Some(f) = list.get(i) {
                super::share::read_file(f, move |text, name| {
                    files.update(|fs| fs.push((name, text)));
                    read();
                });
            }
        }
        input.set_value("");
    };
    let open = move |_| {
        let Some(Ok(r)) = result.get_untracked() else { return };
        sim.load_text_then(&r.scenario, r.title.clone(), move |loaded| match loaded {
            Ok(()) => {
                sim.imported.set(true);
                sim.show_import.set(false);
            }
            Err(e) => result.set(Some(Err(e))),
        });
    };
    let notes = move || {
        result.get().map(|r| match r {
            Err(e) => view! { <p class="inline-error" role="alert" data-testid="import-error">{e}</p> }.into_any(),
            Ok(r) => {
                let count = |k: NoteKind| r.notes.iter().filter(|(kind, _)| *kind == k).count();
                let n = |k: NoteKind, one: &str, many: &str| match count(k) {
                    1 => format!("1 {one}"),
                    c => format!("{c} {many}"),
                };
                let summary = format!(
                    "{} read, {} not used, {} derived",
                    n(NoteKind::Parsed, "row", "rows"),
                    n(NoteKind::Unused, "line", "lines"),
                    n(NoteKind::Derived, "fact", "facts")
                );
                // A huge capture has a note per row: the list shows the first ones, and says
                // what it leaves out (the CLI prints them all).
                let hidden = r.notes.len().saturating_sub(NOTES_SHOWN);
                let more = (hidden > 0).then(|| {
                    format!(
                        "… and {hidden} more notes, not listed here; `mqviz import FILE 2> notes.txt` writes them all"
                    )
                });
                let items = r
                    .notes
                    .iter()
                    .take(NOTES_SHOWN)
                    .map(|(kind, text)| {
                        let class = match kind {
                            NoteKind::Parsed => "note-read",
                            NoteKind::Unused => "note-unused",
                            NoteKind::Derived => "note-derived",
                        };
                        view! { <li class=class>{text.clone()}</li> }
                    })
                    .collect_view();
                // The button before the notes: on a small screen a long list would push it out
                // of sight (at 800×600 it was below the fold).
                view! {
                    <p class="small import-head">
                        <span data-testid="import-summary">{summary}</span>
                        <button class="primary" data-testid="import-run" on:click=open>"Open as a run"</button>
                    </p>
                    // Scrolls when long: focusable, so the keyboard can scroll it too.
                    <ol class="import-notes" data-testid="import-notes" tabindex="0" aria-label="What the import read, line by line">
                        {items}
                    </ol>
                    {more.map(|m| view! { <p class="small muted" data-testid="import-more">{m}</p> })}
                }
                .into_any()
            }
        })
    };
    view! {
        <div class="import" role="dialog" aria-label="Import a snapshot" data-testid="import-dialog">
            <h2>"Import what your admin tools print"</h2>
            <p class="small">
                "Paste, drop or add the output of "<code>"kafka-consumer-groups.sh --describe"</code>", "
                <code>"--members --verbose"</code>" and "<code>"--state"</code>" (Kafka 0.10 to 4.x), or of "
                <code>"mqadmin consumerProgress"</code>" and "<code>"consumerConnection"</code>
                " with the clients' rebalance log lines (RocketMQ 4.7 to 5.x), or of "<code>"pulsar-admin topics stats"</code>" and "
                <code>"stats-internal"</code>" (Pulsar 2.8 to 4.x, partitioned too); several captures of one group or topic are read together. It opens as it was: members keep their partitions or queues, Pulsar consumers their cursors and active roles, and the timeline is yours to change."
            </p>
            <p class="small muted" data-testid="import-privacy">
                "What you import stays in this browser: it is read here and sent nowhere."
            </p>
            <textarea
                data-testid="import-text"
                aria-label="Captured output"
                rows="8"
                spellcheck="false"
                placeholder="GROUP  TOPIC  PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  CONSUMER-ID  HOST  CLIENT-ID"
                on:input=move |ev| pasted.set(event_target_value(&ev))
            ></textarea>
            <div class="row">
                <button data-testid="import-read" on:click=move |_| read()>"Read"</button>
                <button on:click=move |_| {
                    if let Some(i) = file_input.get_untracked() {
                        i.click();
                    }
                }>"Add files…"</button>
                <input
                    type="file"
                    multiple
                    class="sr-only"
                    tabindex="-1"
                    aria-label="Add captured output files"
                    data-testid="import-files"
                    node_ref=file_input
                    on:change=on_files
                />
                <span class="small muted">
                    {move || {
                        let names: Vec<String> = files.get().into_iter().map(|(n, _)| n).collect();
                        if names.is_empty() { String::new() } else { format!("files: {}", names.join(", ")) }
                    }}
                </span>
                <button on:click=move |_| sim.show_import.set(false)>"Close"</button>
            </div>
            {move || reading.get().map(|r| view! { <p class="small" role="status" data-testid="import-reading">{r}</p> })}
            {notes}
        </div>
    }
}
