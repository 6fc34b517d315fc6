//! `broadcast` (README "Broadcasts"): the helper runs its call on its own thread once,
//! whether it is asleep, about to sleep or not yet started when the letter is posted, and
//! also when the pool narrows it away with the letter waiting; two helpers broadcasting to
//! each other open each other's letters while they wait.

use super::{pool, small};
use crate::sync::thread;

#[test]
fn a_broadcast_runs_once_on_the_caller_and_once_on_the_helper() {
    crate::sync::model(|| {
        let pool = pool();
        let caller = thread::current().id();
        let ran = pool.broadcast(|ctx| (ctx.index(), ctx.num_threads(), thread::current().id()));
        assert_eq!(ran.len(), 2);
        assert_eq!(ran[0], (0, 2, caller));
        assert_eq!((ran[1].0, ran[1].1), (1, 2));
        assert_ne!(ran[1].2, caller, "index 1 runs on the helper");
    });
}

#[test]
fn a_letter_posted_before_the_pool_narrows_is_opened_by_the_parked_helper() {
    crate::sync::model(|| {
        let pool = pool();
        let ran = pool.broadcast(|ctx| {
            if ctx.index() == 0 {
                pool.resize(1, 1); // after the letter was posted: its helper parks
            }
            ctx.index()
        });
        assert_eq!(ran, [0, 1]);
    });
}

#[test]
fn broadcasts_from_the_helpers_into_each_others_mailboxes_finish() {
    crate::sync::model(|| {
        // Two helpers: each one's call broadcasts to the other, and waits for it in its
        // own mailbox meanwhile.
        let pool = small().workers(3).build().unwrap();
        let nested = pool.broadcast(|ctx| {
            if ctx.index() == 0 {
                0
            } else {
                crate::broadcast(|inner| inner.index()).len()
            }
        });
        assert_eq!(nested, [0, 2, 2]);
    });
}
