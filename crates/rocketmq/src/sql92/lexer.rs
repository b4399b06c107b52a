//! The token manager of RocketMQ's `SelectorParser.jj` (a JavaCC grammar), re-implemented.
//!
//! JavaCC semantics reproduced here:
//! - Longest match wins; on equal length the earlier definition wins (keywords before `ID`).
//! - Tokens are produced on demand, so a lexical error only matters once the parser asks for the
//!   token (`a = '1' ; x` fails on `;`, but text after an accepted prefix is never looked at
//!   beyond the next token).
//! - Skipped: space, tab, LF, CR, form feed; `/* ... */`; `--` comments, which need a line end:
//!   at end of input without one, `--` is not a comment and lexes as `-`.
//! - Keywords are case-insensitive (ASCII). In 4.9.x, `CONTAINS`, `STARTSWITH` and `ENDSWITH`
//!   are plain identifiers.
//! - `DECIMAL: "0" | [1-9][0-9]* [lL]?`; `FLOAT: [0-9]+ "." [0-9]* EXP? | "." [0-9]+ EXP? |
//!   [0-9]+ EXP` with `EXP: [eE] [+-]? [0-9]+`; `STRING: "'" ("''" | ~"'")* "'"`;
//!   `ID: [A-Za-z_$] [A-Za-z0-9_$]*`; operators `= <> > >= < <= ( , ) + -`.

use super::{CompileError, Sql92Version};

/// Token kinds (the JavaCC token set of the 5.x grammar).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Eof,
    Not,
    And,
    Or,
    Between,
    In,
    True,
    False,
    Null,
    Is,
    Contains,
    StartsWith,
    EndsWith,
    Decimal,
    Float,
    Str,
    Id,
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
    LParen,
    Comma,
    RParen,
    Plus,
    Minus,
}

/// One token: kind, character offset of its first character, and its text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Token<'s> {
    pub kind: Kind,
    pub pos: usize,
    pub text: &'s str,
}

impl Token<'_> {
    /// How the token reads in an error message.
    pub fn describe(&self) -> String {
        match self.kind {
            Kind::Eof => "end of input".to_string(),
            Kind::Str => format!("string literal {}", self.text),
            Kind::Decimal | Kind::Float => format!("number {}", self.text),
            Kind::Id => format!("identifier {}", self.text),
            Kind::Not
            | Kind::And
            | Kind::Or
            | Kind::Between
            | Kind::In
            | Kind::True
            | Kind::False
            | Kind::Null
            | Kind::Is
            | Kind::Contains
            | Kind::StartsWith
            | Kind::EndsWith => format!("keyword {}", self.text.to_ascii_uppercase()),
            _ => format!("'{}'", self.text),
        }
    }
}

const KEYWORDS: [(&str, Kind); 12] = [
    ("NOT", Kind::Not),
    ("AND", Kind::And),
    ("OR", Kind::Or),
    ("BETWEEN", Kind::Between),
    ("IN", Kind::In),
    ("TRUE", Kind::True),
    ("FALSE", Kind::False),
    ("NULL", Kind::Null),
    ("IS", Kind::Is),
    ("CONTAINS", Kind::Contains),
    ("STARTSWITH", Kind::StartsWith),
    ("ENDSWITH", Kind::EndsWith),
];

pub(crate) struct Lexer<'s> {
    src: &'s str,
    /// Byte offset of the next unread character.
    byte: usize,
    /// Character offset of the next unread character.
    chr: usize,
    version: Sql92Version,
    /// Byte offset of the last CR or LF, if any: a `--` comment needs a line end after it, and
    /// knowing the last one keeps `-- -- -- ...` without line ends linear.
    last_line_end: Option<usize>,
}

fn is_id_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$'
}

fn is_id_part(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

impl<'s> Lexer<'s> {
    pub fn new(src: &'s str, version: Sql92Version) -> Self {
        let last_line_end = src.bytes().rposition(|b| b == b'\n' || b == b'\r');
        Lexer { src, byte: 0, chr: 0, version, last_line_end }
    }

    fn bytes(&self) -> &'s [u8] {
        self.src.as_bytes()
    }

    fn at(&self, byte: usize) -> Option<u8> {
        self.bytes().get(byte).copied()
    }

    /// Moves to `byte` (a char boundary at or after the current position), counting characters.
    fn advance_to(&mut self, byte: usize) {
        let skipped = &self.bytes()[self.byte..byte];
        self.chr += skipped.iter().filter(|&&b| (b & 0xC0) != 0x80).count();
        self.byte = byte;
    }

    /// Character offset of a byte offset at or after the current position.
    fn chr_at(&self, byte: usize) -> usize {
        self.chr + self.bytes()[self.byte..byte].iter().filter(|&&b| (b & 0xC0) != 0x80).count()
    }

    fn error(&self, byte: usize, message: String) -> CompileError {
        CompileError { position: self.chr_at(byte), message }
    }

    /// Skips whitespace and complete comments. Returns an error for an unterminated `/*` comment
    /// or a `/` that does not start one.
    fn skip_ignored(&mut self) -> Result<(), CompileError> {
        loop {
            let Some(b) = self.at(self.byte) else { return Ok(()) };
            match b {
                b' ' | b'\t' | b'\n' | b'\r' | 0x0C => self.advance_to(self.byte + 1),
                b'-' if self.at(self.byte + 1) == Some(b'-') => {
                    if self.last_line_end.is_none_or(|nl| nl < self.byte + 2) {
                        // No line end follows: not a comment; the `-` is a token.
                        return Ok(());
                    }
                    let rest = &self.bytes()[self.byte + 2..];
                    match rest.iter().position(|&c| c == b'\n' || c == b'\r') {
                        Some(off) => {
                            let nl = self.byte + 2 + off;
                            let end = if self.at(nl) == Some(b'\r') && self.at(nl + 1) == Some(b'\n') { nl + 2 } else { nl + 1 };
                            self.advance_to(end);
                        }
                        // No line end: not a comment; the `-` is a token.
                        None => return Ok(()),
                    }
                }
                b'/' => {
                    if self.at(self.byte + 1) != Some(b'*') {
                        return Err(self.error(self.byte, "lexical error: unexpected character '/'".into()));
                    }
                    let body = &self.src[self.byte + 2..];
                    match body.find("*/") {
                        Some(off) => self.advance_to(self.byte + 2 + off + 2),
                        None => {
                            return Err(self.error(self.src.len(), "lexical error: unterminated /* comment".into()));
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    /// Produces the next token (`Eof` repeatedly at the end).
    pub fn next_token(&mut self) -> Result<Token<'s>, CompileError> {
        self.skip_ignored()?;
        let start = self.byte;
        let pos = self.chr;
        let Some(b) = self.at(start) else {
            return Ok(Token { kind: Kind::Eof, pos, text: "" });
        };
        let (kind, end) = match b {
            b'=' => (Kind::Eq, start + 1),
            b'<' => match self.at(start + 1) {
                Some(b'>') => (Kind::Ne, start + 2),
                Some(b'=') => (Kind::Le, start + 2),
                _ => (Kind::Lt, start + 1),
            },
            b'>' => match self.at(start + 1) {
                Some(b'=') => (Kind::Ge, start + 2),
                _ => (Kind::Gt, start + 1),
            },
            b'(' => (Kind::LParen, start + 1),
            b')' => (Kind::RParen, start + 1),
            b',' => (Kind::Comma, start + 1),
            b'+' => (Kind::Plus, start + 1),
            b'-' => (Kind::Minus, start + 1),
            b'\'' => (Kind::Str, self.scan_string(start)?),
            b'0'..=b'9' | b'.' => self.scan_number(start)?,
            _ if is_id_start(b) => {
                let mut end = start + 1;
                while self.at(end).is_some_and(is_id_part) {
                    end += 1;
                }
                (self.keyword(&self.src[start..end]), end)
            }
            _ => {
                let c = self.src[start..].chars().next().unwrap_or('?');
                return Err(self.error(start, format!("lexical error: unexpected character {c:?}")));
            }
        };
        let text = &self.src[start..end];
        self.advance_to(end);
        Ok(Token { kind, pos, text })
    }

    fn keyword(&self, word: &str) -> Kind {
        for (kw, kind) in KEYWORDS {
            if word.eq_ignore_ascii_case(kw) {
                let extension = matches!(kind, Kind::Contains | Kind::StartsWith | Kind::EndsWith);
                if extension && self.version == Sql92Version::V4_9 {
                    return Kind::Id;
                }
                return kind;
            }
        }
        Kind::Id
    }

    /// `'...'` with `''` standing for one quote; longest match. Returns the end byte offset.
    fn scan_string(&self, start: usize) -> Result<usize, CompileError> {
        let bytes = self.bytes();
        let mut i = start + 1;
        let mut accept = None;
        while i < bytes.len() {
            if bytes[i] == b'\'' {
                // The literal may end here; a second quote may also continue it.
                accept = Some(i + 1);
                if bytes.get(i + 1) == Some(&b'\'') {
                    i += 2;
                    continue;
                }
                break;
            }
            i += 1;
        }
        accept.ok_or_else(|| self.error(bytes.len(), "lexical error: unterminated string literal".into()))
    }

    /// DECIMAL or FLOAT starting at a digit or `.`; returns the kind and end byte offset.
    fn scan_number(&self, start: usize) -> Result<(Kind, usize), CompileError> {
        let bytes = self.bytes();
        let digits_from = |mut i: usize| {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            i
        };
        // Length of a complete exponent at `i`, if any.
        let exponent_at = |i: usize| -> Option<usize> {
            if !matches!(bytes.get(i), Some(b'e' | b'E')) {
                return None;
            }
            let mut j = i + 1;
            if matches!(bytes.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            let end = digits_from(j);
            (end > j).then_some(end)
        };
        if bytes[start] == b'.' {
            let end = digits_from(start + 1);
            if end == start + 1 {
                return Err(self.error(start + 1, "lexical error: '.' must be followed by a digit".into()));
            }
            return Ok((Kind::Float, exponent_at(end).unwrap_or(end)));
        }
        let int_end = digits_from(start);
        if bytes.get(int_end) == Some(&b'.') {
            let frac_end = digits_from(int_end + 1);
            return Ok((Kind::Float, exponent_at(frac_end).unwrap_or(frac_end)));
        }
        if let Some(end) = exponent_at(int_end) {
            return Ok((Kind::Float, end));
        }
        if bytes[start] == b'0' {
            // DECIMAL "0" has no suffix and no further digits: "007" is 0, 0, 7.
            return Ok((Kind::Decimal, start + 1));
        }
        let end = if matches!(bytes.get(int_end), Some(b'l' | b'L')) { int_end + 1 } else { int_end };
        Ok((Kind::Decimal, end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str, version: Sql92Version) -> Result<Vec<(Kind, String)>, CompileError> {
        let mut lx = Lexer::new(src, version);
        let mut out = Vec::new();
        loop {
            let t = lx.next_token()?;
            if t.kind == Kind::Eof {
                return Ok(out);
            }
            out.push((t.kind, t.text.to_string()));
        }
    }

    fn k(src: &str) -> Vec<Kind> {
        kinds(src, Sql92Version::V5).unwrap().into_iter().map(|(k, _)| k).collect()
    }

    #[test]
    fn numbers_follow_longest_match() {
        use Kind::*;
        assert_eq!(k("007"), vec![Decimal, Decimal, Decimal]);
        assert_eq!(k("0x1F"), vec![Decimal, Id]);
        assert_eq!(k("10L 0L"), vec![Decimal, Decimal, Id]);
        assert_eq!(k("1e3 1e 1e+ .5 5. 1.e5 05.5"), vec![Float, Decimal, Id, Decimal, Id, Plus, Float, Float, Float, Float]);
        assert_eq!(k("1.2.3"), vec![Float, Float]);
        assert!(kinds("a.b", Sql92Version::V5).is_err());
    }

    #[test]
    fn strings_comments_and_keywords() {
        use Kind::*;
        let t = kinds("'it''s' '' ''''", Sql92Version::V5).unwrap();
        assert_eq!(t.iter().map(|x| x.1.as_str()).collect::<Vec<_>>(), vec!["'it''s'", "''", "''''"]);
        assert!(kinds("'abc", Sql92Version::V5).is_err());
        assert!(kinds("'''", Sql92Version::V5).is_err());
        assert_eq!(k("a -- c\n b /* x */ c"), vec![Id, Id, Id]);
        assert_eq!(k("a -- no newline"), vec![Id, Minus, Minus, Id, Id]);
        assert!(kinds("a /* open", Sql92Version::V5).is_err());
        assert_eq!(k("not NoT iN contains STARTSWITH endsWith notx"), vec![Not, Not, In, Contains, StartsWith, EndsWith, Id]);
        assert_eq!(kinds("contains", Sql92Version::V4_9).unwrap()[0].0, Id, "4.9 has no CONTAINS keyword");
        assert_eq!(k("<><=>=<>="), vec![Ne, Le, Ge, Ne, Eq]);
        let err = kinds("a = 1 \"", Sql92Version::V5).unwrap_err();
        assert_eq!(err.position, 6);
        let err = kinds("'é' ;", Sql92Version::V5).unwrap_err();
        assert_eq!(err.position, 4, "positions count characters");
    }
}
