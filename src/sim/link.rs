//! Shareable links: the URL fragment `#preset=<file>&t=<ms>&speed=<x>` names a preset, a
//! simulated time to run to and a playback speed. Parsing is pure so the UI and tests share it;
//! a bad fragment gives an error with the column where it goes wrong, never a panic.

use std::fmt;

use super::presets::{by_file, Preset};

#[derive(Debug, PartialEq)]
pub struct Link {
    pub preset: Option<&'static str>,
    pub time: Option<u64>,
    pub speed: Option<f64>,
    /// `#bench`: the generated many-messages scenario.
    pub bench: bool,
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

const MAX_TIME: u64 = 10_000_000_000;

/// Parses `location.hash` (with or without the leading `#`). Empty means "no link".
pub fn parse_fragment(fragment: &str) -> Result<Link, LinkError> {
    let (body, base) = match fragment.strip_prefix('#') {
        Some(b) => (b, 2),
        None => (fragment, 1),
    };
    let mut link = Link { preset: None, time: None, speed: None, bench: false };
    if body.is_empty() {
        return Ok(link);
    }
    if body == "bench" {
        link.bench = true;
        return Ok(link);
    }
    let mut offset = 0;
    for part in body.split('&') {
        let column = base + body[..offset].chars().count();
        offset += part.len() + 1;
        let err = |col: usize, message: String| Err(LinkError { column: col, message });
        let Some((key, value)) = part.split_once('=') else {
            return err(column, format!("expected key=value, found {part:?}"));
        };
        let vcol = column + key.chars().count() + 1;
        match key {
            "preset" => match by_file(value).or_else(|| by_file(&format!("{value}.json"))) {
                Some(Preset { file, .. }) => link.preset = Some(file),
                None => return err(vcol, format!("unknown preset {value:?}")),
            },
            "t" => match value.parse::<u64>() {
                Ok(t) if t <= MAX_TIME => link.time = Some(t),
                _ => return err(vcol, format!("t must be a whole number of milliseconds up to {MAX_TIME}, found {value:?}")),
            },
            "speed" => match value.parse::<f64>() {
                Ok(s) if s.is_finite() && (0.01..=100.0).contains(&s) => link.speed = Some(s),
                _ => return err(vcol, format!("speed must be a number from 0.01 to 100, found {value:?}")),
            },
            other => return err(column, format!("unknown key {other:?} (expected preset, t or speed)")),
        }
    }
    Ok(link)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_preset_time_and_speed() {
        let l = parse_fragment("#preset=consistent-group&t=60000&speed=10").unwrap();
        assert_eq!(l.preset, Some("consistent-group.json"));
        assert_eq!(l.time, Some(60_000));
        assert_eq!(l.speed, Some(10.0));
        assert_eq!(parse_fragment("").unwrap().preset, None);
        assert!(parse_fragment("#bench").unwrap().bench);
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
        for junk in ["#=", "#&&&", "#t=-1", "#speed=NaN", "#t=99999999999999999999", "#preset=%00", "#é=ü&"] {
            assert!(parse_fragment(junk).is_err(), "{junk}");
        }
    }
}
