//! rayon's builder names: `ThreadPoolBuilder::new().num_threads(n).build_global()` makes the
//! default pool n threads wide, once; a second call, or one after the default pool was
//! built, fails saying so and builds nothing. One test: the default pool is per process.
#![cfg(not(rayforce_loom))] // real threads; the loom models are in src/tests

use rayforce_pool::prelude::*;
use rayforce_pool::{ThreadPoolBuildError, ThreadPoolBuilder};

#[test]
fn build_global_sets_the_default_pool_once() {
    let pool = ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    assert_eq!(
        pool.current_num_threads(),
        3,
        "num_threads counts the caller"
    );
    let defaulted = ThreadPoolBuilder::new().num_threads(0).build().unwrap();
    assert!(
        defaulted.current_num_threads() >= 1,
        "0 leaves the width to the policy"
    );

    ThreadPoolBuilder::new()
        .num_threads(3)
        .build_global()
        .unwrap();
    assert_eq!(rayforce_pool::current_num_threads(), 3);
    let sum: u64 = (0..1_000_000u64).into_par_iter().sum();
    assert_eq!(sum, 499_999_500_000);
    let again = ThreadPoolBuilder::new().num_threads(2).build_global();
    let err = again.expect_err("the default pool is settled");
    assert!(matches!(
        err,
        ThreadPoolBuildError::GlobalPoolAlreadyInitialized
    ));
    assert!(err.to_string().contains("build_global"), "{err}");
    assert_eq!(rayforce_pool::current_num_threads(), 3);
}
