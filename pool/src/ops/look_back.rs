//! What the blocks of a scan tell the blocks after them (decoupled look-back, after
//! Merrill and Garland's single-pass scan, without its waiting): a block publishes its
//! total as soon as it has it, then its inclusive prefix (a block scanned in one pass from
//! its predecessor's prefix publishes only its prefix); a block finds what the blocks
//! before it add up to by walking back over those, and computes a total that nobody has
//! published yet itself, rather than wait for it. So no participant ever waits for another:
//! a block whose participant is preempted before it publishes its total costs each block
//! after it, until it does, one more pass over its items, and a block whose call panicked
//! costs the next block that pass once; never a hang.

use crate::sync::{AtomicUsize, Ordering, UnsafeCell};

/// A block's state: nothing published yet, its total, or its total and its inclusive
/// prefix (what the blocks up to and including it add up to). It only ever grows.
const NOTHING: usize = 0;
const TOTAL: usize = 1;
const PREFIX: usize = 2;

/// What one block has published.
struct Published<T> {
    state: AtomicUsize,
    total: UnsafeCell<Option<T>>,
    prefix: UnsafeCell<Option<T>>,
}

/// What every block of one scan has published.
///
/// # Safety
/// Block `b`'s cells are written only by the participant that scans block `b`, each once,
/// before the Release store of the state that announces it; they are read only after an
/// Acquire load of the state saw that announcement, and never written again.
pub(crate) struct Blocks<T> {
    published: Vec<Published<T>>,
}

// SAFETY: a cell is written by one thread and read by others only after the write is
// announced (struct `# Safety`), so sharing needs `T: Sync` and moving a value in from the
// participant that made it, `T: Send`.
unsafe impl<T: Send + Sync> Sync for Blocks<T> {}

impl<T: Clone> Blocks<T> {
    /// Nothing published, for `blocks` blocks.
    pub(crate) fn new(blocks: usize) -> Blocks<T> {
        Blocks {
            published: (0..blocks)
                .map(|_| Published {
                    state: AtomicUsize::new(NOTHING),
                    total: UnsafeCell::new(None),
                    prefix: UnsafeCell::new(None),
                })
                .collect(),
        }
    }

    /// Publishes block `b`'s total. Called once, by `b`'s participant, before
    /// [`publish_prefix`](Self::publish_prefix).
    pub(crate) fn publish_total(&self, b: usize, total: T) {
        let block = &self.published[b];
        // SAFETY: only `b`'s participant writes the cell, once, and nobody reads it before
        // the store below announces it (struct `# Safety`).
        block.total.with_mut(|cell| unsafe { *cell = Some(total) });
        block.state.store(TOTAL, announce());
    }

    /// Publishes what blocks `0..=b` add up to. Called once, by `b`'s participant.
    pub(crate) fn publish_prefix(&self, b: usize, prefix: T) {
        let block = &self.published[b];
        // SAFETY: as in `publish_total`.
        block
            .prefix
            .with_mut(|cell| unsafe { *cell = Some(prefix) });
        block.state.store(PREFIX, announce());
    }

    /// What blocks `0..=b` add up to, if block `b` has published it.
    pub(crate) fn prefix_through(&self, b: usize) -> Option<T> {
        let block = &self.published[b];
        // Acquire: as in `prefix_before`.
        (block.state.load(Ordering::Acquire) == PREFIX).then(|| announced(&block.prefix))
    }

    /// What blocks `0..b` add up to under `op` (`None` for block 0). Walking back from
    /// `b - 1`: a published prefix ends the walk, a published total is taken, and the
    /// total of a block that has published nothing is computed here by `total_of`.
    pub(crate) fn prefix_before(
        &self,
        b: usize,
        op: impl Fn(&T, &T) -> T,
        total_of: impl Fn(usize) -> T,
    ) -> Option<T> {
        let mut after: Option<T> = None; // what the blocks walked over add up to
        let then = |before: T, after: Option<T>| match after {
            Some(after) => op(&before, &after),
            None => before,
        };
        for j in (0..b).rev() {
            let block = &self.published[j];
            // Acquire: pairs with the Release store that announced the state, so the cell
            // it names is written (struct `# Safety`).
            let state = block.state.load(Ordering::Acquire);
            if state == PREFIX {
                return Some(then(announced(&block.prefix), after));
            }
            let total = if state == TOTAL {
                announced(&block.total)
            } else {
                total_of(j)
            };
            after = Some(then(total, after));
        }
        after
    }
}

/// The value in a cell whose block's state, loaded with Acquire, announced it.
fn announced<T: Clone>(cell: &UnsafeCell<Option<T>>) -> T {
    // SAFETY: announced, so written and never written again (struct `# Safety`).
    let value = cell.with(|cell| unsafe { (*cell).clone() });
    value.expect("an announced cell holds its value")
}

/// The ordering of an announcement: Release, pairing with the Acquire loads of
/// `prefix_through` and `prefix_before`.
fn announce() -> Ordering {
    if crate::broken::variant!("look_back_relaxed") {
        Ordering::Relaxed // deliberately broken: a cell may be read before it is written
    } else {
        Ordering::Release
    }
}
