//! Message keys, interned: a message carries a 4-byte `KeyId` instead of a shared string, so the
//! hot path neither touches a reference count per message nor hashes the key again (the table keeps
//! each key's `makeHash`). A key template that repeats (`k-{i%8}`) interns each key once.

use std::num::NonZeroU32;

use crate::events::Name;
use crate::hash::make_hash;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyId(NonZeroU32);

impl KeyId {
    /// The id's place in its table, `0..KeyTable::len()`: for tables indexed by key id.
    pub fn index(self) -> usize {
        self.0.get() as usize - 1
    }
}

/// Every key text a run produced, with its `makeHash`. The same text may appear under two ids
/// (two templates rendering it): compare keys by `text`, never by id.
#[derive(Clone, Debug, Default)]
pub struct KeyTable {
    names: Vec<Name>,
    make_hashes: Vec<u32>,
}

impl KeyTable {
    pub fn intern(&mut self, text: &str) -> KeyId {
        self.names.push(Name::from(text));
        self.make_hashes.push(make_hash(text.as_bytes()));
        let id = u32::try_from(self.names.len()).ok().and_then(NonZeroU32::new).expect("fewer than 2^32 keys");
        KeyId(id)
    }

    /// How many ids the table has given out.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn text(&self, k: KeyId) -> &str {
        &self.names[k.index()]
    }

    pub fn name(&self, k: KeyId) -> Name {
        self.names[k.index()].clone()
    }

    pub fn make_hash(&self, k: KeyId) -> u32 {
        self.make_hashes[k.index()]
    }
}

impl super::World {
    pub fn key_text(&self, k: Option<KeyId>) -> Option<&str> {
        k.map(|k| self.keys.text(k))
    }

    /// The ordering key if set, else the key: what Key_Shared hashes and what labels a message.
    pub fn sticky_key_text(&self, m: &super::Message) -> Option<&str> {
        self.key_text(m.sticky_key())
    }
}
