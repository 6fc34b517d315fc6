//! rayon's thread settings on the builder: `thread_name(f)` names helper k `f(k)` (the
//! pool's thread k, from 1), also a wide helper started later; `stack_size(n)` gives every
//! helper a stack of `n` bytes; `start_handler` is `on_thread_start`; a name with a NUL
//! byte fails the build; a start hook's panic goes to the panic handler (without one it
//! fails the build); `exit_handler` runs on each helper as the dropped pool stops it,
//! its panic going to the panic handler; `current_thread_index` is a helper's k, the
//! caller's 0, and `None` outside the pool. A builder prints its settings, a
//! `ForkOnceCell` its value once set.
#![cfg(not(rayforce_loom))] // real threads; the loom models are in src/tests

use rayforce_pool::ThreadPoolBuilder;
use std::sync::{Arc, Mutex};

/// What each helper's start hook saw: its index and its thread's name, sorted.
type Seen = Arc<Mutex<Vec<(usize, Option<String>)>>>;

fn recording(seen: &Seen) -> impl Fn(usize) + Send + Sync + 'static {
    let seen = Arc::clone(seen);
    move |k| {
        let name = std::thread::current().name().map(String::from);
        seen.lock().unwrap().push((k, name));
    }
}

fn sorted(seen: &Seen) -> Vec<(usize, Option<String>)> {
    let mut seen = seen.lock().unwrap().clone();
    seen.sort();
    seen
}

#[test]
fn helpers_are_named_as_thread_name_says_also_those_started_later() {
    let seen = Seen::default();
    let pool = ThreadPoolBuilder::new()
        .num_threads(3)
        .wide_workers(4)
        .thread_name(|k| format!("crunch-{k}"))
        .start_handler(recording(&seen))
        .build()
        .unwrap();
    let named = |k: usize| (k, Some(format!("crunch-{k}")));
    assert_eq!(sorted(&seen), [named(1), named(2)]);
    // The wide helper starts on the first wide dispatch, named from the list made at build.
    pool.dispatch_wide(4, |_| ());
    assert_eq!(sorted(&seen), [named(1), named(2), named(3)]);

    // Without it, helpers keep the pool's own names.
    let seen = Seen::default();
    let plain = ThreadPoolBuilder::new()
        .num_threads(2)
        .start_handler(recording(&seen))
        .build()
        .unwrap();
    assert_eq!(sorted(&seen), [(1, Some("rayforce-1".to_string()))]);
    drop((pool, plain));
}

#[test]
fn current_thread_index_is_a_helpers_k_the_callers_0_and_none_outside() {
    let pool = ThreadPoolBuilder::new()
        .num_threads(3)
        .thread_name(|k| format!("helper-{k}"))
        .build()
        .unwrap();
    let other = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let caller = std::thread::current().id();
    let seen = Mutex::new(Vec::new());
    pool.dispatch(64, |_| {
        // Long enough that the helpers take tasks too.
        std::thread::sleep(std::time::Duration::from_micros(200));
        let name = std::thread::current().name().map(String::from);
        let on_caller = std::thread::current().id() == caller;
        let index = rayforce_pool::current_thread_index();
        let in_other = other.install(|| {
            (
                rayforce_pool::current_thread_index(),
                pool.current_thread_index(),
            )
        });
        seen.lock().unwrap().push((
            on_caller,
            name,
            index,
            pool.current_thread_index(),
            in_other,
        ));
    });
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), 64);
    assert!(seen.iter().any(|task| !task.0), "no helper took a task");
    for (on_caller, name, index, pool_index, in_other) in seen {
        let expected = if on_caller {
            0
        } else {
            let name = name.expect("a helper is named");
            name["helper-".len()..].parse().unwrap()
        };
        assert!(expected < 3, "index {expected} of a 3-thread pool");
        assert_eq!(
            index,
            Some(expected),
            "on {}",
            if on_caller { "the caller" } else { "a helper" }
        );
        assert_eq!(pool_index, Some(expected));
        // Inside another pool's install, the thread is that pool's caller, not in this pool.
        assert_eq!(in_other, (Some(0), None));
    }
    assert_eq!(rayforce_pool::current_thread_index(), None);
    assert_eq!(pool.current_thread_index(), None);
    assert_eq!(pool.install(|| pool.current_thread_index()), Some(0));
    assert_eq!(pool.install(|| other.current_thread_index()), None);
}

#[test]
fn a_start_hooks_panic_goes_to_the_panic_handler_and_the_helper_serves() {
    // rayon-core's `handler_panics_handled_correctly`, for the start hook: with a panic
    // handler the build succeeds and every helper serves; without one it fails.
    let (tx, rx) = std::sync::mpsc::channel();
    let tx = Mutex::new(tx);
    let pool = ThreadPoolBuilder::new()
        .num_threads(4)
        .start_handler(|k| panic!("start hook of helper {k}"))
        .panic_handler(move |payload| {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_default();
            tx.lock().unwrap().send(message).unwrap();
        })
        .build()
        .expect("a start hook's panic goes to the handler");
    let mut seen: Vec<String> = rx.iter().take(3).collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            "start hook of helper 1",
            "start hook of helper 2",
            "start hook of helper 3"
        ]
    );
    assert_eq!(pool.width(), 4);
    assert!(pool.stats().start_error.is_none());
    let unhandled = ThreadPoolBuilder::new()
        .num_threads(2)
        .start_handler(|_| panic!("no handler"))
        .build();
    assert!(unhandled.is_err(), "without a handler the build fails");
}

#[test]
fn a_thread_name_with_a_nul_byte_fails_the_build_naming_it() {
    let err = ThreadPoolBuilder::new()
        .num_threads(3)
        .thread_name(|k| {
            if k == 2 {
                "bad\0name".into()
            } else {
                format!("ok-{k}")
            }
        })
        .build()
        .expect_err("a NUL byte in a name");
    assert!(
        matches!(&err, rayforce_pool::BuildError::ThreadName { helper: 2, name } if name == "bad\0name"),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("thread_name(2)") && message.contains("NUL"),
        "{message}"
    );
}

#[test]
fn helpers_get_the_stack_size_asked_for() {
    // 16 MiB of locals on each helper as it starts: past the 2 MiB `std` gives a thread
    // by default (which would end the test process with a stack overflow).
    let deep = |_k: usize| {
        let locals = [1u8; 16 << 20];
        assert_eq!(
            std::hint::black_box(&locals)
                .iter()
                .map(|&b| usize::from(b))
                .sum::<usize>(),
            16 << 20
        );
    };
    let pool = ThreadPoolBuilder::new()
        .num_threads(3)
        .stack_size(64 << 20)
        .start_handler(deep)
        .build();
    assert_eq!(pool.unwrap().current_num_threads(), 3);
}

#[test]
fn exit_handler_runs_on_each_helper_as_it_stops_and_its_panic_goes_to_the_handler() {
    let (exited, exits) = std::sync::mpsc::channel();
    let exited = Mutex::new(exited);
    let (panics, caught) = std::sync::mpsc::channel();
    let panics = Mutex::new(panics);
    let pool = ThreadPoolBuilder::new()
        .num_threads(3)
        .wide_workers(4)
        .thread_name(|k| format!("crunch-{k}"))
        .exit_handler(move |k| {
            let name = std::thread::current().name().map(String::from);
            exited.lock().unwrap().send((k, name)).unwrap();
            assert_ne!(k, 2, "helper 2's exit hook panics");
        })
        .panic_handler(move |payload| panics.lock().unwrap().send(payload).unwrap())
        .build()
        .unwrap();
    pool.dispatch_wide(4, |_| ());
    assert!(exits.try_recv().is_err(), "no helper stopped yet");
    drop(pool);
    let patience = std::time::Duration::from_secs(30);
    let mut seen: Vec<_> = (0..3)
        .map(|_| exits.recv_timeout(patience).unwrap())
        .collect();
    seen.sort();
    let named = |k: usize| (k, Some(format!("crunch-{k}")));
    assert_eq!(seen, [named(1), named(2), named(3)]);
    let payload = caught
        .recv_timeout(patience)
        .expect("helper 2's panic was handled");
    assert!(payload
        .downcast_ref::<String>()
        .unwrap()
        .contains("exit hook panics"));
    assert!(caught.recv_timeout(patience).is_err(), "one panic");
}

#[test]
fn rayon_exit_callback_called() {
    // rayon-core's `exit_callback_called`, its counts those of this pool (16 threads, the
    // caller one of them), the drop on a thread of its own: each exit hook waits for the
    // test's thread, so the drop must not wait for the hooks.
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Barrier;
    let n_threads = 16;
    let n_called = Arc::new(AtomicUsize::new(0));
    // Wait for all the pool's helpers plus the one running tests.
    let barrier = Arc::new(Barrier::new(n_threads));

    let b = Arc::clone(&barrier);
    let nc = Arc::clone(&n_called);
    let exit_handler = move |_| {
        nc.fetch_add(1, Ordering::SeqCst);
        b.wait();
    };

    let conf = ThreadPoolBuilder::new()
        .num_threads(n_threads)
        .exit_handler(exit_handler);
    // Dropped on a thread of its own, and waited for with a deadline: a drop that waited
    // for the hooks would hang them all, waiting for this thread.
    let (dropped, drop_returned) = std::sync::mpsc::channel();
    let pool = conf.build().unwrap();
    std::thread::spawn(move || {
        // Drop the pool so it stops the running threads.
        drop(pool);
        dropped.send(()).unwrap();
    });
    drop_returned
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the drop returned without waiting for the exit hooks");

    // Wait for all the threads to have been scheduled to run.
    barrier.wait();

    // The handler must have been called on every exiting thread.
    assert_eq!(n_called.load(Ordering::SeqCst), n_threads - 1);
}

#[test]
fn a_builder_and_a_fork_once_cell_print_what_they_hold() {
    let builder = ThreadPoolBuilder::new().num_threads(3).exit_handler(|_| ());
    let printed = format!("{builder:?}");
    assert!(printed.contains("workers: Some(3)"), "{printed}");
    assert!(printed.contains("on_thread_exit: true"), "{printed}");
    assert!(printed.contains("panic_handler: false"), "{printed}");

    let cell = rayforce_pool::ForkOnceCell::new();
    assert_eq!(format!("{cell:?}"), "ForkOnceCell(<uninit>)");
    cell.get_or_init(|| 7);
    assert_eq!(format!("{cell:?}"), "ForkOnceCell(7)");
}
