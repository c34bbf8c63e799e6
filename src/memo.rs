//! Process-wide memos of pure functions whose inputs never change once read: a vendored
//! manifest's objects by its content's digest, a document's schema verdict by the schemas that
//! judge it and its text's digest. A process that compiles more than once (`fleetc diff`'s base
//! and head, the test suite's thousands of compiles of one reference fleet) parses and judges an
//! unchanged input once. A memo holds exactly what the function returns for its key, so a hit
//! and a miss give the same value and the output stays a function of the inputs alone (the
//! goldens and tests/threads.rs hold with any mix of hits and misses). Bounded: a memo that
//! reaches [`CAP`] entries starts over.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, OnceLock, PoisonError};

/// The most entries one memo keeps before it starts over.
pub const CAP: usize = 50_000;

/// A memo of one function: key → value, shared by every thread of the process.
pub struct Memo<K, V> {
    map: OnceLock<Mutex<HashMap<K, V>>>,
}

impl<K: Hash + Eq, V: Clone> Memo<K, V> {
    pub const fn new() -> Self {
        Memo { map: OnceLock::new() }
    }

    /// The value for `key`: the memo's, else `f()`'s (computed outside the lock, so two
    /// threads may both compute one key: they compute the same value).
    pub fn get_or(&self, key: K, f: impl FnOnce() -> V) -> V {
        let map = self.map.get_or_init(|| Mutex::new(HashMap::new()));
        if let Some(v) = map.lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
            return v.clone();
        }
        let v = f();
        let mut m = map.lock().unwrap_or_else(PoisonError::into_inner);
        if m.len() >= CAP {
            m.clear();
        }
        m.insert(key, v.clone());
        v
    }
}

impl<K: Hash + Eq, V: Clone> Default for Memo<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hit_returns_what_the_miss_computed_and_computes_nothing() {
        let memo: Memo<u32, String> = Memo::new();
        let mut calls = 0;
        let a = memo.get_or(1, || {
            calls += 1;
            "one".to_owned()
        });
        let b = memo.get_or(1, || {
            calls += 1;
            "other".to_owned()
        });
        assert_eq!((a.as_str(), b.as_str(), calls), ("one", "one", 1));
    }

    #[test]
    fn a_full_memo_starts_over() {
        let memo: Memo<usize, usize> = Memo::new();
        for i in 0..=CAP {
            memo.get_or(i, || i);
        }
        let len = memo.map.get().map(|m| m.lock().unwrap().len());
        assert_eq!(len, Some(1));
    }
}
