//! The causal event log: every entry names the entry that scheduled it, so any outcome can be
//! explained by walking causes back to a scenario action.

use std::fmt::{self, Display, Write as _};

use super::digest::{write_line_prefix, DigestMemo, FRESH};
use super::Millis;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventId(pub u32);

impl Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

#[derive(Clone, Debug)]
pub struct LogEntry<K> {
    pub id: EventId,
    pub at: Millis,
    pub cause: Option<EventId>,
    pub kind: K,
}

#[derive(Clone, Debug)]
pub struct EventLog<K> {
    entries: Vec<LogEntry<K>>,
    digest: DigestMemo,
}

impl<K> Default for EventLog<K> {
    fn default() -> Self {
        EventLog { entries: Vec::new(), digest: DigestMemo::default() }
    }
}

impl<K: Display> EventLog<K> {
    pub fn push(&mut self, at: Millis, cause: Option<EventId>, kind: K) -> EventId {
        let id = EventId(self.entries.len() as u32);
        self.entries.push(LogEntry { id, at, cause, kind });
        id
    }

    /// Makes room for `additional` more entries (a model that knows its size avoids regrowing).
    pub fn reserve(&mut self, additional: usize) {
        self.entries.reserve(additional);
    }

    pub fn get(&self, id: EventId) -> Option<&LogEntry<K>> {
        self.entries.get(id.0 as usize)
    }

    pub fn entries(&self) -> &[LogEntry<K>] {
        &self.entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The bytes the entries take (what an event holds on the heap not counted).
    pub fn bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<LogEntry<K>>()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry and its causes, newest first, back to the root.
    pub fn cause_chain(&self, id: EventId) -> Vec<&LogEntry<K>> {
        let mut out = Vec::new();
        let mut cur = Some(id);
        while let Some(c) = cur {
            match self.get(c) {
                Some(e) => {
                    out.push(e);
                    cur = e.cause;
                }
                None => break,
            }
        }
        out
    }

    /// One line per entry: `#id t=ms cause=#c kind`.
    pub fn line(entry: &LogEntry<K>) -> String {
        let mut s = String::new();
        Self::write_line(&mut s, entry);
        s
    }

    fn write_line(s: &mut String, entry: &LogEntry<K>) {
        write_line_prefix(s, entry.id.0, entry.at, entry.cause.map(|c| c.0));
        let _ = write!(s, "{}", entry.kind);
    }

    /// The whole log as text.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for e in &self.entries {
            s.push_str(&Self::line(e));
            s.push('\n');
        }
        s
    }

    /// FNV-1a over the rendered log: equal digests mean byte-identical logs (with overwhelming odds).
    /// Hashed line by line: the same value as hashing `render()`, without building it.
    pub fn digest(&self) -> u64 {
        self.digest_within(usize::MAX).unwrap_or_default()
    }

    /// The digest once at most `max_lines` more lines are hashed (`DigestMemo`); `None` until then.
    pub fn digest_within(&self, max_lines: usize) -> Option<u64> {
        let len = u32::try_from(self.entries.len()).unwrap_or(u32::MAX);
        self.digest.fold(FRESH, len, max_lines, |r| self.entries[r.start as usize..r.end as usize].iter(), Self::write_line)
    }
}
