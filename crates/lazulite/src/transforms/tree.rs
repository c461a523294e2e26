//! Trees of arrays: containers whose leaves are arrays, so that transforms can take and
//! return structured parameters (a `HashMap` of weights, a tuple, a `Vec` of layers, or a
//! struct of your own that implements [`Tree`]).

use crate::array::Array;
use crate::error::{Error, Result};
use std::collections::{BTreeMap, HashMap};

/// A structure with arrays at its leaves.
///
/// ```
/// use lazulite::{Array, Tree};
/// struct Layer { w: Array, b: Array }
/// impl Tree for Layer {
///     fn leaves(&self, out: &mut Vec<Array>) { self.w.leaves(out); self.b.leaves(out); }
///     fn rebuild(&self, leaves: &mut dyn Iterator<Item = Array>) -> lazulite::Result<Self> {
///         Ok(Layer { w: self.w.rebuild(leaves)?, b: self.b.rebuild(leaves)? })
///     }
/// }
/// ```
pub trait Tree: Sized {
    /// Appends the leaves, in a fixed order.
    ///
    /// ```
    /// use lazulite::{Array, Tree};
    /// let layers = vec![Some(Array::scalar(1.0f32)), None, Some(Array::scalar(2.0f32))];
    /// let mut out = Vec::new();
    /// layers.leaves(&mut out);
    /// assert_eq!(out.len(), 2);
    /// ```
    fn leaves(&self, out: &mut Vec<Array>);
    /// The same structure with its leaves taken, in order, from `leaves`.
    ///
    /// ```
    /// use lazulite::{multiply, Array, Tree};
    /// let params = vec![Array::scalar(1.0f32), Array::scalar(2.0f32)];
    /// let doubled = params.flatten().iter().map(|a| multiply(a, 2)).collect::<lazulite::Result<Vec<_>>>()?;
    /// let rebuilt = params.rebuild(&mut doubled.into_iter())?;
    /// assert_eq!(rebuilt[1].item::<f32>()?, 4.0);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    fn rebuild(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self>;

    /// The leaves as a vector.
    ///
    /// ```
    /// use lazulite::{Array, Tree};
    /// use std::collections::BTreeMap;
    /// let params = BTreeMap::from([
    ///     ("w".to_string(), Array::scalar(1.0f32)),
    ///     ("b".to_string(), Array::scalar(0.0f32)),
    /// ]);
    /// let leaves = params.flatten(); // in key order: b, then w
    /// assert_eq!(leaves[0].item::<f32>()?, 0.0);
    /// # Ok::<(), lazulite::Error>(())
    /// ```
    fn flatten(&self) -> Vec<Array> {
        let mut out = Vec::new();
        self.leaves(&mut out);
        out
    }
}

impl Tree for Array {
    fn leaves(&self, out: &mut Vec<Array>) {
        out.push(self.clone());
    }
    fn rebuild(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Array> {
        leaves
            .next()
            .ok_or_else(|| Error::value("[tree] Fewer leaves than the structure holds."))
    }
}

impl<T: Tree> Tree for Vec<T> {
    fn leaves(&self, out: &mut Vec<Array>) {
        self.iter().for_each(|t| t.leaves(out));
    }
    fn rebuild(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Vec<T>> {
        self.iter().map(|t| t.rebuild(leaves)).collect()
    }
}

impl<T: Tree> Tree for Option<T> {
    fn leaves(&self, out: &mut Vec<Array>) {
        if let Some(t) = self {
            t.leaves(out);
        }
    }
    fn rebuild(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Option<T>> {
        self.as_ref().map(|t| t.rebuild(leaves)).transpose()
    }
}

impl<T: Tree> Tree for BTreeMap<String, T> {
    fn leaves(&self, out: &mut Vec<Array>) {
        self.values().for_each(|t| t.leaves(out));
    }
    fn rebuild(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        self.iter()
            .map(|(k, t)| Ok((k.clone(), t.rebuild(leaves)?)))
            .collect()
    }
}

impl<T: Tree> Tree for HashMap<String, T> {
    fn leaves(&self, out: &mut Vec<Array>) {
        self.values().for_each(|t| t.leaves(out));
    }
    fn rebuild(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        self.iter()
            .map(|(k, t)| Ok((k.clone(), t.rebuild(leaves)?)))
            .collect()
    }
}

macro_rules! tuple_tree {
    ($($name:ident : $idx:tt),*) => {
        impl<$($name: Tree),*> Tree for ($($name,)*) {
            fn leaves(&self, out: &mut Vec<Array>) {
                $(self.$idx.leaves(out);)*
            }
            fn rebuild(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
                Ok(($(self.$idx.rebuild(leaves)?,)*))
            }
        }
    };
}
tuple_tree!(A: 0);
tuple_tree!(A: 0, B: 1);
tuple_tree!(A: 0, B: 1, C: 2);
tuple_tree!(A: 0, B: 1, C: 2, D: 3);
tuple_tree!(A: 0, B: 1, C: 2, D: 3, E: 4);
