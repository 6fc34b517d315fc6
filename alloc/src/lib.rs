//! rayforce-alloc: a `#[global_allocator]` with CPU-policy-sized arenas on mimalloc v3
//! heaps. Not yet implemented: the crate is a placeholder in the workspace layout.
