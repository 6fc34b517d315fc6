//! Loom models of the pool's internals (run with `--cfg rayforce_loom`).

mod signal_model;
