//! Loom models of the rayforce-pool signalling, through its public API: see `tests/`.
//! They compile only under `RUSTFLAGS="--cfg rayforce_loom"`; `run-models.sh` runs them,
//! and `check-broken-variants.sh` shows they catch deliberately broken pools.
