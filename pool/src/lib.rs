//! rayforce-pool: a data-parallel worker pool sized by a CPU-count policy. Not yet
//! implemented: the crate is a placeholder in the workspace layout.
