//! The bounds every part of the pool shares.

use rayforce_tunables::registry;

/// The most participants a pool can have, the caller included (`rayforce.pool.workers`'
/// bound, the kernel's CPU limit). The builder refuses a larger width; `Pool::resize`
/// clamps to it.
pub const MAX_WIDTH: usize = registry::MAX_WIDTH as usize;
