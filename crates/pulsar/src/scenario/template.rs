//! Key and body templates of send scripts: `{i}` is the message's index within its script and
//! `{i%N}` that index modulo N (so `k-{i%4}` cycles through four keys).

/// A template split once into literal text and placeholders, to render many messages fast.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Text(String),
    Index,
    Modulo(u32),
}

impl Template {
    pub fn new(template: &str) -> Template {
        let mut parts = Vec::new();
        let mut rest = template;
        let mut text = String::new();
        while let Some(open) = rest.find('{') {
            text.push_str(&rest[..open]);
            let after = &rest[open..];
            let placeholder = after.find('}').and_then(|close| {
                let inner = &after[1..close];
                let part = match inner {
                    "i" => Some(Part::Index),
                    _ => inner.strip_prefix("i%")?.parse().ok().filter(|&n| n > 0).map(Part::Modulo),
                };
                part.map(|p| (close, p))
            });
            match placeholder {
                Some((close, part)) => {
                    if !text.is_empty() {
                        parts.push(Part::Text(std::mem::take(&mut text)));
                    }
                    parts.push(part);
                    rest = &after[close + 1..];
                }
                None => {
                    text.push('{');
                    rest = &after[1..];
                }
            }
        }
        text.push_str(rest);
        if !text.is_empty() {
            parts.push(Part::Text(text));
        }
        Template { parts }
    }

    /// When the text repeats every `period` messages (only `{i%N}` placeholders, or none), the
    /// period; `None` when `{i}` makes every message's text different. Periods above `cap` count
    /// as none.
    pub fn period(&self, cap: u32) -> Option<u32> {
        let mut period: u64 = 1;
        for p in &self.parts {
            match p {
                Part::Index => return None,
                Part::Modulo(n) => {
                    let n = u64::from(*n);
                    period = period / gcd(period, n) * n;
                    if period > u64::from(cap) {
                        return None;
                    }
                }
                Part::Text(_) => {}
            }
        }
        Some(period as u32)
    }

    /// Appends the text for message `i` to `out`.
    pub fn render_into(&self, i: u32, out: &mut String) {
        use std::fmt::Write as _;
        for p in &self.parts {
            match p {
                Part::Text(t) => out.push_str(t),
                Part::Index => {
                    let _ = write!(out, "{i}");
                }
                Part::Modulo(n) => {
                    let _ = write!(out, "{}", i % n);
                }
            }
        }
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Expands `{i}` and `{i%N}` in `template` for message `i`. Anything else is copied as is.
pub fn expand(template: &str, i: u32) -> String {
    if !template.contains('{') {
        return template.to_string();
    }
    let mut out = String::with_capacity(template.len() + 8);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open..];
        match after.find('}').and_then(|close| placeholder(&after[1..close], i).map(|v| (close, v))) {
            Some((close, value)) => {
                out.push_str(&value);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn placeholder(inner: &str, i: u32) -> Option<String> {
    if inner == "i" {
        return Some(i.to_string());
    }
    let modulus: u32 = inner.strip_prefix("i%")?.parse().ok().filter(|&n| n > 0)?;
    Some((i % modulus).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders() {
        assert_eq!(expand("k-{i}", 12), "k-12");
        assert_eq!(expand("k-{i%5}/{i}", 12), "k-2/12");
        assert_eq!(expand("{x} {i%0} {", 3), "{x} {i%0} {");
        assert_eq!(expand("plain", 3), "plain");
        assert_eq!(Template::new("k-{i%4}-{i%6}").period(100), Some(12));
        assert_eq!(Template::new("k-{i%4}-{i}").period(100), None);
        assert_eq!(Template::new("fixed").period(100), Some(1));
        assert_eq!(Template::new("{i%1000}").period(100), None);
        for t in ["k-{i}", "k-{i%5}/{i}", "{x} {i%0} {", "plain", "", "{i}{i%2}"] {
            for i in [0, 7, 12] {
                let mut out = String::new();
                Template::new(t).render_into(i, &mut out);
                assert_eq!(out, expand(t, i), "{t}");
            }
        }
    }
}
