//! Key and body templates of send scripts: `{i}` is the message's index within its script and
//! `{i%N}` that index modulo N (so `k-{i%4}` cycles through four keys).

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
    }
}
