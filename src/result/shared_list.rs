//! A list whose tail is shared with other lists: the hops of a storage path
//! ([`Hops`](super::path::Hops)). The files of one directory on one filesystem differ only in
//! their file hop, so each of their paths holds its own hops and one reference to the hops
//! below them (page cache, filesystem, devices, transport, bus), built once for all of them. A
//! job of 100 000 files holds the hops below its files once, not 100 000 times.
//!
//! Read it as a sequence ([`SharedList::iter`], indexing, [`SharedList::len`]); it is saved and
//! compared as the plain list of its items, wherever they are held.
//!
//! ```
//! use iopath::result::{Hop, HopKind, HopOrigin, Hops};
//! use std::sync::Arc;
//! let hop = |key: &str, kind| Hop {
//!     key: key.into(),
//!     kind,
//!     name: key.into(),
//!     description: String::new(),
//!     depth: 0,
//!     origin: HopOrigin::Discovered,
//!     capacity: None,
//!     queue: None,
//!     protocol: None,
//!     read_share: 1.0,
//!     write_share: 1.0,
//! };
//! let below: Arc<[Hop]> = vec![hop("fs:/", HopKind::Filesystem), hop("block:sda", HopKind::Disk)].into();
//! let a = Hops::sharing(vec![hop("file:/data/a", HopKind::File)], Arc::clone(&below));
//! let b = Hops::sharing(vec![hop("file:/data/b", HopKind::File)], below);
//! assert!(a.shares_below_with(&b));
//! assert_eq!(a.len(), 3);
//! assert_eq!(a[1].key, "fs:/");
//! let keys: Vec<&str> = b.iter().map(|hop| hop.key.as_str()).collect();
//! assert_eq!(keys, ["file:/data/b", "fs:/", "block:sda"]);
//! // Saved as the plain list: the same JSON as the hops held by the path alone.
//! let alone: Hops = b.to_vec().into();
//! assert_eq!(serde_json::to_string(&b).unwrap(), serde_json::to_string(&alone).unwrap());
//! assert_eq!(b, alone);
//! ```

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::sync::Arc;

/// A list: its own items, then items it shares with other lists (see the module
/// documentation).
#[derive(Clone)]
pub struct SharedList<T> {
    /// The items only this list holds (a path's file hop), first.
    own: Vec<T>,
    /// The items after them, shared with other lists (the hops below the files of one
    /// filesystem).
    shared: Arc<[T]>,
}

impl<T> Default for SharedList<T> {
    fn default() -> Self {
        SharedList {
            own: Vec::new(),
            shared: Arc::from(Vec::new()),
        }
    }
}

impl<T: Clone> SharedList<T> {
    /// `own` items followed by items `shared` with other lists.
    pub fn sharing(own: Vec<T>, shared: Arc<[T]>) -> Self {
        SharedList { own, shared }
    }

    /// How many items.
    pub fn len(&self) -> usize {
        self.own.len() + self.shared.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The items in order.
    pub fn iter(&self) -> SharedListIter<'_, T> {
        SharedListIter {
            own: self.own.iter(),
            shared: self.shared.iter(),
        }
    }

    /// The item at `index`, if there is one.
    pub fn get(&self, index: usize) -> Option<&T> {
        match index.checked_sub(self.own.len()) {
            None => self.own.get(index),
            Some(index) => self.shared.get(index),
        }
    }

    /// The first item.
    pub fn first(&self) -> Option<&T> {
        self.get(0)
    }

    /// The last item.
    pub fn last(&self) -> Option<&T> {
        self.shared.last().or_else(|| self.own.last())
    }

    /// The items as a list of this one's own, to change them: shared items are copied into
    /// it first (once), so that the other lists keep theirs.
    pub fn to_mut(&mut self) -> &mut Vec<T> {
        if !self.shared.is_empty() {
            let shared = std::mem::replace(&mut self.shared, Arc::from(Vec::new()));
            self.own.extend(shared.iter().cloned());
        }
        &mut self.own
    }

    /// Adds `item` at the end.
    pub fn push(&mut self, item: T) {
        self.to_mut().push(item);
    }

    /// A copy of the items, as a plain list.
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().cloned().collect()
    }

    /// Whether this list holds the same shared items as `other` (not copies of them): for
    /// hops, both are paths of files of one filesystem, built once.
    pub fn shares_below_with(&self, other: &SharedList<T>) -> bool {
        !self.shared.is_empty() && Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// How many items this list holds by itself, not shared with others.
    pub fn own_count(&self) -> usize {
        self.own.len()
    }
}

impl<T> From<Vec<T>> for SharedList<T> {
    fn from(own: Vec<T>) -> Self {
        SharedList {
            own,
            shared: Arc::from(Vec::new()),
        }
    }
}

impl<T> FromIterator<T> for SharedList<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        items.into_iter().collect::<Vec<_>>().into()
    }
}

impl<T: Clone> std::ops::Index<usize> for SharedList<T> {
    type Output = T;

    fn index(&self, index: usize) -> &T {
        match self.get(index) {
            Some(hop) => hop,
            None => panic!("item {index} of a list of {}", self.len()),
        }
    }
}

impl<'a, T: Clone> IntoIterator for &'a SharedList<T> {
    type Item = &'a T;
    type IntoIter = SharedListIter<'a, T>;

    fn into_iter(self) -> SharedListIter<'a, T> {
        self.iter()
    }
}

impl<T: Clone + PartialEq> PartialEq for SharedList<T> {
    fn eq(&self, other: &SharedList<T>) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<T: Clone + PartialEq> PartialEq<Vec<T>> for SharedList<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<T: Clone + std::fmt::Debug> std::fmt::Debug for SharedList<T> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Clone + Serialize> Serialize for SharedList<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for SharedList<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<T>::deserialize(deserializer).map(SharedList::from)
    }
}

/// The items of a list in order ([`SharedList::iter`]).
#[derive(Clone, Debug)]
pub struct SharedListIter<'a, T> {
    own: std::slice::Iter<'a, T>,
    shared: std::slice::Iter<'a, T>,
}

impl<'a, T> Iterator for SharedListIter<'a, T> {
    type Item = &'a T;

    fn next(&mut self) -> Option<&'a T> {
        self.own.next().or_else(|| self.shared.next())
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.own.len() + self.shared.len();
        (left, Some(left))
    }
}

impl<T> DoubleEndedIterator for SharedListIter<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.shared.next_back().or_else(|| self.own.next_back())
    }
}

impl<T> ExactSizeIterator for SharedListIter<'_, T> {}
