//! Rust types that hold one element of each [`DType`], and the conversions between them.

use crate::dtype::DType;
use half::{bf16, f16};
use std::fmt::Debug;

mod f32_lane;
pub(crate) use f32_lane::{f16_to_f32, F32Lane};

/// A complex number of two `f32`, the element of `complex64` arrays.
///
/// ```
/// use lazulite::{multiply, Array, Complex};
/// let z = Array::from_slice(&[Complex::new(1.0, 1.0)], &[1])?;
/// let squared = multiply(&z, &z)?.to_vec::<Complex>()?; // (1 + i)^2 = 2i
/// assert_eq!(squared, vec![Complex { re: 0.0, im: 2.0 }]);
/// # Ok::<(), lazulite::Error>(())
/// ```
#[repr(C)]
#[derive(Copy, Clone, Default, PartialEq, Debug)]
pub struct Complex {
    /// The real part.
    pub re: f32,
    /// The imaginary part.
    pub im: f32,
}

// SAFETY: two f32 fields, no padding, every bit pattern valid.
unsafe impl bytemuck::Zeroable for Complex {}
unsafe impl bytemuck::Pod for Complex {}

impl Complex {
    /// The complex number `re + im i`.
    ///
    /// ```
    /// let z = lazulite::Complex::new(3.0, -4.0);
    /// assert_eq!((z.re, z.im), (3.0, -4.0));
    /// ```
    pub fn new(re: f32, im: f32) -> Complex {
        Complex { re, im }
    }
}

/// A Rust type that stores one element of a [`DType`].
///
/// `bool` is kept in memory as a `u8` (its [`Storage`](Element::Storage)) so that any byte
/// pattern a user writes into a buffer is a valid element; kernels read and write through
/// [`load`](Element::load) and [`store`](Element::store).
///
/// ```
/// use lazulite::Element;
/// assert_eq!(<i8 as Element>::from_elem(300.0f32 - 200.0), 100i8);
/// assert!(bool::from_elem(2u8));
/// ```
pub trait Element: Copy + Send + Sync + Default + PartialEq + Debug + 'static {
    /// The dtype of arrays of this element type.
    ///
    /// ```
    /// use lazulite::{DType, Element};
    /// assert_eq!(<f32 as Element>::DTYPE, DType::Float32);
    /// assert_eq!(bool::DTYPE, DType::Bool);
    /// ```
    const DTYPE: DType;
    /// How the element is laid out in a buffer.
    ///
    /// ```
    /// use lazulite::Element;
    /// // A bool takes one byte, and every byte pattern is a valid element.
    /// assert_eq!(std::mem::size_of::<<bool as Element>::Storage>(), 1);
    /// assert!(bool::load(255));
    /// ```
    type Storage: bytemuck::Pod + Send + Sync;
    /// The element from its buffer representation.
    ///
    /// ```
    /// use lazulite::Element;
    /// assert!(bool::load(7u8)); // any nonzero byte is true
    /// assert_eq!(f32::load(2.5), 2.5);
    /// ```
    fn load(s: Self::Storage) -> Self;
    /// The buffer representation of the element.
    ///
    /// ```
    /// use lazulite::Element;
    /// assert_eq!(true.store(), 1u8);
    /// assert_eq!(2.5f32.store(), 2.5);
    /// ```
    fn store(self) -> Self::Storage;
    /// Real value as f64 (bool: 0 or 1; complex: the real part).
    ///
    /// ```
    /// use lazulite::{Complex, Element};
    /// assert_eq!(true.to_f64(), 1.0);
    /// assert_eq!(Complex::new(2.0, 3.0).to_f64(), 2.0);
    /// ```
    fn to_f64(self) -> f64;
    /// Integer value (floats truncate toward zero, saturating; complex: real part).
    ///
    /// ```
    /// use lazulite::Element;
    /// assert_eq!((-2.7f32).to_i64(), -2);
    /// assert_eq!(1e30f32.to_i64(), i64::MAX);
    /// ```
    fn to_i64(self) -> i64;
    /// Unsigned value, wrapping like a C cast for negative integers.
    ///
    /// ```
    /// use lazulite::Element;
    /// assert_eq!((-1i32).to_u64(), u64::MAX);
    /// assert_eq!(7u8.to_u64(), 7);
    /// ```
    fn to_u64(self) -> u64;
    /// Truth value: nonzero is true (complex: either part nonzero).
    ///
    /// ```
    /// use lazulite::{Complex, Element};
    /// assert!(Complex::new(0.0, 1.0).to_bool());
    /// assert!(!0.0f32.to_bool());
    /// ```
    fn to_bool(self) -> bool;
    /// The value as a complex number (imaginary part 0 for real types).
    ///
    /// ```
    /// use lazulite::{Complex, Element};
    /// assert_eq!(2i32.to_complex(), Complex::new(2.0, 0.0));
    /// ```
    fn to_complex(self) -> Complex;
    /// The element for `v`: integer types truncate toward zero (then wrap to their
    /// width), floating types round to the nearest value, bool is `v != 0`.
    ///
    /// ```
    /// use lazulite::Element;
    /// assert_eq!(i8::from_f64(-2.7), -2);
    /// assert_eq!(u8::from_f64(257.0), 1); // wraps to 8 bits
    /// assert!(bool::from_f64(0.5));
    /// ```
    fn from_f64(v: f64) -> Self;
    /// Converts any element to this type with NumPy's `astype` semantics.
    ///
    /// ```
    /// use lazulite::{Complex, Element};
    /// assert_eq!(i32::from_elem(3.9f32), 3);
    /// assert_eq!(f32::from_elem(true), 1.0);
    /// assert_eq!(f32::from_elem(Complex::new(1.5, 2.0)), 1.5); // the real part, as NumPy
    /// ```
    fn from_elem<T: Element>(x: T) -> Self;
}

macro_rules! int_element {
    ($t:ty, $d:ident) => {
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            type Storage = $t;
            #[inline(always)]
            fn load(s: $t) -> $t {
                s
            }
            #[inline(always)]
            fn store(self) -> $t {
                self
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                self as i64
            }
            #[inline(always)]
            fn to_u64(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn to_bool(self) -> bool {
                self != 0
            }
            #[inline(always)]
            fn to_complex(self) -> Complex {
                Complex::new(self as f32, 0.0)
            }
            #[inline(always)]
            fn from_f64(v: f64) -> $t {
                v as i64 as $t
            }
            #[inline(always)]
            fn from_elem<T: Element>(x: T) -> $t {
                if T::DTYPE.is_inexact() && <$t as Element>::DTYPE == DType::UInt64 {
                    // Values in [2^63, 2^64) fit uint64 but not the i64 used below.
                    x.to_u64() as $t
                } else if T::DTYPE.is_inexact() {
                    // Through i64 so that out-of-range values wrap like a C cast would.
                    x.to_f64() as i64 as $t
                } else if T::DTYPE == DType::UInt64 {
                    x.to_u64() as $t
                } else {
                    x.to_i64() as $t
                }
            }
        }
    };
}

int_element!(u8, UInt8);
int_element!(u16, UInt16);
int_element!(u32, UInt32);
int_element!(u64, UInt64);
int_element!(i8, Int8);
int_element!(i16, Int16);
int_element!(i32, Int32);
int_element!(i64, Int64);

/// `v` rounded to f32 toward zero, with the lowest mantissa bit set when anything was cut
/// off ("round to odd"). Rounding that result to a format with at most 22 significant bits
/// (f16, bf16) gives the correctly rounded value, free of double-rounding errors.
fn f64_to_f32_odd(v: f64) -> f32 {
    let t = v as f32;
    if t as f64 == v || !v.is_finite() {
        return t;
    }
    // `t` is the nearest f32; step back toward zero if it rounded away (also from inf).
    let truncated = if (t as f64).abs() > v.abs() {
        f32::from_bits(t.to_bits() - 1)
    } else {
        t
    };
    f32::from_bits(truncated.to_bits() | 1)
}

/// An integer `sign * magnitude` as f64, rounded to odd (see [`f64_to_f32_odd`]), so that a
/// further round-to-odd to f32 and a final rounding to f16/bf16 are correct.
fn int_to_f64_odd(negative: bool, magnitude: u64) -> f64 {
    let bits = 64 - magnitude.leading_zeros();
    let v = if bits <= 53 {
        magnitude as f64
    } else {
        let shift = bits - 53;
        let sticky = magnitude & ((1u64 << shift) - 1) != 0;
        ((magnitude >> shift) | sticky as u64) as f64 * (shift as f64).exp2()
    };
    if negative {
        -v
    } else {
        v
    }
}

fn f16_from_f64(v: f64) -> f16 {
    f16::from_f32(f64_to_f32_odd(v))
}
fn bf16_from_f64(v: f64) -> bf16 {
    bf16::from_f32(f64_to_f32_odd(v))
}

macro_rules! float_element {
    ($t:ty, $d:ident, $to:expr, $from:expr, $from_i64:expr, $from_u64:expr) => {
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            type Storage = $t;
            #[inline(always)]
            fn load(s: $t) -> $t {
                s
            }
            #[inline(always)]
            fn store(self) -> $t {
                self
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                $to(self)
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                $to(self) as i64
            }
            #[inline(always)]
            fn to_u64(self) -> u64 {
                let v = $to(self);
                if v < 0.0 {
                    v as i64 as u64
                } else {
                    v as u64
                }
            }
            #[inline(always)]
            fn to_bool(self) -> bool {
                $to(self) != 0.0
            }
            #[inline(always)]
            fn to_complex(self) -> Complex {
                Complex::new($to(self) as f32, 0.0)
            }
            #[inline(always)]
            fn from_f64(v: f64) -> $t {
                $from(v)
            }
            #[inline(always)]
            fn from_elem<T: Element>(x: T) -> $t {
                // Integers convert directly, rounding once (not through f64 first).
                if T::DTYPE == DType::UInt64 {
                    $from_u64(x.to_u64())
                } else if T::DTYPE.is_integer() {
                    $from_i64(x.to_i64())
                } else {
                    $from(x.to_f64())
                }
            }
        }
    };
}

// half's own `from_f64` ignores the low 32 bits of the mantissa when rounding, so f64
// values convert through `f64_to_f32_odd`.
float_element!(
    f32,
    Float32,
    |v: f32| v as f64,
    |v: f64| v as f32,
    |v: i64| v as f32,
    |v: u64| v as f32
);
float_element!(
    f64,
    Float64,
    |v: f64| v,
    |v: f64| v,
    |v: i64| v as f64,
    |v: u64| v as f64
);
float_element!(
    f16,
    Float16,
    |v: f16| f64::from(v.widen()),
    f16_from_f64,
    |v: i64| f16_from_f64(int_to_f64_odd(v < 0, v.unsigned_abs())),
    |v: u64| f16_from_f64(int_to_f64_odd(false, v))
);
float_element!(
    bf16,
    BFloat16,
    |v: bf16| f64::from(v.widen()),
    bf16_from_f64,
    |v: i64| bf16_from_f64(int_to_f64_odd(v < 0, v.unsigned_abs())),
    |v: u64| bf16_from_f64(int_to_f64_odd(false, v))
);

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    type Storage = u8;
    #[inline(always)]
    fn load(s: u8) -> bool {
        s != 0
    }
    #[inline(always)]
    fn store(self) -> u8 {
        self as u8
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self as i64
    }
    #[inline(always)]
    fn to_u64(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn to_bool(self) -> bool {
        self
    }
    #[inline(always)]
    fn to_complex(self) -> Complex {
        Complex::new(self as u8 as f32, 0.0)
    }
    #[inline(always)]
    fn from_f64(v: f64) -> bool {
        v != 0.0
    }
    #[inline(always)]
    fn from_elem<T: Element>(x: T) -> bool {
        if T::DTYPE.is_complex() {
            let c = x.to_complex();
            c.re != 0.0 || c.im != 0.0
        } else {
            x.to_bool()
        }
    }
}

impl Element for Complex {
    const DTYPE: DType = DType::Complex64;
    type Storage = Complex;
    #[inline(always)]
    fn load(s: Complex) -> Complex {
        s
    }
    #[inline(always)]
    fn store(self) -> Complex {
        self
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self.re as f64
    }
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self.re as i64
    }
    #[inline(always)]
    fn to_u64(self) -> u64 {
        self.re.to_u64()
    }
    #[inline(always)]
    fn to_bool(self) -> bool {
        self.re != 0.0 || self.im != 0.0
    }
    #[inline(always)]
    fn to_complex(self) -> Complex {
        self
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Complex {
        Complex::new(v as f32, 0.0)
    }
    #[inline(always)]
    fn from_elem<T: Element>(x: T) -> Complex {
        x.to_complex()
    }
}

/// Runs `$body` with `$t` bound to the Rust element type of `$dtype`.
macro_rules! dispatch {
    ($dtype:expr, $t:ident => $body:expr) => {{
        use $crate::dtype::DType;
        match $dtype {
            DType::Bool => {
                type $t = bool;
                $body
            }
            DType::UInt8 => {
                type $t = u8;
                $body
            }
            DType::UInt16 => {
                type $t = u16;
                $body
            }
            DType::UInt32 => {
                type $t = u32;
                $body
            }
            DType::UInt64 => {
                type $t = u64;
                $body
            }
            DType::Int8 => {
                type $t = i8;
                $body
            }
            DType::Int16 => {
                type $t = i16;
                $body
            }
            DType::Int32 => {
                type $t = i32;
                $body
            }
            DType::Int64 => {
                type $t = i64;
                $body
            }
            DType::Float16 => {
                type $t = half::f16;
                $body
            }
            DType::BFloat16 => {
                type $t = half::bf16;
                $body
            }
            DType::Float32 => {
                type $t = f32;
                $body
            }
            DType::Float64 => {
                type $t = f64;
                $body
            }
            DType::Complex64 => {
                type $t = $crate::element::Complex;
                $body
            }
        }
    }};
}
pub(crate) use dispatch;

/// A Rust scalar before it is given a dtype: weakly typed, as Python scalars are in MLX
/// (`int32_array + 1.5` is float32, `float16_array + 2` is float16).
///
/// ```
/// use lazulite::{Scalar, DType};
/// assert_eq!(Scalar::from(1.5).dtype_next_to(DType::Int32), DType::Float32);
/// assert_eq!(Scalar::from(2).dtype_next_to(DType::Float16), DType::Float16);
/// ```
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Scalar {
    /// A Python-style `bool`.
    Bool(bool),
    /// A Python-style `int`.
    Int(i64),
    /// A Python-style `float`.
    Float(f64),
    /// A Python-style `complex`: real and imaginary parts.
    Complex(f64, f64),
}

impl Scalar {
    /// The dtype this scalar takes on its own (MLX: bool, int32 or int64, float32, complex64).
    ///
    /// ```
    /// use lazulite::{DType, Scalar};
    /// assert_eq!(Scalar::from(1).default_dtype(), DType::Int32);
    /// assert_eq!(Scalar::from(1i64 << 40).default_dtype(), DType::Int64);
    /// assert_eq!(Scalar::from(0.5).default_dtype(), DType::Float32);
    /// ```
    pub fn default_dtype(self) -> DType {
        match self {
            Scalar::Bool(_) => DType::Bool,
            Scalar::Int(v) if i32::try_from(v).is_err() => DType::Int64,
            Scalar::Int(_) => DType::Int32,
            Scalar::Float(_) => DType::Float32,
            Scalar::Complex(..) => DType::Complex64,
        }
    }

    /// The dtype this scalar takes when combined with an array of `other` dtype.
    ///
    /// ```
    /// use lazulite::{DType, Scalar};
    /// assert_eq!(Scalar::from(3).dtype_next_to(DType::UInt8), DType::UInt8);
    /// assert_eq!(Scalar::from(3).dtype_next_to(DType::Bool), DType::Int32);
    /// ```
    pub fn dtype_next_to(self, other: DType) -> DType {
        let fits = match self {
            Scalar::Bool(_) => true,
            Scalar::Int(_) => !other.is_bool(),
            Scalar::Float(_) => other.is_inexact(),
            Scalar::Complex(..) => other.is_complex(),
        };
        if fits {
            other
        } else {
            self.default_dtype()
        }
    }

    /// The value as an `f64` (bool: 0 or 1; complex: the real part).
    ///
    /// ```
    /// use lazulite::Scalar;
    /// assert_eq!(Scalar::from(true).to_f64(), 1.0);
    /// assert_eq!(Scalar::Complex(1.5, 2.0).to_f64(), 1.5);
    /// ```
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => b as u8 as f64,
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) | Scalar::Complex(f, _) => f,
        }
    }

    /// The value converted to element type `T` (NumPy cast semantics).
    ///
    /// ```
    /// use lazulite::Scalar;
    /// assert_eq!(Scalar::from(2.9).to_elem::<i32>(), 2);
    /// assert_eq!(Scalar::from(-1).to_elem::<u8>(), 255);
    /// ```
    pub fn to_elem<T: Element>(self) -> T {
        match self {
            Scalar::Bool(b) => T::from_elem(b),
            Scalar::Int(i) => T::from_elem(i),
            Scalar::Float(f) => T::from_elem(f),
            Scalar::Complex(re, im) => T::from_elem(Complex::new(re as f32, im as f32)),
        }
    }
}

macro_rules! scalar_from {
    ($variant:ident, $conv:ty: $($t:ty),*) => {$(
        impl From<$t> for Scalar {
            fn from(v: $t) -> Scalar {
                Scalar::$variant(v as $conv)
            }
        }
    )*};
}
scalar_from!(Int, i64: i8, i16, i32, i64, u8, u16, u32, isize);
scalar_from!(Float, f64: f32, f64);

impl From<bool> for Scalar {
    fn from(v: bool) -> Scalar {
        Scalar::Bool(v)
    }
}
