//! Function transforms: interpreters over the recorded graph driven by each primitive's
//! `vjp`, `jvp` and `vmap` rules. They compose to any depth because every rule builds
//! ordinary lazy arrays.

mod compile;
mod custom;
mod graph;
mod jvp;
mod tracer;
mod tree;
mod vjp;
mod vmap;

pub use compile::{compile, compile_shapeless, set_compile_enabled, Compiled};
pub(crate) use custom::Fused;
pub use custom::{checkpoint, custom_function, CustomFunction};
pub use jvp::jvp;
pub use tree::Tree;
pub use vjp::{value_and_grad_argnums, vjp};
pub use vmap::vmap;

use crate::array::Array;
use crate::error::Result;

/// `f`'s value and its gradient with respect to its (tree-structured) argument.
///
/// ```
/// use lazulite::{value_and_grad, Array};
/// let f = value_and_grad(|x: &Array| x.square());
/// let (v, g) = f(&Array::scalar(3.0f32)).unwrap();
/// assert_eq!((v.item::<f32>().unwrap(), g.item::<f32>().unwrap()), (9.0, 6.0));
/// ```
pub fn value_and_grad<P, F>(f: F) -> impl Fn(&P) -> Result<(Array, P)>
where
    P: Tree,
    F: Fn(&P) -> Result<Array>,
{
    move |params: &P| {
        let leaves = params.flatten();
        let argnums: Vec<usize> = (0..leaves.len()).collect();
        let (outs, grads) = value_and_grad_argnums(
            |traced| Ok(vec![f(&params.rebuild(&mut traced.iter().cloned())?)?]),
            &leaves,
            &argnums,
        )?;
        let value = outs.into_iter().next().expect("one output");
        Ok((value, params.rebuild(&mut grads.into_iter())?))
    }
}

/// Like [`value_and_grad`] for a function that also returns auxiliary data, returned as
/// it is and not differentiated (MLX: the extra outputs of a function returning a tuple).
///
/// ```
/// use lazulite::{value_and_grad_aux, Array};
/// let f = value_and_grad_aux(|x: &Array| Ok((x.square()?, x.exp()?)));
/// let ((v, aux), g) = f(&Array::scalar(1.0f32)).unwrap();
/// assert_eq!(g.item::<f32>().unwrap(), 2.0);
/// # let _ = (v, aux);
/// ```
pub fn value_and_grad_aux<P, A, F>(f: F) -> impl Fn(&P) -> Result<((Array, A), P)>
where
    P: Tree,
    A: Tree,
    F: Fn(&P) -> Result<(Array, A)>,
{
    move |params: &P| {
        let leaves = params.flatten();
        let argnums: Vec<usize> = (0..leaves.len()).collect();
        let mut aux_template: Option<A> = None;
        let (outs, grads) = value_and_grad_argnums(
            |traced| {
                let (value, aux) = f(&params.rebuild(&mut traced.iter().cloned())?)?;
                let mut outs = vec![value];
                aux.leaves(&mut outs);
                aux_template = Some(aux);
                Ok(outs)
            },
            &leaves,
            &argnums,
        )?;
        let aux_template = aux_template.expect("the function ran");
        let mut outs = outs.into_iter();
        let value = outs.next().expect("one output");
        let aux = aux_template.rebuild(&mut outs)?;
        Ok(((value, aux), params.rebuild(&mut grads.into_iter())?))
    }
}

/// The gradient of a scalar function with respect to its (tree-structured) argument.
///
/// ```
/// use lazulite::{grad, Array};
/// // Seed: the derivative of sin is cos, and grad composes.
/// let d2 = grad(grad(|x: &Array| x.sin()));
/// let x = Array::scalar(std::f32::consts::FRAC_PI_2);
/// assert!((d2(&x).unwrap().item::<f32>().unwrap() + 1.0).abs() < 1e-6);
/// ```
pub fn grad<P, F>(f: F) -> impl Fn(&P) -> Result<P>
where
    P: Tree,
    F: Fn(&P) -> Result<Array>,
{
    let vg = value_and_grad(f);
    move |params: &P| vg(params).map(|(_, g)| g)
}
