//! rayforce-rt
