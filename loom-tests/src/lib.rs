//! Loom models of the rayforce-pool signalling, through its public API: see `tests/`.
//! They compile only under `RUSTFLAGS="--cfg rayforce_loom"`; `loom-tests/check.sh` runs
//! them, then shows they catch each deliberately broken pool listed in
//! `pool/src/broken.rs`.
