//! Loom models of the pool's internals (run with `--cfg rayforce_loom`).

mod fork_once_model;
mod ops_model;
mod signal_model;
