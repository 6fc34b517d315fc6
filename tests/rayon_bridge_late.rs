//! The rayon bridge after rayon's global pool was already used: `init_rayon_global` returns
//! an error naming the problem, changes nothing, and the program carries on.
#![cfg(target_os = "linux")]

use rayforce_rt::cpu::CpuPolicy;
use rayforce_rt::Runtime;

#[global_allocator]
static RT: Runtime = Runtime::new(CpuPolicy::Physical);

#[test]
fn a_call_after_rayon_was_used_is_an_error_the_program_survives() {
    // Any rayon call builds rayon's own global pool, sized by rayon.
    let (a, b) = rayon::join(|| 1, || 2);
    assert_eq!(a + b, 3);
    let rayon_width = rayon::current_num_threads();
    let err = RT
        .init_rayon_global()
        .expect_err("rayon's global pool already exists");
    let message = err.to_string();
    assert!(message.contains("already"), "{message}");
    assert!(message.contains("before any rayon call"), "{message}");
    assert_eq!(rayon::current_num_threads(), rayon_width, "nothing changed");
    assert_eq!(RT.rayon_threads(), None, "not built by the runtime");
    let (a, b) = rayon::join(|| 40, || 2);
    assert_eq!(a + b, 42, "the program carries on");
}
