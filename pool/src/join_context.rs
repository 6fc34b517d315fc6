//! rayon's `join_context`: a [`join`](crate::join) whose halves learn whether they run on
//! another thread than the one that called it.

use std::marker::PhantomData;

/// Where a half of [`join_context`] runs, as rayon's `FnContext` (neither `Send` nor
/// `Sync`: it speaks of the thread it was given on).
#[derive(Debug)]
pub struct FnContext {
    migrated: bool,
    not_send: PhantomData<*mut ()>,
}

impl FnContext {
    fn new(migrated: bool) -> FnContext {
        FnContext {
            migrated,
            not_send: PhantomData,
        }
    }

    /// Whether the half runs on another thread than the one that called
    /// [`join_context`]: only the second can (the first always runs on the caller).
    #[must_use]
    pub fn migrated(&self) -> bool {
        self.migrated
    }
}

/// [`join`](crate::join), each half told by its [`FnContext`] whether it runs on another
/// thread than this one, as rayon's `join_context`: a recursion can split further where a
/// half was taken by an idle thread, as rayon's adaptive splitting does.
///
/// ```
/// let pool = rayforce_pool::Pool::builder().workers(2).build().unwrap();
/// let (a, b) = pool.install(|| {
///     rayforce_pool::join_context(|ctx| ctx.migrated(), |ctx| ctx.migrated() as u8)
/// });
/// assert!(!a, "the first half runs on the caller");
/// assert!(b <= 1);
/// ```
pub fn join_context<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    let caller = this_thread();
    crate::join(
        || a(FnContext::new(false)),
        move || b(FnContext::new(this_thread() != caller)),
    )
}

/// An address no other live thread shares: that of the calling thread's copy of a
/// thread-local (the caller of a join lives until both halves ended).
fn this_thread() -> usize {
    crate::sync::const_thread_local! {
        static MARK: u8 = 0;
    }
    MARK.with(|mark| std::ptr::from_ref(mark) as usize)
}
