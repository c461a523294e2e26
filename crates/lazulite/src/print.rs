//! Printing arrays the way MLX does: `array([1, 2.5], dtype=float32)`, numbers in C's
//! `%g` style (6 significant digits), axes longer than 6 summarised as `a, b, c, ..., x, y, z`.

use crate::array::Array;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::{dispatch, Complex, Element};
use std::fmt;
use std::sync::atomic::{AtomicI32, Ordering};

static PRECISION: AtomicI32 = AtomicI32::new(-1);

/// Sets how many decimals floats print with; `-1` (the default) prints 6 significant
/// digits in `%g` style, `n >= 0` prints exactly `n` decimals in fixed notation.
///
/// ```
/// use lazulite::{set_printoptions, Array};
/// set_printoptions(2);
/// assert_eq!(Array::scalar(1.0f32 / 3.0).to_string(), "array(0.33, dtype=float32)");
/// set_printoptions(-1);
/// ```
pub fn set_printoptions(precision: i32) {
    PRECISION.store(precision.max(-1), Ordering::Relaxed);
}

/// The current print precision (see [`set_printoptions`]).
///
/// ```
/// assert_eq!(lazulite::get_printoptions(), -1); // the default
/// lazulite::set_printoptions(3);
/// assert_eq!(lazulite::get_printoptions(), 3);
/// lazulite::set_printoptions(-1);
/// ```
pub fn get_printoptions() -> i32 {
    PRECISION.load(Ordering::Relaxed)
}

/// Axes longer than this are summarised.
const SUMMARY_THRESHOLD: usize = 6;
const EDGE_ITEMS: usize = 3;

/// C's `%g` with 6 significant digits.
fn format_g(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    const P: i32 = 6;
    // Exponent after rounding to P significant digits.
    let sci = format!("{:.*e}", (P - 1) as usize, v);
    let (mantissa, exp) = sci.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("exponent digits");
    if !(-4..P).contains(&exp) {
        let m = strip_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", exp.abs())
    } else {
        strip_zeros(&format!("{:.*}", (P - 1 - exp) as usize, v)).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

fn format_float(v: f64) -> String {
    match get_printoptions() {
        p if p >= 0 && v.is_finite() => format!("{:.*}", p as usize, v),
        _ => format_g(v),
    }
}

fn format_complex(z: Complex) -> String {
    let re = format_float(z.re as f64);
    let im = z.im as f64;
    let sign = if im.is_sign_negative() && !im.is_nan() {
        '-'
    } else {
        '+'
    };
    format!("{re}{sign}{}j", format_float(im.abs()))
}

/// One element as MLX prints it.
fn format_element<T: Element>(v: T) -> String {
    match T::DTYPE {
        DType::Bool => if v.to_bool() { "True" } else { "False" }.into(),
        DType::Complex64 => format_complex(v.to_complex()),
        d if d.is_floating() => format_float(v.to_f64()),
        DType::UInt64 => v.to_u64().to_string(),
        _ => v.to_i64().to_string(),
    }
}

/// Writes the nested-list body of `t` (without `array(` and the dtype). Only the elements
/// shown are formatted, so summarising a large array is cheap.
fn write_body(out: &mut String, t: &Tensor) {
    dispatch!(t.dtype, T => {
        let element = |i: usize| format_element(t.get::<T>(i));
        if t.ndim() == 0 {
            out.push_str(&element(0));
        } else if t.shape[0] == 0 {
            out.push_str("[]");
        } else {
            write_axis(out, &t.shape, &element, 0, 0);
        }
    })
}

/// Writes the sub-array starting at flat position `start` of dimension `depth`.
fn write_axis(
    out: &mut String,
    shape: &[usize],
    element: &dyn Fn(usize) -> String,
    depth: usize,
    start: usize,
) {
    let n = shape[depth];
    let inner: usize = shape[depth + 1..].iter().product();
    let last = depth + 1 == shape.len();
    let sep = if last {
        ", ".to_string()
    } else {
        format!(",\n{}", " ".repeat(7 + depth))
    };
    out.push('[');
    let indices: Vec<Option<usize>> = if n > SUMMARY_THRESHOLD {
        (0..EDGE_ITEMS)
            .map(Some)
            .chain(std::iter::once(None))
            .chain((n - EDGE_ITEMS..n).map(Some))
            .collect()
    } else {
        (0..n).map(Some).collect()
    };
    for (k, i) in indices.into_iter().enumerate() {
        if k > 0 {
            out.push_str(&sep);
        }
        match i {
            None => out.push_str("..."),
            Some(i) if last => out.push_str(&element(start + i)),
            Some(i) => write_axis(out, shape, element, depth + 1, start + i * inner),
        }
    }
    out.push(']');
}

impl fmt::Display for Array {
    /// Evaluates the array and prints it like MLX's `repr`; an evaluation error prints
    /// as `array(<error: ...>)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut body = String::new();
        match self.tensor() {
            Ok(t) => write_body(&mut body, &t),
            Err(e) => body = format!("<error: {e}>"),
        }
        write!(f, "array({body}, dtype={})", self.dtype())
    }
}

#[cfg(test)]
mod tests {
    use super::format_g;

    #[test]
    fn g_format_matches_c() {
        let cases = [
            (1.0, "1"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (1e-8, "1e-08"),
            (1e10, "1e+10"),
            (123456.789, "123457"),
            (1.0 / 3.0, "0.333333"),
            (999999.0, "999999"),
            (1234567.0, "1.23457e+06"),
            (1e6, "1e+06"),
            (100000.0, "100000"),
            (0.0001234, "0.0001234"),
            (1e-5, "1e-05"),
            (-0.001, "-0.001"),
            (3.00406e38, "3.00406e+38"),
            (9.999995, "10"),
        ];
        for (v, s) in cases {
            assert_eq!(format_g(v), s, "{v}");
        }
    }
}
