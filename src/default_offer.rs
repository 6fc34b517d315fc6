//! The runtime's pool as the default pool: a runtime that is the global allocator offers it
//! (`Pool::set_default_maker`) when its first allocation binds a thread, so parallel
//! iterators, `join` and `scope` run on it even before `Runtime::pool` was called.

use crate::static_memory;
use crate::Runtime;
use rayforce_pool::Pool;
use std::sync::atomic::{AtomicPtr, Ordering};

/// The runtime that offered its pool: the first one in static memory to serve an
/// allocation, in practice the global allocator. Null until then.
static OFFERED: AtomicPtr<Runtime> = AtomicPtr::new(std::ptr::null_mut());

impl Runtime {
    /// Offers this runtime's pool as the default one, if this runtime lives in static
    /// memory, where a `#[global_allocator]` does (and where it is never moved or dropped),
    /// and no other runtime offered its own. Called on each thread binding, which the
    /// first allocation of a thread through this runtime makes; only the first call looks.
    pub(crate) fn offer_pool(&self) {
        if self.offer_checked.swap(true, Ordering::Relaxed) {
            return;
        }
        let this = std::ptr::from_ref(self);
        if !static_memory::holds(this as usize, std::mem::size_of::<Runtime>()) {
            return;
        }
        // Release: pairs with `offered_pool`'s Acquire, so the runtime is seen whole.
        let offered = OFFERED.compare_exchange(
            std::ptr::null_mut(),
            this.cast_mut(),
            Ordering::Release,
            Ordering::Relaxed,
        );
        if offered.is_ok() {
            Pool::set_default_maker(offered_pool);
        }
    }
}

/// The pool of the runtime that offered it.
fn offered_pool() -> &'static Pool {
    // Acquire: pairs with `offer_pool`'s Release.
    let runtime = OFFERED.load(Ordering::Acquire);
    // SAFETY: set once, before this maker was offered, to a runtime in static memory, which
    // lives for the rest of the program unmoved.
    unsafe { &*runtime }.pool()
}

#[cfg(test)]
mod tests {
    use super::OFFERED;
    use crate::{cpu::CpuPolicy, Runtime};
    use std::alloc::{GlobalAlloc, Layout};
    use std::sync::atomic::Ordering;

    #[test]
    fn a_runtime_off_static_memory_offers_nothing() {
        let runtime = Box::new(Runtime::new(CpuPolicy::Online));
        let layout = Layout::new::<[u64; 4]>();
        // A thread of its own, which ends (and detaches) before the runtime drops.
        std::thread::scope(|scope| {
            scope.spawn(|| {
                // SAFETY: a non-zero-size layout; the block goes back to the runtime it
                // came from, which outlives the thread.
                unsafe { runtime.dealloc(runtime.alloc(layout), layout) };
            });
        });
        assert!(runtime.offer_checked.load(Ordering::Relaxed));
        assert!(OFFERED.load(Ordering::Relaxed).is_null());
    }
}
