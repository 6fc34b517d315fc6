//! Each helper's mailbox: the calls a broadcast leaves for that helper's thread alone
//! (README "Broadcasts"). A helper reads its mailbox wherever it waits in a pool: for a
//! permit, while parked, for a dispatch's helpers, for a join's taken half (in any pool),
//! for a broadcast, in `yield_now`.

use crate::fork;
use crate::sync::{self, Arc, AtomicBool, Condvar, Mutex, MutexGuard, Ordering};
use std::cell::RefCell;
use std::collections::VecDeque;

/// A call left for one thread: `Letter::open` runs it there.
pub(crate) trait Letter: Sync {
    /// Runs the call as participant `index` of its broadcast, and counts it done.
    ///
    /// # Safety
    ///
    /// At most once per index the broadcast posted, and only while the broadcast waits
    /// for it: the letter lives on the broadcasting thread's stack until every index it
    /// posted was opened.
    unsafe fn open(&self, index: usize);
}

/// A call left in a mailbox.
enum Mail {
    /// A broadcast's, which waits for it: its letter and the index it carries.
    Borrowed {
        letter: *const (dyn Letter + 'static),
        index: usize,
    },
    /// A spawned broadcast's, which owns what it runs (`spawn_broadcast`).
    Owned(Box<dyn FnOnce() + Send>),
}

// SAFETY: a `Letter` is `Sync`, and the broadcast that posted it keeps it alive until it
// was opened (`Letter::open`'s `# Safety`), on whichever thread opens it; an owned call is
// `Send`.
unsafe impl Send for Mail {}

impl Mail {
    /// Runs the call.
    ///
    /// # Safety
    ///
    /// Once: a borrowed letter is opened once per index posted (`Letter::open`).
    unsafe fn open(self) {
        match self {
            // SAFETY: as this function's `# Safety`.
            Mail::Borrowed { letter, index } => unsafe { (*letter).open(index) },
            Mail::Owned(call) => call(),
        }
    }
}

/// What wakes a thread blocked in a wait (`Mailbox::block_in`): its signal's `wake_waiters`.
pub(crate) trait Waiters {
    /// Wakes every thread blocked in one of this signal's waits that reads its mailbox.
    fn wake_waiters(&self);
}

/// Where a helper is blocked now.
#[derive(Clone, Copy)]
struct BlockedIn(*const (dyn Waiters + 'static));

/// The wait a helper was registered in before `Mailbox::block_in`, which `unblock`
/// restores: a wait entered while opening letters inside another ends, and the outer one
/// goes on.
#[must_use = "`unblock` restores it"]
struct Outer(Option<BlockedIn>);

// SAFETY: set and cleared under the mailbox's lock by its helper, around a wait in which
// the signal it points to outlives the wait; read only under that lock (`Mailbox::post`).
unsafe impl Send for BlockedIn {}

/// What a mailbox holds, under its lock.
#[derive(Default)]
struct Letters {
    queue: VecDeque<Mail>,
    /// The helper saw the pool shut down (or never served): nothing more is delivered.
    closed: bool,
    /// The wait its helper is blocked in, if any, which a post wakes.
    blocked_in: Option<BlockedIn>,
}

/// One helper's mailbox.
pub(crate) struct Mailbox {
    /// The helper's index (1-based).
    helper: usize,
    /// The fork generation its helper runs in: a child forked inside a call opens no more.
    generation: u64,
    letters: Mutex<Letters>,
    /// Whether `letters` holds any: a hint read outside the lock by a waiting helper. The
    /// letters themselves are read under the lock. A helper about to block reads the hint
    /// under its wait's lock after it registered the wait (`block_in`, under this
    /// mailbox's lock), and a post sets it under this mailbox's lock, then wakes the wait
    /// registered, under that wait's lock; a helper waiting for a permit reads it under the
    /// lock `Signal::wake_all` takes after the posts (README "Broadcasts"). So Relaxed
    /// suffices.
    pending: AtomicBool,
    /// Where the helper waits for a broadcast of its own (`wait_until`): each post, and the
    /// last letter of its broadcast opened, notify it.
    changed: Condvar,
}

impl Mailbox {
    /// Helper `helper`'s mailbox, empty (0: a broadcaster's that is no helper, where it
    /// only waits), for the fork generation it runs in.
    pub(crate) fn new(helper: usize) -> Mailbox {
        Mailbox {
            helper,
            generation: fork::generation(),
            letters: Mutex::new(Letters::default()),
            pending: AtomicBool::new(false),
            changed: Condvar::new(),
        }
    }

    /// Whether a letter waits.
    #[inline]
    pub(crate) fn has_mail(&self) -> bool {
        self.pending.load(Ordering::Relaxed)
    }

    /// Leaves `mail` for this helper, whose mailbox is open: it is posted under the
    /// registry's lock (`Delivery`), and a mailbox is taken out of the registry, under that
    /// lock, before it closes.
    fn post(&self, mail: Mail) {
        let mut letters = sync::lock(&self.letters);
        assert!(!letters.closed, "a letter posted to a closed mailbox");
        letters.queue.push_back(mail);
        self.pending.store(true, Ordering::Relaxed);
        self.changed.notify_one();
        if let Some(BlockedIn(waiters)) = letters.blocked_in {
            // SAFETY: registered by the helper around a wait whose signal outlives it, and
            // cleared under this lock before the wait returns (`block_in`).
            unsafe { (*waiters).wake_waiters() };
        }
    }

    /// On its helper's thread, before it blocks in a wait of `waiters` that reads this
    /// mailbox under the wait's lock: a post wakes it there, whichever pool the wait
    /// belongs to. [`unblock`](Self::unblock) with what this returns ends it.
    fn block_in(&self, waiters: &(dyn Waiters + 'static)) -> Outer {
        Outer(
            sync::lock(&self.letters)
                .blocked_in
                .replace(BlockedIn(waiters)),
        )
    }

    /// The wait registered by `block_in` ends: the one it was entered in, if any (a letter
    /// opened inside it), is registered again.
    fn unblock(&self, outer: Outer) {
        sync::lock(&self.letters).blocked_in = outer.0;
    }

    /// On its helper's thread: opens the letters left here until `done()`, which only a
    /// call to [`notify`](Self::notify) after it became true may end the wait for.
    pub(crate) fn wait_until(&self, done: impl Fn() -> bool) {
        // Deliberately broken: waits without opening the letters left meanwhile.
        let deaf = crate::broken::variant!("deaf_broadcaster");
        loop {
            if !deaf {
                self.open_all();
            }
            let letters = sync::lock(&self.letters);
            if done() {
                return;
            }
            if letters.queue.is_empty() || deaf {
                drop(
                    self.changed
                        .wait(letters)
                        .unwrap_or_else(|p| p.into_inner()),
                );
            }
        }
    }

    /// Wakes the helper if it waits in `wait_until`.
    pub(crate) fn notify(&self) {
        let _letters = sync::lock(&self.letters);
        self.changed.notify_one();
    }

    /// Opens every letter waiting, oldest first: whether there was any. In a child forked
    /// inside a call, none more: the lock may have been held by another of the parent's
    /// threads.
    pub(crate) fn open_all(&self) -> bool {
        let mut opened = false;
        loop {
            if fork::generation() != self.generation {
                return opened;
            }
            let next = {
                let mut letters = sync::lock(&self.letters);
                let next = letters.queue.pop_front();
                self.pending
                    .store(!letters.queue.is_empty(), Ordering::Relaxed);
                next
            };
            let Some(mail) = next else {
                return opened;
            };
            // SAFETY: each posted letter is popped, and so opened, once; its broadcast
            // waits for it (`Letter::open`'s `# Safety`).
            unsafe { mail.open() };
            opened = true;
        }
    }
}

/// The open mailboxes of a crew's helpers: from their spawn to the first shutdown each sees.
#[derive(Default)]
pub(crate) struct Mailboxes {
    open: Mutex<Vec<Arc<Mailbox>>>,
}

impl Mailboxes {
    /// Registers `mailbox`, its helper spawned, unless that helper stopped already (its
    /// start hook panicked).
    pub(crate) fn register(&self, mailbox: Arc<Mailbox>) {
        let mut open = sync::lock(&self.open);
        if !sync::lock(&mailbox.letters).closed {
            open.push(mailbox);
        }
    }

    /// Closes `mailbox` as its helper saw the pool shut down (or never served): it leaves
    /// the registry, so no later delivery reaches it; what was left, the helper still
    /// opens, as it waits once more.
    pub(crate) fn close(&self, mailbox: &Arc<Mailbox>) {
        let mut open = sync::lock(&self.open);
        open.retain(|registered| !Arc::ptr_eq(registered, mailbox));
        sync::lock(&mailbox.letters).closed = true;
    }

    /// The mailboxes of the helpers below `width`, by index, this thread's own left out
    /// unless `with_own`, held open: none closes until the delivery is dropped, so every
    /// letter posted meanwhile is opened by its helper.
    pub(crate) fn deliver(&self, width: usize, with_own: bool) -> Delivery<'_> {
        let own = own().filter(|_| !with_own);
        let open = sync::lock(&self.open);
        let mut targets: Vec<Arc<Mailbox>> = open
            .iter()
            .filter(|open| {
                open.helper < width && !own.as_ref().is_some_and(|own| Arc::ptr_eq(own, open))
            })
            .cloned()
            .collect();
        targets.sort_by_key(|target| target.helper);
        Delivery {
            _open: open,
            targets,
        }
    }
}

/// Open mailboxes, held open (the registry's lock) while letters are posted to them.
pub(crate) struct Delivery<'a> {
    _open: MutexGuard<'a, Vec<Arc<Mailbox>>>,
    /// The mailboxes to post to, by helper index.
    pub(crate) targets: Vec<Arc<Mailbox>>,
}

/// Leaves `call`, a spawned broadcast's, in `mailbox`, held open by a [`Delivery`].
pub(crate) fn post_spawned(mailbox: &Mailbox, call: Box<dyn FnOnce() + Send>) {
    mailbox.post(Mail::Owned(call));
}

/// Runs `wait`, a wait of `waiters` that reads `own` (this thread's mailbox, if it is a
/// helper) under the wait's lock before it blocks, registered in the mailbox meanwhile, so
/// that a post wakes it (`Mailbox::block_in`). Call it without that lock held: a post
/// takes it under the mailbox's lock.
pub(crate) fn registered<R>(
    own: Option<&Mailbox>,
    waiters: &(dyn Waiters + 'static),
    wait: impl FnOnce() -> R,
) -> R {
    let outer = own.map(|own| own.block_in(waiters));
    let outcome = wait();
    if let (Some(own), Some(outer)) = (own, outer) {
        own.unblock(outer);
    }
    outcome
}

/// Makes `mailbox` this (helper) thread's own (`open_own`), in the fork generation it was
/// made in, until the helper stops (`forget_own`).
pub(crate) fn make_own(mailbox: &Arc<Mailbox>) {
    OWN.with(|own| *own.borrow_mut() = Some(Arc::clone(mailbox)));
}

/// Leaves `letter` in `mailbox`, held open by a [`Delivery`], as participant `index`.
///
/// # Safety
///
/// As `Letter::open`: `letter` lives until its broadcast saw every index it posted opened.
pub(crate) unsafe fn post(mailbox: &Mailbox, letter: &(dyn Letter + '_), index: usize) {
    // SAFETY: the lifetime is erased for the mailbox only; the caller keeps the letter
    // alive until it was opened (this function's `# Safety`).
    let letter: *const (dyn Letter + 'static) = unsafe { std::mem::transmute(letter) };
    mailbox.post(Mail::Borrowed { letter, index });
}

sync::const_thread_local! {
    /// This thread's own mailbox, if it is a helper (in a child forked since the mailbox
    /// was made, the parent's mailbox is not this thread's to read: `own`).
    static OWN: RefCell<Option<Arc<Mailbox>>> = RefCell::new(None);
}

/// Forgets the thread's own mailbox (its helper stops).
pub(crate) fn forget_own() {
    let own = OWN.try_with(|own| own.borrow_mut().take());
    drop(own);
}

/// This thread's own mailbox, if it is a helper of the current fork generation (none in
/// a thread-local's destructor run after the mailbox's own was dropped).
pub(crate) fn own() -> Option<Arc<Mailbox>> {
    OWN.try_with(|own| {
        own.borrow()
            .as_ref()
            .filter(|mailbox| mailbox.generation == fork::generation())
            .cloned()
    })
    .ok()
    .flatten()
}

/// Opens the letters waiting for this thread, if it is a helper with any: whether there
/// were any (`yield_now`).
pub(crate) fn open_own() -> bool {
    own().is_some_and(|own| own.open_all())
}
