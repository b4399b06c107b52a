//! `subscribe(Pattern)`: a regular expression matched against whole topic names
//! (`pattern.matcher(topic).matches()`).
//!
//! A small engine of its own rather than a regex crate: topic patterns use a small part of
//! `java.util.regex` (literals, `.`, classes, `\d \w \s`, groups, alternation, `* + ? {m,n}`,
//! lazy quantifiers), and a general crate would bring Unicode tables hundreds of kilobytes large
//! into the browser build. Patterns compile to a Thompson NFA run as a Pike VM, so matching is
//! linear in the topic name whatever the pattern (no catastrophic backtracking). Java-only
//! constructs (look-around, back-references, possessive quantifiers) are refused when the scenario
//! is read, with the position.

/// Longest pattern accepted (characters), and most NFA instructions after expanding `{m,n}`.
const MAX_SOURCE: usize = 1_000;
const MAX_PROGRAM: usize = 20_000;

#[derive(Clone, Debug, PartialEq)]
enum Set {
    /// Ranges of characters, negated or not.
    Ranges { ranges: Vec<(char, char)>, negated: bool },
}

impl Set {
    fn contains(&self, c: char) -> bool {
        let Set::Ranges { ranges, negated } = self;
        ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != *negated
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Node {
    Empty,
    Char(char),
    Any,
    Set(Set),
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat { node: Box<Node>, min: u32, max: Option<u32> },
}

struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    _src: &'a str,
}

type Res<T> = Result<T, String>;

fn digit_set() -> Vec<(char, char)> {
    vec![('0', '9')]
}
fn word_set() -> Vec<(char, char)> {
    vec![('a', 'z'), ('A', 'Z'), ('0', '9'), ('_', '_')]
}
fn space_set() -> Vec<(char, char)> {
    vec![(' ', ' '), ('\t', '\r')]
}

impl Parser<'_> {
    fn err<T>(&self, what: &str) -> Res<T> {
        Err(format!("{what} at position {}", self.pos))
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn alternation(&mut self, depth: u32) -> Res<Node> {
        if depth > 50 {
            return self.err("groups nested too deep");
        }
        let mut alts = vec![self.concat(depth)?];
        while self.eat('|') {
            alts.push(self.concat(depth)?);
        }
        Ok(if alts.len() == 1 { alts.pop().unwrap_or(Node::Empty) } else { Node::Alt(alts) })
    }

    fn concat(&mut self, depth: u32) -> Res<Node> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom(depth)?;
            items.push(self.quantified(atom)?);
        }
        Ok(match items.len() {
            0 => Node::Empty,
            1 => items.pop().unwrap_or(Node::Empty),
            _ => Node::Concat(items),
        })
    }

    fn number(&mut self) -> Option<u32> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        (self.pos > start).then(|| self.chars[start..self.pos].iter().collect::<String>().parse().unwrap_or(u32::MAX))
    }

    fn quantified(&mut self, atom: Node) -> Res<Node> {
        let (min, max) = match self.peek() {
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('?') => (0, Some(1)),
            Some('{') => {
                let save = self.pos;
                self.pos += 1;
                let Some(min) = self.number() else {
                    // Java treats a `{` that does not start a quantifier as an error.
                    self.pos = save;
                    return self.err("a `{` must start a quantifier {m}, {m,} or {m,n}");
                };
                let max = if self.eat(',') { self.number() } else { Some(min) };
                if !self.eat('}') {
                    return self.err("unclosed quantifier");
                }
                if max.is_some_and(|m| m < min) || min > 1_000 || max.is_some_and(|m| m > 1_000) {
                    return self.err("bad quantifier bounds");
                }
                self.pos -= 1;
                (min, max)
            }
            _ => return Ok(atom),
        };
        self.pos += 1;
        // Lazy `?` changes which match Java reports, not whether the whole name matches.
        self.eat('?');
        if self.peek() == Some('+') {
            return self.err("possessive quantifiers are not supported");
        }
        if matches!(self.peek(), Some('*') | Some('+') | Some('{')) {
            return self.err("dangling quantifier");
        }
        Ok(Node::Repeat { node: Box::new(atom), min, max })
    }

    fn escape(&mut self, in_class: bool) -> Res<Vec<(char, char)>> {
        let Some(c) = self.peek() else { return self.err("a trailing backslash") };
        self.pos += 1;
        Ok(match c {
            'd' => digit_set(),
            'w' => word_set(),
            's' => space_set(),
            't' => vec![('\t', '\t')],
            'n' => vec![('\n', '\n')],
            'D' | 'W' | 'S' if in_class => return self.err("negated shorthand inside a class is not supported"),
            c if c.is_ascii_digit() => return self.err("back-references are not supported"),
            c if c.is_ascii_alphabetic() => return self.err(&format!("unsupported escape \\{c}")),
            c => vec![(c, c)],
        })
    }

    fn class(&mut self) -> Res<Node> {
        let negated = self.eat('^');
        let mut ranges = Vec::new();
        let mut first = true;
        loop {
            let Some(c) = self.peek() else { return self.err("unclosed character class") };
            if c == ']' && !first {
                self.pos += 1;
                break;
            }
            first = false;
            if c == '[' {
                return self.err("nested classes are not supported");
            }
            self.pos += 1;
            let lo = if c == '\\' {
                let set = self.escape(true)?;
                if set.len() != 1 || set[0].0 != set[0].1 {
                    ranges.extend(set);
                    continue;
                }
                set[0].0
            } else {
                c
            };
            if self.peek() == Some('-') && self.chars.get(self.pos + 1).is_some_and(|&n| n != ']') {
                self.pos += 1;
                let Some(mut hi) = self.peek() else { return self.err("unclosed character class") };
                self.pos += 1;
                if hi == '\\' {
                    let set = self.escape(true)?;
                    hi = set[0].0;
                }
                if hi < lo {
                    return self.err("illegal character range");
                }
                ranges.push((lo, hi));
            } else {
                ranges.push((lo, lo));
            }
        }
        Ok(Node::Set(Set::Ranges { ranges, negated }))
    }

    fn atom(&mut self, depth: u32) -> Res<Node> {
        let Some(c) = self.peek() else { return self.err("unexpected end") };
        self.pos += 1;
        match c {
            '.' => Ok(Node::Any),
            '[' => self.class(),
            '(' => {
                if self.eat('?') && !self.eat(':') {
                    return self.err("look-around and inline flags are not supported");
                }
                let inner = self.alternation(depth + 1)?;
                if !self.eat(')') {
                    return self.err("unclosed group");
                }
                Ok(inner)
            }
            '*' | '+' | '?' | '{' => self.err("nothing to repeat"),
            '^' | '$' => Ok(Node::Empty), // whole-name matching makes anchors redundant
            '\\' => {
                let negate = matches!(self.peek(), Some('D') | Some('W') | Some('S'));
                if negate {
                    let k = self.peek();
                    self.pos += 1;
                    let ranges = match k {
                        Some('D') => digit_set(),
                        Some('W') => word_set(),
                        _ => space_set(),
                    };
                    return Ok(Node::Set(Set::Ranges { ranges, negated: true }));
                }
                let set = self.escape(false)?;
                Ok(if set.len() == 1 && set[0].0 == set[0].1 {
                    Node::Char(set[0].0)
                } else {
                    Node::Set(Set::Ranges { ranges: set, negated: false })
                })
            }
            c => Ok(Node::Char(c)),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Inst {
    Char(char),
    Any,
    Set(Set),
    Split(usize, usize),
    Jmp(usize),
    Match,
}

fn emit(node: &Node, prog: &mut Vec<Inst>) -> Res<()> {
    if prog.len() > MAX_PROGRAM {
        return Err("pattern too large once its repetitions are expanded".into());
    }
    match node {
        Node::Empty => {}
        Node::Char(c) => prog.push(Inst::Char(*c)),
        Node::Any => prog.push(Inst::Any),
        Node::Set(s) => prog.push(Inst::Set(s.clone())),
        Node::Concat(items) => {
            for i in items {
                emit(i, prog)?;
            }
        }
        Node::Alt(alts) => {
            // split L1, next; L1: a; jmp end; next: split ... ; last alternative
            let mut jumps = Vec::new();
            for (k, a) in alts.iter().enumerate() {
                if k + 1 < alts.len() {
                    let split = prog.len();
                    prog.push(Inst::Split(split + 1, 0));
                    emit(a, prog)?;
                    jumps.push(prog.len());
                    prog.push(Inst::Jmp(0));
                    let next = prog.len();
                    prog[split] = Inst::Split(split + 1, next);
                } else {
                    emit(a, prog)?;
                }
            }
            let end = prog.len();
            for j in jumps {
                prog[j] = Inst::Jmp(end);
            }
        }
        Node::Repeat { node, min, max } => {
            for _ in 0..*min {
                emit(node, prog)?;
            }
            match max {
                None => {
                    // loop: split body, out; body; jmp loop
                    let split = prog.len();
                    prog.push(Inst::Split(split + 1, 0));
                    emit(node, prog)?;
                    prog.push(Inst::Jmp(split));
                    let out = prog.len();
                    prog[split] = Inst::Split(split + 1, out);
                }
                Some(max) => {
                    let mut splits = Vec::new();
                    for _ in *min..*max {
                        splits.push(prog.len());
                        prog.push(Inst::Split(prog.len() + 1, 0));
                        emit(node, prog)?;
                    }
                    let out = prog.len();
                    for s in splits {
                        prog[s] = Inst::Split(s + 1, out);
                    }
                }
            }
        }
    }
    Ok(())
}

/// A compiled topic pattern.
#[derive(Clone, Debug)]
pub struct TopicPattern {
    source: String,
    prog: Vec<Inst>,
}

impl TopicPattern {
    pub fn compile(source: &str) -> Result<TopicPattern, String> {
        if source.chars().count() > MAX_SOURCE {
            return Err(format!("pattern is longer than {MAX_SOURCE} characters"));
        }
        let mut p = Parser { chars: source.chars().collect(), pos: 0, _src: source };
        let node = p.alternation(0).map_err(|e| format!("invalid pattern {source:?}: {e}"))?;
        if p.pos < p.chars.len() {
            return Err(format!("invalid pattern {source:?}: unmatched `)` at position {}", p.pos));
        }
        let mut prog = Vec::new();
        emit(&node, &mut prog).map_err(|e| format!("invalid pattern {source:?}: {e}"))?;
        prog.push(Inst::Match);
        Ok(TopicPattern { source: source.to_string(), prog })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// Adds `pc` and everything reachable from it without consuming a character.
    fn add(&self, list: &mut Vec<usize>, seen: &mut [bool], pc: usize) {
        let mut stack = vec![pc];
        while let Some(pc) = stack.pop() {
            if seen[pc] {
                continue;
            }
            seen[pc] = true;
            match &self.prog[pc] {
                Inst::Jmp(t) => stack.push(*t),
                Inst::Split(a, b) => {
                    stack.push(*b);
                    stack.push(*a);
                }
                _ => list.push(pc),
            }
        }
    }

    /// Whether the whole topic name matches (a Pike VM: linear in the name's length).
    pub fn matches(&self, topic: &str) -> bool {
        let n = self.prog.len();
        let mut current = Vec::new();
        let mut seen = vec![false; n];
        self.add(&mut current, &mut seen, 0);
        for c in topic.chars() {
            let mut next = Vec::new();
            let mut seen = vec![false; n];
            for &pc in &current {
                let ok = match &self.prog[pc] {
                    Inst::Char(x) => *x == c,
                    Inst::Any => c != '\n',
                    Inst::Set(s) => s.contains(c),
                    _ => false,
                };
                if ok {
                    self.add(&mut next, &mut seen, pc + 1);
                }
            }
            if next.is_empty() {
                return false;
            }
            current = next;
        }
        current.iter().any(|&pc| self.prog[pc] == Inst::Match)
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

    fn m(p: &str, t: &str) -> bool {
        TopicPattern::compile(p).unwrap_or_else(|e| panic!("{e}")).matches(t)
    }

    #[test]
    fn matches_whole_names_only() {
        assert!(m("orders-.*", "orders-eu"));
        assert!(!m("orders-.*", "old-orders-eu"));
        assert!(m("a|b", "a") && m("a|b", "b") && !m("a|b", "ab"));
        assert!(TopicPattern::compile("(").is_err());
        assert!(TopicPattern::compile("(?=x)").is_err(), "look-around is Java-only");
    }

    #[test]
    fn the_syntax_topic_patterns_use() {
        assert!(m("topic[0-9]+", "topic42") && !m("topic[0-9]+", "topic"));
        assert!(m("t\\d{2}", "t07") && !m("t\\d{2}", "t7") && !m("t\\d{2}", "t007"));
        assert!(m("t\\d{1,3}", "t7") && m("t\\d{1,3}", "t777") && !m("t\\d{1,3}", "t7777"));
        assert!(m("t\\d{2,}", "t12345") && !m("t\\d{2,}", "t1"));
        assert!(m("(orders|payments)\\..*", "payments.eu") && !m("(orders|payments)\\..*", "paymentsXeu"));
        assert!(m("[^_].*", "x_y") && !m("[^_].*", "_x"));
        assert!(m("\\w+-\\w+", "a_1-b2") && !m("\\w+-\\w+", "a b-c"));
        assert!(m("colou?r", "color") && m("colou?r", "colour"));
        assert!(m("(?:ab)*c", "ababc") && !m("(?:ab)*c", "abac"));
        assert!(m("a.*?b", "axxb"));
        assert!(m("^logs$", "logs"));
        assert!(m("[a\\-z]+", "a-z") && !m("[a\\-z]+", "b"));
        assert!(m("", ""));
    }

    #[test]
    fn java_only_and_broken_patterns_are_refused_with_a_position() {
        for bad in ["(?<=a)b", "(a)\\1", "a++", "a**", "*a", "a{2,1}", "[z-a]", "[abc", "a)", "a{", "\\p{L}"] {
            let e = TopicPattern::compile(bad).unwrap_err();
            assert!(e.contains("position") || e.contains("unmatched"), "{bad}: {e}");
        }
        assert!(TopicPattern::compile(&"a".repeat(1001)).is_err());
        assert!(TopicPattern::compile("(a{1000}){1000}").is_err(), "expansion is bounded");
    }

    #[test]
    fn matching_stays_linear() {
        // The classic catastrophic-backtracking pattern: instant here.
        let p = TopicPattern::compile("(a+)+b").unwrap();
        assert!(!p.matches(&"a".repeat(5_000)));
    }
}
