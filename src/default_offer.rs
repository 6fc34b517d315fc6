//! The runtime's pool as the default pool: a runtime that is the global allocator offers it
//! (`Pool::set_default_maker`) when its first allocation binds a thread, so parallel
//! iterators, `join` and `scope` run on it even before `Runtime::pool` was called. The
//! offer holds the runtime's address for the rest of the process: a runtime that made it
//! aborts the process if dropped (a `static`, the global allocator, never is).

use crate::static_memory;
use crate::Runtime;
use rayforce_alloc::OnBind;
use rayforce_pool::Pool;
use std::sync::atomic::{AtomicPtr, Ordering};

/// The runtime that offered its pool: the first one in static memory to serve an
/// allocation, in practice the global allocator. Null until then.
static OFFERED: AtomicPtr<Runtime> = AtomicPtr::new(std::ptr::null_mut());

impl Runtime {
    /// The allocator as the runtime serves allocations through it: offering the pool
    /// on each thread's binding.
    #[inline(always)]
    pub(crate) fn served(&self) -> OnBind<'_, impl Fn() + Copy + '_> {
        self.alloc.on_bind(move || self.offer_pool())
    }

    /// Offers this runtime's pool as the default one, if this runtime lives in static
    /// memory, where a `#[global_allocator]` does, and no other runtime offered its own.
    /// Called on each thread binding, which the first allocation of a thread through this
    /// runtime makes. Until one call has looked, every call looks, so that a thread that
    /// bound finds the pool offered, or not, once its allocation returns.
    pub(crate) fn offer_pool(&self) {
        // Acquire: pairs with the Release store below, so a thread that skips the look sees
        // the maker the look offered.
        if self.offer_checked.load(Ordering::Acquire) {
            return;
        }
        let this = std::ptr::from_ref(self).cast_mut();
        if static_memory::holds(this as usize, std::mem::size_of::<Runtime>()) {
            // Release: pairs with `offered_pool`'s Acquire, so the runtime is seen whole.
            let offered = OFFERED.compare_exchange(
                std::ptr::null_mut(),
                this,
                Ordering::Release,
                Ordering::Relaxed,
            );
            let ours = match offered {
                Ok(_) => true,
                Err(already) => already == this,
            };
            if ours {
                Pool::set_default_maker(offered_pool);
            }
        }
        // Release: pairs with the Acquire load above.
        self.offer_checked.store(true, Ordering::Release);
    }
}

impl Drop for Runtime {
    /// Aborts the process if this runtime offered its pool as the default one, which code
    /// on any thread may reach through the offer from now on; otherwise drops nothing of
    /// its own. A runtime in static memory offers it on its first allocation: one there
    /// that allocated must stay for the rest of the process, as a `static` does.
    fn drop(&mut self) {
        // Relaxed: a runtime compares with its own address, which only it stored, before.
        if std::ptr::eq(OFFERED.load(Ordering::Relaxed), self) {
            let message =
                b"rayforce-rt: a Runtime whose pool was offered as the default pool was dropped; aborting\n";
            // SAFETY: writing a static buffer to stderr.
            unsafe { libc::write(2, message.as_ptr().cast(), message.len()) };
            std::process::abort();
        }
    }
}

/// The pool of the runtime that offered it.
fn offered_pool() -> &'static Pool {
    // Acquire: pairs with `offer_pool`'s Release.
    let runtime = OFFERED.load(Ordering::Acquire);
    // SAFETY: set once, before this maker was offered, to a runtime in static memory that
    // served an allocation: a `static` (never moved or dropped), or one whose allocations
    // were called directly, whose caller must then never move it (`Runtime`'s contract);
    // dropping it aborts the process first.
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
