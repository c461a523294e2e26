//! Three-input elementwise selection (`where_`) and the comparisons and clean-ups built
//! on it and the binary ops: clip, nan_to_num, isclose, allclose, array_equal, divmod.

use crate::array::Array;
use crate::backend::cpu::ternary::select as select_kernel;
use crate::backend::Tensor;
use crate::dtype::{finfo, DType};
use crate::element::Scalar;
use crate::error::{Error, Result};
use crate::ops::batching::batch_to_front;
use crate::ops::binary::{
    equal, floor_divide, logical_and, logical_or, maximum, minimum, remainder,
};
use crate::ops::cast::astype;
use crate::ops::creation::zeros_like;
use crate::ops::eager::{own, record_elementwise};
use crate::ops::exported::ExportedAs;
use crate::ops::operand::{to_arrays, Operand};
use crate::ops::unary::{abs, imag, isnan, isneginf, isposinf, logical_not, real};
use crate::ops::view::{broadcast_to, broadcast_with};
use crate::primitive::{Export, MlxNode, OutputSpec, Primitive};
use crate::shape::broadcast_shapes;

pub(crate) struct Select;

impl Primitive for Select {
    fn name(&self) -> &'static str {
        "select"
    }

    fn is_elementwise(&self) -> bool {
        true
    }

    fn output_shapes(&self, inputs: &[OutputSpec]) -> Result<Vec<Vec<usize>>> {
        crate::primitive::same_shape(inputs)
    }

    fn export(&self, inputs: &[OutputSpec], outputs: &[OutputSpec]) -> Result<Export> {
        MlxNode::single("Select", vec![], inputs, outputs)
    }

    fn eval(&self, inputs: Vec<Tensor>, _: &[OutputSpec]) -> Result<Vec<Tensor>> {
        Ok(vec![select_kernel(&inputs[0], &inputs[1], &inputs[2])?])
    }

    /// The condition routes the cotangent to the input it selected; the (bool) condition
    /// itself gets none.
    fn vjp(
        &self,
        inputs: &[Array],
        _: &[Array],
        cotangents: &[Array],
        argnums: &[usize],
    ) -> Result<Vec<Array>> {
        let (cond, g) = (&inputs[0], &cotangents[0]);
        argnums
            .iter()
            .map(|&i| match i {
                1 => where_(cond, g, 0.0),
                2 => where_(cond, 0.0, g),
                _ => zeros_like(cond),
            })
            .collect()
    }

    fn jvp(&self, inputs: &[Array], tangents: &[Array], argnums: &[usize]) -> Result<Vec<Array>> {
        let tangent = |i: usize| match argnums.iter().position(|&a| a == i) {
            Some(k) => Ok(tangents[k].clone()),
            None => zeros_like(&inputs[i]),
        };
        Ok(vec![where_(&inputs[0], tangent(1)?, tangent(2)?)?])
    }

    fn vmap(
        &self,
        inputs: &[Array],
        axes: &[Option<usize>],
    ) -> Result<(Vec<Array>, Vec<Option<usize>>)> {
        // With batch axes in front, unbatched inputs broadcast against the batched ones.
        let front = |i: usize| batch_to_front(&inputs[i], axes[i]);
        Ok((
            vec![where_(front(0)?, front(1)?, front(2)?)?],
            vec![Some(0)],
        ))
    }
}

/// Elementwise `x` where `condition` is true (nonzero), else `y` — MLX's `where`
/// (`where` is a Rust keyword). `x` and `y` promote like a binary op, with scalars
/// weakly typed; all three broadcast together.
///
/// ```
/// use lazulite::{where_, Array, DType};
/// let c = Array::from_slice(&[true, false], &[2]).unwrap();
/// let r = where_(&c, 1, 2.5).unwrap();
/// assert_eq!((r.dtype(), r.to_vec::<f32>().unwrap()), (DType::Float32, vec![1.0, 2.5]));
/// ```
pub fn where_(
    condition: impl Into<Operand>,
    x: impl Into<Operand>,
    y: impl Into<Operand>,
) -> Result<Array> {
    let (cond, _) = to_arrays("where", &[condition.into()])?;
    let (values, dtype) = to_arrays("where", &[x.into(), y.into()])?;
    let shape = broadcast_shapes(cond[0].shape(), values[0].shape())
        .and_then(|s| broadcast_shapes(&s, values[1].shape()))?;
    let inputs = vec![
        broadcast_with(
            &astype(&cond[0], DType::Bool)?,
            &shape,
            &[&values[0], &values[1]],
            0,
        )?,
        broadcast_with(
            &astype(&values[0], dtype)?,
            &shape,
            &[&cond[0], &values[1]],
            0,
        )?,
        broadcast_with(
            &astype(&values[1], dtype)?,
            &shape,
            &[&cond[0], &values[0]],
            0,
        )?,
    ];
    Ok(record_elementwise(
        Select,
        inputs,
        OutputSpec { shape, dtype },
        own,
    ))
}

/// `a` limited to `[a_min, a_max]` (either bound may be absent, not both): the
/// maximum with `a_min`, then the minimum with `a_max`, promoting like those (NaN stays).
///
/// ```
/// use lazulite::{clip, Array};
/// let a = Array::from_slice(&[-2i32, 0, 5], &[3]).unwrap();
/// assert_eq!(clip(&a, None, Some(3.into())).unwrap().to_vec::<i32>().unwrap(), vec![-2, 0, 3]);
/// assert_eq!(clip(&a, Some(0.5.into()), Some(3.5.into())).unwrap().to_vec::<f32>().unwrap(), vec![0.5, 0.5, 3.5]);
/// ```
pub fn clip(a: &Array, a_min: Option<Operand>, a_max: Option<Operand>) -> Result<Array> {
    if a_min.is_none() && a_max.is_none() {
        return Err(Error::value(
            "[clip] At most one of a_min and a_max may be None",
        ));
    }
    let mut out = a.clone();
    if let Some(lo) = a_min {
        out = maximum(&out, lo)?;
    }
    if let Some(hi) = a_max {
        out = minimum(&out, hi)?;
    }
    Ok(out)
}

/// `a` with NaN replaced by `nan`, +inf by `posinf` and -inf by `neginf` (default: the
/// largest and lowest finite values of the dtype). Integer and bool arrays are returned
/// as they are; complex arrays are cleaned in their real and imaginary parts (NumPy).
///
/// ```
/// use lazulite::{nan_to_num, Array};
/// let a = Array::from_slice(&[f32::NAN, f32::INFINITY, -1.0], &[3]).unwrap();
/// let r = nan_to_num(&a, 0.0, None, Some(-9.0)).unwrap().to_vec::<f32>().unwrap();
/// assert_eq!(r, vec![0.0, f32::MAX, -1.0]);
/// ```
pub fn nan_to_num(a: &Array, nan: f64, posinf: Option<f64>, neginf: Option<f64>) -> Result<Array> {
    let dtype = a.dtype();
    if !dtype.is_inexact() {
        return Ok(a.clone());
    }
    if dtype.is_complex() {
        let re = nan_to_num(&real(a)?, nan, posinf, neginf)?;
        let im = nan_to_num(&imag(a)?, nan, posinf, neginf)?;
        let im = crate::ops::binary::multiply(&im, Scalar::Complex(0.0, 1.0))?;
        return crate::ops::binary::add(&re, &im);
    }
    let info = finfo(dtype)
        .ok_or_else(|| Error::type_error(format!("[nan_to_num] No finite range for {dtype}.")))?;
    let out = where_(isnan(a)?, Scalar::Float(nan), a)?;
    let out = where_(
        isposinf(a)?,
        Scalar::Float(posinf.unwrap_or(info.max)),
        &out,
    )?;
    where_(
        isneginf(a)?,
        Scalar::Float(neginf.unwrap_or(info.min)),
        &out,
    )
}

/// Elementwise `|a - b| <= atol + rtol * |b|`, where infinities are close only to the
/// same infinity and NaN only to NaN when `equal_nan`.
///
/// ```
/// use lazulite::{isclose, Array};
/// let a = Array::from_slice(&[1.0f32, f32::NAN], &[2]).unwrap();
/// let b = Array::from_slice(&[1.000001f32, f32::NAN], &[2]).unwrap();
/// assert_eq!(isclose(&a, &b, 1e-5, 1e-8, false).unwrap().to_vec::<bool>().unwrap(), vec![true, false]);
/// assert_eq!(isclose(&a, &b, 1e-5, 1e-8, true).unwrap().to_vec::<bool>().unwrap(), vec![true, true]);
/// ```
pub fn isclose(a: &Array, b: &Array, rtol: f64, atol: f64, equal_nan: bool) -> Result<Array> {
    let diff = abs(&crate::ops::binary::subtract(a, b)?)?;
    let tolerance = crate::ops::binary::add(crate::ops::binary::multiply(abs(b)?, rtol)?, atol)?;
    let close = crate::ops::binary::less_equal(&diff, &tolerance)?;
    let any_inf = logical_or(crate::ops::unary::isinf(a)?, crate::ops::unary::isinf(b)?)?;
    let same_inf = logical_or(
        logical_and(isposinf(a)?, isposinf(b)?)?,
        logical_and(isneginf(a)?, isneginf(b)?)?,
    )?;
    let out = logical_or(logical_and(close, logical_not(&any_inf)?)?, same_inf)?;
    if equal_nan {
        return logical_or(out, logical_and(isnan(a)?, isnan(b)?)?);
    }
    Ok(out)
}

/// Whether all of `x` is true, as a 0-d bool array.
fn all_true(x: &Array) -> Result<Array> {
    crate::ops::reduce::all(x, crate::shape::Axes::All, false)
}

/// Whether every element of `a` and `b` (broadcast) is [`isclose`], as a 0-d bool array.
///
/// ```
/// use lazulite::{allclose, Array};
/// let a = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
/// assert!(allclose(&a, &a, 1e-5, 1e-8, false).unwrap().item::<bool>().unwrap());
/// ```
pub fn allclose(a: &Array, b: &Array, rtol: f64, atol: f64, equal_nan: bool) -> Result<Array> {
    all_true(&isclose(a, b, rtol, atol, equal_nan)?)
}

/// Whether `a` and `b` have the same shape and equal elements (after promotion), as a
/// 0-d bool array; NaNs are equal to each other when `equal_nan`.
///
/// ```
/// use lazulite::{array_equal, Array};
/// let a = Array::from_slice(&[1i32, 2], &[2]).unwrap();
/// let b = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
/// assert!(array_equal(&a, &b, false).unwrap().item::<bool>().unwrap());
/// ```
pub fn array_equal(a: impl Into<Operand>, b: impl Into<Operand>, equal_nan: bool) -> Result<Array> {
    let (arrays, _) = to_arrays("array_equal", &[a.into(), b.into()])?;
    let (a, b) = (&arrays[0], &arrays[1]);
    if a.shape() != b.shape() {
        return Ok(Array::scalar(false));
    }
    let mut same = equal(a, b)?;
    if equal_nan {
        same = logical_or(same, logical_and(isnan(a)?, isnan(b)?)?)?;
    }
    all_true(&same)
}

/// `(floor_divide(a, b), remainder(a, b))`.
///
/// ```
/// use lazulite::{divmod, Array};
/// let a = Array::from_slice(&[-7i32, 7], &[2]).unwrap();
/// let (q, r) = divmod(&a, 3).unwrap();
/// assert_eq!((q.to_vec::<i32>().unwrap(), r.to_vec::<i32>().unwrap()), (vec![-3, 2], vec![2, 1]));
/// ```
pub fn divmod(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<(Array, Array)> {
    let (a, b) = (a.into(), b.into());
    let (arrays, dtype) = to_arrays("divmod", &[a.clone(), b.clone()])?;
    if dtype.is_complex() {
        return Err(Error::value("[divmod] Complex type not supported."));
    }
    if !crate::ops::trace::in_export_trace() {
        return Ok((floor_divide(a.clone(), b.clone())?, remainder(a, b)?));
    }
    // MLX's `DivMod` of both operands in their common dtype, broadcast together.
    let shape = broadcast_shapes(arrays[0].shape(), arrays[1].shape())?;
    let inputs = arrays
        .iter()
        .map(|x| broadcast_to(&astype(x, dtype)?, &shape))
        .collect::<Result<Vec<_>>>()?;
    let composed = |x: &[Array]| Ok(vec![floor_divide(&x[0], &x[1])?, remainder(&x[0], &x[1])?]);
    let mut out = ExportedAs::apply("divmod", "DivMod", || Ok(vec![]), inputs, composed)?;
    let r = out.pop().expect("two outputs");
    Ok((out.pop().expect("two outputs"), r))
}
