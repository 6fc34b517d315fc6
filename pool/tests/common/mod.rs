//! What the panic tests share: a pool of two, and the message of a caught panic.

use rayforce_pool::Pool;

/// A pool of two threads: the caller and one helper.
pub fn pool() -> Pool {
    Pool::builder().workers(2).build().unwrap()
}

/// The message of a caught panic.
pub fn message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}
