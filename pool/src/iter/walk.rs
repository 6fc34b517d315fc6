//! `iter::walk_tree_prefix(root, children_of)` and `walk_tree_postfix`: the nodes of a tree
//! in prefix order (each before its children) or postfix order (each after them), as
//! rayon's. The walk runs on the consumer's caller, one node at a time (rayon walks
//! subtrees in parallel); the nodes, in order, are then a computed source whose consumer
//! runs in parallel.

use super::computed::{sealed::Make, Computed};

/// `iter::walk_tree_prefix(root, children_of)`: the nodes, each before its children.
pub type WalkTreePrefix<S, B> = Computed<Walking<S, B, true>>;
/// `iter::walk_tree_postfix(root, children_of)`: the nodes, each after its children.
pub type WalkTreePostfix<S, B> = Computed<Walking<S, B, false>>;

/// `iter::walk_tree(root, children_of)`: the nodes, in an order not promised (here, each
/// before its children).
pub type WalkTree<S, B> = WalkTreePrefix<S, B>;

/// The nodes of the tree under `root`, in an order not promised, as rayon's `walk_tree`
/// (here [`walk_tree_prefix`]'s).
///
/// ```
/// use rayforce_pool::prelude::*;
/// let mut all: Vec<u32> = rayforce_pool::iter::walk_tree(1u32, |&n| (n < 8).then_some(n * 2))
///     .collect();
/// all.sort_unstable();
/// assert_eq!(all, [1, 2, 4, 8]);
/// ```
pub fn walk_tree<S, B, I>(root: S, children_of: B) -> WalkTree<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
{
    walk_tree_prefix(root, children_of)
}

/// The nodes of the tree under `root`, each before its children (`children_of(&node)`, in
/// their order).
///
/// ```
/// use rayforce_pool::prelude::*;
/// // The tree of ranges: a range's children are its two halves, past its first item.
/// let firsts: Vec<u32> = rayforce_pool::iter::walk_tree_prefix(0u32..7, |r| {
///     let mid = (r.start + 1 + r.end) / 2;
///     [r.start + 1..mid, mid..r.end].into_iter().filter(|r| !r.is_empty())
/// })
/// .map(|r| r.start)
/// .collect();
/// assert_eq!(firsts, [0, 1, 2, 3, 4, 5, 6]);
/// ```
pub fn walk_tree_prefix<S, B, I>(root: S, children_of: B) -> WalkTreePrefix<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
{
    Computed::new(Walking { root, children_of })
}

/// The nodes of the tree under `root`, each after its children (`children_of(&node)`, in
/// their order).
///
/// ```
/// use rayforce_pool::prelude::*;
/// let lasts: Vec<u32> = rayforce_pool::iter::walk_tree_postfix(0u32..7, |r| {
///     let mid = (r.start + r.end - 1) / 2;
///     [r.start..mid, mid..r.end - 1].into_iter().filter(|r| !r.is_empty())
/// })
/// .map(|r| r.end - 1)
/// .collect();
/// assert_eq!(lasts, [0, 1, 2, 3, 4, 5, 6]);
/// ```
pub fn walk_tree_postfix<S, B, I>(root: S, children_of: B) -> WalkTreePostfix<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
{
    Computed::new(Walking { root, children_of })
}

/// How a tree walk's nodes are made: `PREFIX`, each node before its children, else after.
#[derive(Clone)]
pub struct Walking<S, B, const PREFIX: bool> {
    root: S,
    children_of: B,
}

impl<S: std::fmt::Debug, B, const PREFIX: bool> std::fmt::Debug for Walking<S, B, PREFIX> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Walking")
            .field("prefix", &PREFIX)
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

/// A node to visit (emit, in prefix order, and push its children), or one whose children
/// were all emitted (emit, in postfix order).
enum Step<S> {
    Visit(S),
    Emit(S),
}

impl<S, B, I, const PREFIX: bool> Make for Walking<S, B, PREFIX>
where
    S: Send,
    B: Fn(&S) -> I + Sync + Send,
    I: IntoIterator<Item = S>,
{
    type Item = S;

    fn make(self) -> Vec<S> {
        let mut nodes = Vec::new();
        let mut steps = vec![Step::Visit(self.root)];
        while let Some(step) = steps.pop() {
            match step {
                Step::Emit(node) => nodes.push(node),
                Step::Visit(node) => {
                    let children: Vec<S> = (self.children_of)(&node).into_iter().collect();
                    if PREFIX {
                        nodes.push(node);
                    } else {
                        steps.push(Step::Emit(node));
                    }
                    steps.extend(children.into_iter().rev().map(Step::Visit));
                }
            }
        }
        nodes
    }
}
