//! Loom models of the rayforce-pool signalling, through its public API (in `tests/`).
