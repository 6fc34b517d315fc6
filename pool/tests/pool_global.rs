//! rayon's builder names: `ThreadPoolBuilder::new().num_threads(n).build_global()` makes the
//! default pool n threads wide, once; a second call, or one after the default pool was
//! built, fails saying so and builds nothing; it takes precedence over a maker offered
//! before, whose re-entry panics. One test: the default pool is per process.
#![cfg(not(rayforce_loom))] // real threads; the loom models are in src/tests

use rayforce_pool::prelude::*;
use rayforce_pool::{Pool, ThreadPoolBuildError, ThreadPoolBuilder};

/// A maker that needs the default pool it makes.
fn reentrant_maker() -> &'static Pool {
    let width = rayforce_pool::current_num_threads();
    unreachable!("the maker's own parallel operation returned {width}");
}

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

    assert!(Pool::set_default_maker(reentrant_maker));
    let reentered = std::panic::catch_unwind(rayforce_pool::current_num_threads);
    let payload = reentered.expect_err("the maker's re-entry panics");
    let message = payload.downcast_ref::<&str>().unwrap();
    assert!(message.contains("set_default_maker"), "{message}");

    ThreadPoolBuilder::new()
        .num_threads(3)
        .build_global()
        .unwrap();
    assert!(
        !Pool::set_default_maker(reentrant_maker),
        "the default pool is settled"
    );
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
