//! `rayforce_rt::join` from threads that belong to another runtime: a rayon worker (inside
//! rayon's own `join`), where it runs on the default pool (rayon's thread is in no pool of
//! ours), and from inside a runtime pool's task, where it runs on that pool.

use rayforce_rt::Pool;

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = rayforce_rt::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

#[test]
fn a_join_from_a_rayon_worker_is_exact() {
    let rayon = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let (a, b) = rayon.install(|| rayon::join(|| fib(18), || fib(17)));
    assert_eq!((a, b), (2584, 1597));
    let widths = rayon.install(|| {
        rayon::join(
            rayforce_rt::current_num_threads,
            rayforce_rt::current_num_threads,
        )
    });
    assert!(widths.0 >= 1 && widths.0 == widths.1, "{widths:?}");
}

#[test]
fn a_join_inside_a_pool_task_runs_on_that_pool() {
    let pool = Pool::builder().workers(3).build().unwrap();
    let results = std::sync::Mutex::new(Vec::new());
    pool.dispatch(4, |task| {
        let width = rayforce_rt::current_num_threads();
        results.lock().unwrap().push((fib(12 + task as u64), width));
    });
    let mut results = results.into_inner().unwrap();
    results.sort_unstable();
    assert_eq!(results, [(144, 3), (233, 3), (377, 3), (610, 3)]);
}
