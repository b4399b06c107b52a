//! Shareable links: the URL fragment carries a whole run.
//!
//! `#preset=<file>` (or `scenario=<packed scenario JSON>`), `seed=<n>` (overrides the scenario's),
//! `edits=<packed JSON array of the commands entered>`, `t=<ms>` (the playhead), `event=<n>` (the
//! event inside instant `t` a Step stopped at), `speed=<x>`,
//! `panel=<name>`, and the flags `embed` and `bench`. Packed = deflated, then base64url. Opening the
//! link rebuilds the identical run (same event-log digest). The old `#preset=..&t=..&speed=..`
//! links keep working.
//!
//! Parsing is pure so the UI and the tests share it. Reading the packed fields is a step of its
//! own (`Unpack`), so the page can fetch that code (the inflater) only for a link that has them. A malformed or hostile fragment (truncated,
//! bad base64, bad compression, a decompression bomb, an invalid scenario) gives an error with the
//! column where it goes wrong, never a hang or a panic: the fragment and what it inflates to are
//! bounded.

use std::fmt;

use serde_json::Value;

use super::presets::{entry, Entry};

/// Longest fragment accepted (characters). Longer runs are shared as exported files.
pub const MAX_LINK: usize = 16_384;
/// Most bytes a packed field may inflate to.
pub const MAX_INFLATED: usize = 1 << 20;
const MAX_TIME: u64 = 10_000_000_000;
/// The scenario limit on messages in one run.
const MAX_BENCH_MESSAGES: u64 = 50_000_000;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Link {
    pub preset: Option<&'static str>,
    /// A full scenario carried in the link (an edited or opened one).
    pub scenario: Option<Value>,
    pub seed: Option<u64>,
    /// The commands entered during the run, as timeline JSON with their `at`.
    pub edits: Option<Vec<Value>>,
    pub time: Option<u64>,
    /// `event=<n>`: the playhead stopped inside instant `t` (after Step), at the `n`-th event
    /// of the run (`Simulation::events_run`).
    pub event: Option<u64>,
    pub speed: Option<f64>,
    /// The inspector panel that was open.
    pub panel: Option<String>,
    /// `#embed`: canvas and minimal controls, for docs pages.
    pub embed: bool,
    /// `origin=https://docs.example.org,http://localhost:3000`: the only pages whose messages an
    /// embed carries out (and to which it reports); without it, any embedding page.
    pub origins: Option<Vec<String>>,
    /// `#bench`: the generated many-messages scenario, played at 1x.
    pub bench: bool,
    /// `#bench=<messages>`: the same scenario with that many messages, paused at t=0 (for
    /// measuring seeks over long runs).
    pub bench_messages: Option<u64>,
}

#[derive(Debug, PartialEq, Eq)]
pub struct LinkError {
    /// 1-based column in the fragment, counting the leading `#`.
    pub column: usize,
    pub message: String,
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "link fragment, column {}: {}", self.column, self.message)
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// base64url without padding.
pub fn b64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..=chunk.len() {
            out.push(B64[((n >> (18 - 6 * k)) & 63) as usize] as char);
        }
    }
    out
}

/// Decodes base64url (padding tolerated). `Err` gives the offset of the first bad character.
pub fn b64_decode(text: &str) -> Result<Vec<u8>, usize> {
    let text = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for (i, c) in text.bytes().enumerate() {
        let v = B64.iter().position(|&x| x == c).ok_or(i)? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    if bits >= 6 {
        // A lone trailing character cannot encode a byte: the text was cut short.
        return Err(text.len());
    }
    Ok(out)
}

/// Deflates and base64url-encodes JSON.
pub fn pack(v: &Value) -> String {
    b64_encode(&miniz_oxide::deflate::compress_to_vec(v.to_string().as_bytes(), 9))
}

/// The inverse of `pack`, bounded. `Err((offset, message))`.
pub fn unpack(text: &str) -> Result<Value, (usize, String)> {
    let raw = b64_decode(text).map_err(|i| (i, "not base64url (a link cut short, or mistyped?)".to_string()))?;
    let inflated = miniz_oxide::inflate::decompress_to_vec_with_limit(&raw, MAX_INFLATED).map_err(|e| {
        let why = match e.status {
            miniz_oxide::inflate::TINFLStatus::HasMoreOutput => format!("inflates to more than {MAX_INFLATED} bytes"),
            _ => "not valid compressed data (a link cut short?)".to_string(),
        };
        (0, why)
    })?;
    // Through `&str`, as every other JSON the page reads: `from_slice` would compile a second
    // JSON reader into the page (10 KB gzipped).
    let text = std::str::from_utf8(&inflated).map_err(|e| (0, format!("not valid UTF-8 inside: {e}")))?;
    serde_json::from_str(text).map_err(|e| (0, format!("not valid JSON inside: {e}")))
}

/// How the packed fields are read: `unpack`.
pub type Unpack = fn(&str) -> Result<Value, (usize, String)>;

/// Whether a fragment has packed fields (`scenario=`, `edits=`), which take `unpack` to read.
pub fn has_packed(fragment: &str) -> bool {
    fragment.trim_start_matches('#').split('&').any(|p| p.starts_with("scenario=") || p.starts_with("edits="))
}

/// Parses `location.hash` (with or without the leading `#`). Empty means "no link".
pub fn parse_fragment(fragment: &str) -> Result<Link, LinkError> {
    parse_fragment_with(fragment, Some(unpack))
}

/// `parse_fragment`, reading packed fields with `unpack`; without it they are skipped (a first
/// look at a link, for its flags, before the page has the code to unpack it).
pub fn parse_fragment_with(fragment: &str, unpack: Option<Unpack>) -> Result<Link, LinkError> {
    match parse_fragment_lenient_with(fragment, unpack)? {
        (link, faults) if faults.is_empty() => Ok(link),
        (_, mut faults) => Err(faults.remove(0)),
    }
}

/// `parse_fragment_with` for the page, which opens what a link carries even when a field of
/// it is bad: the link without its bad fields, and a fault for each. `Err` only when the link
/// as a whole cannot be read (too long, or naming a preset and carrying a scenario).
pub fn parse_fragment_lenient_with(fragment: &str, unpack: Option<Unpack>) -> Result<(Link, Vec<LinkError>), LinkError> {
    let (body, base) = match fragment.strip_prefix('#') {
        Some(b) => (b, 2),
        None => (fragment, 1),
    };
    let mut link = Link::default();
    if body.is_empty() {
        return Ok((link, Vec::new()));
    }
    if body.len() > MAX_LINK {
        return Err(LinkError {
            column: base + MAX_LINK,
            message: format!(
                "the link is {} characters long, more than the {MAX_LINK} accepted: share an exported file instead",
                body.len()
            ),
        });
    }
    let mut offset = 0;
    let mut faults = Vec::new();
    for part in body.split('&') {
        let column = base + body[..offset].chars().count();
        offset += part.len() + 1;
        if let Err(e) = read_part(&mut link, part, column, unpack) {
            faults.push(e);
        }
    }
    if link.preset.is_some() && link.scenario.is_some() {
        return Err(LinkError { column: base, message: "a link names a preset or carries a scenario, not both".into() });
    }
    Ok((link, faults))
}

/// One `key=value` (or flag) of a fragment, read into `link`.
fn read_part(link: &mut Link, part: &str, column: usize, unpack: Option<Unpack>) -> Result<(), LinkError> {
    let err = |col: usize, message: String| Err(LinkError { column: col, message });
    match part {
        "bench" => {
            link.bench = true;
            return Ok(());
        }
        "embed" => {
            link.embed = true;
            return Ok(());
        }
        _ => {}
    }
    let Some((key, value)) = part.split_once('=') else {
        return err(column, format!("expected key=value, found {part:?}"));
    };
    let vcol = column + key.chars().count() + 1;
    let packed = |value: &str| match unpack {
        Some(unpack) => unpack(value).map(Some).map_err(|(i, m)| LinkError { column: vcol + i, message: format!("{key}: {m}") }),
        None => Ok(None),
    };
    match key {
        "bench" => match value.parse::<u64>() {
            Ok(n @ 4..=MAX_BENCH_MESSAGES) => {
                link.bench = true;
                link.bench_messages = Some(n);
            }
            _ => return err(vcol, format!("bench: expected a message count from 4 to {MAX_BENCH_MESSAGES}, found {value:?}")),
        },
        "preset" => match entry(value).or_else(|| entry(&format!("{value}.json"))) {
            Some(Entry { file, .. }) => link.preset = Some(file),
            None => {
                let hint = super::presets::nearest(value).map(|n| format!("; did you mean {n:?}?")).unwrap_or_default();
                return err(vcol, format!("unknown preset {value:?}{hint}"));
            }
        },
        "scenario" => match packed(value)? {
            Some(v @ Value::Object(_)) => link.scenario = Some(v),
            Some(_) => return err(vcol, "scenario: expected a scenario object".into()),
            None => {}
        },
        "edits" => match packed(value)? {
            Some(Value::Array(items)) if items.iter().all(Value::is_object) => link.edits = Some(items),
            Some(_) => return err(vcol, "edits: expected an array of timeline entries".into()),
            None => {}
        },
        "seed" => match value.parse::<u64>() {
            Ok(s) => link.seed = Some(s),
            _ => return err(vcol, format!("seed must be a whole number, found {value:?}")),
        },
        "t" => match value.parse::<u64>() {
            Ok(t) if t <= MAX_TIME => link.time = Some(t),
            _ => return err(vcol, format!("t must be a whole number of milliseconds up to {MAX_TIME}, found {value:?}")),
        },
        "event" => match value.parse::<u64>() {
            Ok(n) => link.event = Some(n),
            _ => return err(vcol, format!("event must be a whole number (an event of the run), found {value:?}")),
        },
        "speed" => match mqviz_engine::decimal::parse(value) {
            Some(s) if s.is_finite() && (0.01..=100.0).contains(&s) => link.speed = Some(s),
            _ => return err(vcol, format!("speed must be a number from 0.01 to 100, found {value:?}")),
        },
        "origin" => {
            // A list that cannot be read allows nobody, not everybody.
            link.origins = Some(Vec::new());
            let mut list = Vec::new();
            let mut at = vcol;
            for o in value.split(',') {
                if !is_origin(o) {
                    return err(at, format!("origin: expected scheme://host[:port] with no path, found {o:?}"));
                }
                list.push(o.to_string());
                at += o.chars().count() + 1;
            }
            link.origins = Some(list);
        }
        "panel" => {
            if value.is_empty() || value.len() > 40 || !value.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                return err(vcol, format!("panel must be a short name, found {value:?}"));
            }
            link.panel = Some(value.to_string());
        }
        other => {
            return err(
                column,
                format!(
                "unknown key {other:?} (expected preset, scenario, seed, edits, t, event, speed, panel, origin, embed or bench)"
            ),
            )
        }
    }
    Ok(())
}

/// A web origin as `MessageEvent.origin` gives it: `http` or `https`, a host of letters, digits,
/// dots and dashes, an optional port, nothing after.
fn is_origin(s: &str) -> bool {
    let Some(rest) = s.strip_prefix("https://").or_else(|| s.strip_prefix("http://")) else { return false };
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (rest, None),
    };
    !host.is_empty()
        && host.len() <= 253
        && host.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.chars().all(|c| c.is_ascii_digit()))
}

/// How packed fields are written: `pack`.
pub type Pack = fn(&Value) -> String;

/// Whether writing `link` packs a field (its scenario or edits), which takes `pack`.
pub fn needs_pack(link: &Link) -> bool {
    link.scenario.is_some() || link.edits.as_ref().is_some_and(|e| !e.is_empty())
}

/// Writes a link fragment (with the leading `#`). Keys in a fixed order, so equal runs give equal
/// links. `Err` when it would be longer than `MAX_LINK`.
pub fn write_fragment(link: &Link) -> Result<String, String> {
    write_fragment_with(link, Some(pack))
}

/// `write_fragment`, packing with `pack`; without it a link that `needs_pack` is an error (the
/// page fetches the packer first).
pub fn write_fragment_with(link: &Link, pack: Option<Pack>) -> Result<String, String> {
    let pack = match pack {
        Some(pack) => pack,
        None if needs_pack(link) => return Err("the link writer has not been fetched yet".into()),
        None => |_: &Value| String::new(),
    };
    let mut parts: Vec<String> = Vec::new();
    if link.embed {
        parts.push("embed".into());
    }
    if let Some(p) = link.preset {
        parts.push(format!("preset={}", p.trim_end_matches(".json")));
    }
    if let Some(s) = &link.scenario {
        parts.push(format!("scenario={}", pack(s)));
    }
    if let Some(seed) = link.seed {
        parts.push(format!("seed={seed}"));
    }
    if let Some(e) = link.edits.as_ref().filter(|e| !e.is_empty()) {
        parts.push(format!("edits={}", pack(&Value::Array(e.clone()))));
    }
    if let Some(t) = link.time {
        parts.push(format!("t={t}"));
    }
    if let Some(n) = link.event {
        parts.push(format!("event={n}"));
    }
    if let Some(s) = link.speed {
        parts.push(format!("speed={}", mqviz_engine::decimal::trimmed(s, 3)));
    }
    if let Some(p) = &link.panel {
        parts.push(format!("panel={p}"));
    }
    if let Some(o) = link.origins.as_ref().filter(|o| !o.is_empty()) {
        parts.push(format!("origin={}", o.join(",")));
    }
    let body = parts.join("&");
    if body.len() > MAX_LINK {
        return Err(format!(
            "this run needs a {}-character link, more than the {MAX_LINK} a link may carry: use Export to save it as a file",
            body.len()
        ));
    }
    Ok(format!("#{body}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_mistyped_preset_names_the_nearest_one() {
        let (_, faults) = parse_fragment_lenient_with("#embed&preset=kafka-eager-joins", None).unwrap();
        assert_eq!(faults.len(), 1);
        assert_eq!(faults[0].message, "unknown preset \"kafka-eager-joins\"; did you mean \"kafka-eager-join\"?");
        let (_, faults) = parse_fragment_lenient_with("#preset=nothing-like-it", None).unwrap();
        assert_eq!(faults[0].message, "unknown preset \"nothing-like-it\"");
    }

    #[test]
    fn a_bad_field_is_a_fault_and_the_other_fields_still_open() {
        let (l, faults) = parse_fragment_lenient_with("#preset=kafka-eager-join&t=-5&speed=2", Some(unpack)).unwrap();
        assert_eq!(l.preset, Some("kafka-eager-join.json"));
        assert_eq!(l.speed, Some(2.0));
        assert_eq!(l.time, None);
        assert_eq!(faults.len(), 1);
        assert_eq!(faults[0].column, 28, "{}", faults[0]);
        assert!(faults[0].message.starts_with("t must be"), "{}", faults[0]);
        let (l, faults) = parse_fragment_lenient_with("#t=12000&foo=bar", Some(unpack)).unwrap();
        assert_eq!(l.time, Some(12_000));
        assert_eq!(faults.len(), 1);
        assert!(faults[0].message.contains("unknown key \"foo\""), "{}", faults[0]);
        // An embed with a bad preset is still an embed, which shows the fault in its frame.
        let (l, faults) = parse_fragment_lenient_with("#embed&preset=no-such-thing", None).unwrap();
        assert!(l.embed);
        assert_eq!(faults.len(), 1);
        // The strict reader still refuses the link at its first fault.
        assert_eq!(parse_fragment("#preset=kafka-eager-join&t=-5").unwrap_err().column, 28);
    }

    #[test]
    fn an_embed_names_the_pages_it_answers() {
        let l = parse_fragment("#embed&preset=consistent-group&origin=https://docs.example.org,http://localhost:3000").unwrap();
        assert_eq!(l.origins, Some(vec!["https://docs.example.org".to_string(), "http://localhost:3000".to_string()]));
        assert_eq!(parse_fragment(&write_fragment_with(&l, None).unwrap()).unwrap(), l);
        for bad in ["ftp://x.org", "https://x.org/docs", "https://", "https://x.org:", "https://x.org:80a", "*"] {
            let e = parse_fragment(&format!("#embed&origin={bad}")).unwrap_err();
            assert_eq!(e.column, 15, "{bad}: {e}");
        }
        // The column of the bad origin in a list.
        assert_eq!(parse_fragment("#origin=https://a.org,nope").unwrap_err().column, 23);
    }

    #[test]
    fn parses_preset_time_and_speed() {
        let l = parse_fragment("#preset=consistent-group&t=60000&speed=10").unwrap();
        assert_eq!(l.preset, Some("consistent-group.json"));
        assert_eq!(l.time, Some(60_000));
        assert_eq!(l.speed, Some(10.0));
        assert_eq!(parse_fragment("").unwrap().preset, None);
        assert!(parse_fragment("#bench").unwrap().bench);
        assert_eq!(parse_fragment("#bench=1000000").unwrap().bench_messages, Some(1_000_000));
        assert_eq!(parse_fragment("#bench=lots").unwrap_err().column, 8);
        assert!(parse_fragment("#embed&preset=consistent-group").unwrap().embed);
    }

    #[test]
    fn a_whole_run_round_trips() {
        let link = Link {
            preset: Some("consistent-group.json"),
            seed: Some(42),
            edits: Some(vec![json!({"at": 12_000, "action": "crashConsumer", "clientId": "ConsumerA"})]),
            time: Some(30_000),
            event: Some(1_234),
            speed: Some(2.5),
            panel: Some("filters".into()),
            ..Link::default()
        };
        let text = write_fragment(&link).unwrap();
        assert!(text.contains("&t=30000&event=1234&"), "{text}");
        assert_eq!(parse_fragment(&text).unwrap(), link);
        let custom = Link { scenario: Some(json!({"format": "mqviz-scenario/1", "until": 5})), ..Link::default() };
        assert_eq!(parse_fragment(&write_fragment(&custom).unwrap()).unwrap(), custom);
    }

    #[test]
    fn base64url_round_trips_every_length() {
        for n in 0..64usize {
            let data: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            assert_eq!(b64_decode(&b64_encode(&data)).unwrap(), data, "length {n}");
        }
    }

    #[test]
    fn errors_carry_columns() {
        let e = parse_fragment("#preset=nope").unwrap_err();
        assert_eq!(e.column, 9);
        let e = parse_fragment("#t=5&speed=fast").unwrap_err();
        assert_eq!(e.column, 12, "{e}");
        let e = parse_fragment("#t=5&colour=red").unwrap_err();
        assert_eq!(e.column, 6);
        let e = parse_fragment("#justtext").unwrap_err();
        assert_eq!(e.column, 2);
        let e = parse_fragment("#edits=ab$cd").unwrap_err();
        assert_eq!(e.column, 10, "{e}");
        for junk in
            ["#=", "#&&&", "#t=-1", "#speed=NaN", "#t=99999999999999999999", "#preset=%00", "#é=ü&", "#seed=x", "#panel=<b>"]
        {
            assert!(parse_fragment(junk).is_err(), "{junk}");
        }
    }

    /// The page's first look (no `unpack`) reads the flags and the plain fields and skips the
    /// packed ones; the full parse reads them, and only it reports their errors.
    #[test]
    fn a_first_look_skips_the_packed_fields() {
        let edits = pack(&json!([{"at": 1, "action": "startConsumer", "clientId": "C"}]));
        let f = format!("#embed&scenario={}&edits={edits}&t=5", pack(&json!({"name": "x"})));
        assert!(has_packed(&f) && !has_packed("#embed&preset=consistent-group&t=5"));
        let first = parse_fragment_with(&f, None).unwrap();
        assert!(first.embed && first.scenario.is_none() && first.edits.is_none());
        assert_eq!(first.time, Some(5));
        let full = parse_fragment(&f).unwrap();
        assert_eq!(full.edits.as_ref().map(Vec::len), Some(1));
        assert_eq!(Link { scenario: None, edits: None, ..full }, first);
        let bad = "#embed&edits=%%%";
        assert!(parse_fragment_with(bad, None).is_ok_and(|l| l.embed));
        assert!(parse_fragment(bad).unwrap_err().message.starts_with("edits:"));
    }

    /// The page writes links without the packer until one has edits or its own scenario.
    #[test]
    fn only_packed_fields_take_the_packer() {
        let plain = Link { preset: Some("consistent-group.json"), edits: Some(Vec::new()), time: Some(5), ..Link::default() };
        assert!(!needs_pack(&plain));
        assert_eq!(write_fragment_with(&plain, None), write_fragment(&plain));
        let edited = Link { edits: Some(vec![json!({"at": 1, "action": "startConsumer", "clientId": "C"})]), ..plain.clone() };
        assert!(needs_pack(&edited));
        assert!(write_fragment_with(&edited, None).unwrap_err().contains("not been fetched"));
        assert_eq!(write_fragment_with(&edited, Some(pack)), write_fragment(&edited));
        let own = Link { scenario: Some(json!({"name": "x"})), ..Link::default() };
        assert!(needs_pack(&own) && write_fragment_with(&own, None).is_err());
    }

    #[test]
    fn hostile_fragments_are_refused_quickly() {
        let good = pack(&json!([{"at": 1, "action": "startConsumer", "clientId": "C"}]));
        // Truncated at every length: an error (or a shorter valid array), never a panic.
        for cut in 0..good.len() {
            let _ = parse_fragment(&format!("#edits={}", &good[..cut]));
        }
        // A decompression bomb: 12 MB of spaces deflates to about 12 KB.
        let bomb = b64_encode(&miniz_oxide::deflate::compress_to_vec(&vec![b' '; 12 << 20], 9));
        assert!(bomb.len() < MAX_LINK);
        let e = parse_fragment(&format!("#edits={bomb}")).unwrap_err();
        assert!(e.message.contains("inflates to more than"), "{e}");
        // Not compressed data, not JSON, not the right shape.
        assert!(parse_fragment(&format!("#edits={}", b64_encode(b"plain text"))).is_err());
        assert!(parse_fragment(&format!("#edits={}", pack(&json!({"a": 1})))).is_err());
        assert!(parse_fragment(&format!("#scenario={}", pack(&json!([1, 2])))).is_err());
        // Too long.
        let e = parse_fragment(&format!("#t=1&{}", "x".repeat(MAX_LINK))).unwrap_err();
        assert!(e.message.contains("export"), "{e}");
        let big = Link {
            edits: Some((0..20_000).map(|i| json!({"at": i, "action": "x", "n": i * 7919})).collect()),
            ..Link::default()
        };
        assert!(write_fragment(&big).unwrap_err().contains("Export"));
    }
}
