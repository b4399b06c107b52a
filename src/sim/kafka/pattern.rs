//! `subscribe(Pattern)`: a regular expression matched against whole topic names
//! (`pattern.matcher(topic).matches()`). The `regex` crate stands in for `java.util.regex`; the two
//! agree on the syntax topic patterns use (literals, classes, `.`, quantifiers, alternation), and
//! Java-only constructs (look-around, back-references) are refused when the scenario is read.

use regex::{Regex, RegexBuilder};

/// A compiled topic pattern.
#[derive(Clone, Debug)]
pub struct TopicPattern {
    source: String,
    regex: Regex,
}

impl TopicPattern {
    pub fn compile(source: &str) -> Result<TopicPattern, String> {
        if source.len() > 1_000 {
            return Err("pattern is longer than 1000 characters".into());
        }
        let regex = RegexBuilder::new(&format!("^(?:{source})$"))
            .size_limit(1 << 20)
            .nest_limit(50)
            .build()
            .map_err(|e| format!("invalid pattern {source:?}: {}", e.to_string().lines().last().unwrap_or("syntax error")))?;
        Ok(TopicPattern { source: source.to_string(), regex })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether the whole topic name matches.
    pub fn matches(&self, topic: &str) -> bool {
        self.regex.is_match(topic)
    }
}

impl PartialEq for TopicPattern {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_whole_names_only() {
        let p = TopicPattern::compile("orders-.*").unwrap();
        assert!(p.matches("orders-eu"));
        assert!(!p.matches("old-orders-eu"));
        let alt = TopicPattern::compile("a|b").unwrap();
        assert!(alt.matches("a") && alt.matches("b") && !alt.matches("ab"));
        assert!(TopicPattern::compile("(").is_err());
        assert!(TopicPattern::compile("(?=x)").is_err(), "look-around is Java-only");
    }
}
