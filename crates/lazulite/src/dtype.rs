//! Element types, their categories and MLX's type-promotion rules.

use std::fmt;

/// The element type of an [`Array`](crate::Array); the same set as `mlx.core`.
///
/// ```
/// use lazulite::DType;
/// assert_eq!(DType::Float16.size(), 2);
/// assert_eq!(lazulite::promote_types(DType::UInt8, DType::Int8), DType::Int16);
/// ```
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum DType {
    /// Booleans, one byte each.
    Bool,
    /// 8-bit unsigned integers.
    UInt8,
    /// 16-bit unsigned integers.
    UInt16,
    /// 32-bit unsigned integers.
    UInt32,
    /// 64-bit unsigned integers.
    UInt64,
    /// 8-bit signed integers.
    Int8,
    /// 16-bit signed integers.
    Int16,
    /// 32-bit signed integers (the default integer dtype).
    Int32,
    /// 64-bit signed integers.
    Int64,
    /// IEEE half precision.
    Float16,
    /// bfloat16: float32's exponent range with an 8-bit significand.
    BFloat16,
    /// IEEE single precision (the default floating dtype).
    Float32,
    /// IEEE double precision.
    Float64,
    /// Complex numbers of two float32 (real, imaginary).
    Complex64,
}

/// Abstract dtype categories, for [`issubdtype`] (MLX: `mx.floating`, `mx.integer`, ...).
///
/// ```
/// use lazulite::{issubdtype, Category, DType};
/// assert!(issubdtype(DType::Float16, Category::Floating));
/// assert!(issubdtype(DType::Float16, Category::Inexact));
/// assert!(!issubdtype(DType::Bool, Category::Number));
/// ```
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Category {
    /// Complex dtypes (`mx.complexfloating`).
    ComplexFloating,
    /// Real floating dtypes (`mx.floating`).
    Floating,
    /// Floating and complex dtypes (`mx.inexact`).
    Inexact,
    /// Signed integer dtypes (`mx.signedinteger`).
    SignedInteger,
    /// Unsigned integer dtypes (`mx.unsignedinteger`).
    UnsignedInteger,
    /// Integer dtypes, signed or not (`mx.integer`).
    Integer,
    /// Every numeric dtype (`mx.number`).
    Number,
    /// Every dtype, bool included (`mx.generic`).
    Generic,
}

/// MLX's `Dtype::Val` numbering (bfloat16 after float64, unlike the declaration order of
/// [`DType::ALL`]).
const MLX_VALS: [DType; 14] = [
    DType::Bool,
    DType::UInt8,
    DType::UInt16,
    DType::UInt32,
    DType::UInt64,
    DType::Int8,
    DType::Int16,
    DType::Int32,
    DType::Int64,
    DType::Float16,
    DType::Float32,
    DType::Float64,
    DType::BFloat16,
    DType::Complex64,
];

impl DType {
    /// MLX's number for this dtype (its `Dtype::Val`, which its function files and
    /// pickled arrays store); `None` for a dtype MLX lacks.
    ///
    /// ```
    /// use lazulite::DType;
    /// assert_eq!(DType::BFloat16.mlx_val(), Some(12));
    /// ```
    pub fn mlx_val(self) -> Option<u8> {
        MLX_VALS.iter().position(|&d| d == self).map(|v| v as u8)
    }

    /// The dtype MLX numbers `val` (see [`DType::mlx_val`]).
    ///
    /// ```
    /// use lazulite::DType;
    /// assert_eq!(DType::from_mlx_val(10), Some(DType::Float32));
    /// assert_eq!(DType::from_mlx_val(14), None);
    /// ```
    pub fn from_mlx_val(val: u8) -> Option<DType> {
        MLX_VALS.get(val as usize).copied()
    }

    /// Every dtype, in MLX's order of declaration.
    ///
    /// ```
    /// use lazulite::DType;
    /// assert_eq!(DType::ALL.len(), 14);
    /// assert_eq!(DType::ALL.iter().filter(|d| d.is_floating()).count(), 4);
    /// ```
    pub const ALL: [DType; 14] = [
        DType::Bool,
        DType::UInt8,
        DType::UInt16,
        DType::UInt32,
        DType::UInt64,
        DType::Int8,
        DType::Int16,
        DType::Int32,
        DType::Int64,
        DType::Float16,
        DType::BFloat16,
        DType::Float32,
        DType::Float64,
        DType::Complex64,
    ];

    /// Bytes per element.
    ///
    /// ```
    /// use lazulite::DType;
    /// assert_eq!(DType::Bool.size(), 1);
    /// assert_eq!(DType::BFloat16.size(), 2);
    /// assert_eq!(DType::Complex64.size(), 8);
    /// ```
    pub fn size(self) -> usize {
        use DType::*;
        match self {
            Bool | UInt8 | Int8 => 1,
            UInt16 | Int16 | Float16 | BFloat16 => 2,
            UInt32 | Int32 | Float32 => 4,
            UInt64 | Int64 | Float64 | Complex64 => 8,
        }
    }

    /// The lower-case name MLX prints (`float32`, `bool`, ...).
    ///
    /// ```
    /// assert_eq!(lazulite::DType::BFloat16.name(), "bfloat16");
    /// assert_eq!(lazulite::DType::Int32.to_string(), "int32");
    /// ```
    pub fn name(self) -> &'static str {
        use DType::*;
        match self {
            Bool => "bool",
            UInt8 => "uint8",
            UInt16 => "uint16",
            UInt32 => "uint32",
            UInt64 => "uint64",
            Int8 => "int8",
            Int16 => "int16",
            Int32 => "int32",
            Int64 => "int64",
            Float16 => "float16",
            BFloat16 => "bfloat16",
            Float32 => "float32",
            Float64 => "float64",
            Complex64 => "complex64",
        }
    }

    /// Parses a name as printed by [`DType::name`].
    ///
    /// ```
    /// use lazulite::DType;
    /// assert_eq!(DType::from_name("uint16"), Some(DType::UInt16));
    /// assert_eq!(DType::from_name("float"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// Whether this is `Bool`.
    ///
    /// ```
    /// assert!(lazulite::DType::Bool.is_bool() && !lazulite::DType::UInt8.is_bool());
    /// ```
    pub fn is_bool(self) -> bool {
        self == DType::Bool
    }
    /// Whether this is an unsigned integer dtype.
    ///
    /// ```
    /// assert!(lazulite::DType::UInt32.is_unsigned() && !lazulite::DType::Int32.is_unsigned());
    /// ```
    pub fn is_unsigned(self) -> bool {
        use DType::*;
        matches!(self, UInt8 | UInt16 | UInt32 | UInt64)
    }
    /// Whether this is a signed integer dtype.
    ///
    /// ```
    /// assert!(lazulite::DType::Int8.is_signed_integer() && !lazulite::DType::Float32.is_signed_integer());
    /// ```
    pub fn is_signed_integer(self) -> bool {
        use DType::*;
        matches!(self, Int8 | Int16 | Int32 | Int64)
    }
    /// Signed or unsigned integer (not bool).
    ///
    /// ```
    /// use lazulite::DType;
    /// assert!(DType::UInt8.is_integer() && DType::Int64.is_integer());
    /// assert!(!DType::Bool.is_integer());
    /// ```
    pub fn is_integer(self) -> bool {
        self.is_unsigned() || self.is_signed_integer()
    }
    /// Real floating point (float16, bfloat16, float32, float64).
    ///
    /// ```
    /// use lazulite::DType;
    /// assert!(DType::BFloat16.is_floating());
    /// assert!(!DType::Complex64.is_floating());
    /// ```
    pub fn is_floating(self) -> bool {
        use DType::*;
        matches!(self, Float16 | BFloat16 | Float32 | Float64)
    }
    /// Whether this is `Complex64`.
    ///
    /// ```
    /// assert!(lazulite::DType::Complex64.is_complex() && !lazulite::DType::Float64.is_complex());
    /// ```
    pub fn is_complex(self) -> bool {
        self == DType::Complex64
    }
    /// Floating or complex.
    ///
    /// ```
    /// use lazulite::DType;
    /// assert!(DType::Float16.is_inexact() && DType::Complex64.is_inexact());
    /// assert!(!DType::Int32.is_inexact());
    /// ```
    pub fn is_inexact(self) -> bool {
        self.is_floating() || self.is_complex()
    }

    /// Whether this dtype belongs to `category` (MLX's `issubdtype`).
    ///
    /// ```
    /// use lazulite::{Category, DType};
    /// assert!(DType::Int16.is_in(Category::SignedInteger));
    /// assert!(DType::Bool.is_in(Category::Generic) && !DType::Bool.is_in(Category::Number));
    /// ```
    pub fn is_in(self, category: Category) -> bool {
        use Category::*;
        match category {
            ComplexFloating => self.is_complex(),
            Floating => self.is_floating(),
            Inexact => self.is_inexact(),
            SignedInteger => self.is_signed_integer(),
            UnsignedInteger => self.is_unsigned(),
            Integer => self.is_integer(),
            Number => !self.is_bool(),
            Generic => true,
        }
    }

    /// The real dtype of the same precision (complex64 -> float32).
    ///
    /// ```
    /// use lazulite::DType;
    /// assert_eq!(DType::Complex64.real_part(), DType::Float32);
    /// assert_eq!(DType::Float16.real_part(), DType::Float16);
    /// ```
    pub fn real_part(self) -> DType {
        if self.is_complex() {
            DType::Float32
        } else {
            self
        }
    }

    /// The dtype inexact math (sqrt, exp, divide, ...) produces from this one:
    /// floats and complex stay, integers and bool become float32.
    ///
    /// ```
    /// use lazulite::DType;
    /// assert_eq!(DType::Int64.to_inexact(), DType::Float32);
    /// assert_eq!(DType::Float64.to_inexact(), DType::Float64);
    /// ```
    pub fn to_inexact(self) -> DType {
        if self.is_inexact() {
            self
        } else {
            DType::Float32
        }
    }

    fn unsigned_of_size(bytes: usize) -> DType {
        match bytes {
            1 => DType::UInt8,
            2 => DType::UInt16,
            4 => DType::UInt32,
            _ => DType::UInt64,
        }
    }

    fn signed_of_size(bytes: usize) -> DType {
        match bytes {
            1 => DType::Int8,
            2 => DType::Int16,
            4 => DType::Int32,
            _ => DType::Int64,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The dtype two operands are promoted to before a binary op, following MLX's table
/// (which differs from NumPy: e.g. `uint64 + int8 -> float32`, `int64 + float16 -> float16`).
///
/// ```
/// use lazulite::{promote_types, DType::*};
/// assert_eq!(promote_types(Int32, Float16), Float16);
/// assert_eq!(promote_types(Float16, BFloat16), Float32);
/// assert_eq!(promote_types(UInt64, Int64), Float32);
/// ```
pub fn promote_types(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    if a == Complex64 || b == Complex64 {
        return Complex64;
    }
    if a == Float64 || b == Float64 {
        return Float64;
    }
    match (a.is_floating(), b.is_floating()) {
        (true, true) => {
            if a.size() != b.size() {
                return if a.size() > b.size() { a } else { b };
            }
            // float16 with bfloat16: neither holds the other.
            return Float32;
        }
        (true, false) => return a,
        (false, true) => return b,
        (false, false) => {}
    }
    if a == Bool {
        return b;
    }
    if b == Bool {
        return a;
    }
    match (a.is_unsigned(), b.is_unsigned()) {
        (true, true) => DType::unsigned_of_size(a.size().max(b.size())),
        (false, false) => DType::signed_of_size(a.size().max(b.size())),
        _ => {
            let (u, s) = if a.is_unsigned() { (a, b) } else { (b, a) };
            if u.size() < s.size() {
                s
            } else if u.size() < 8 {
                DType::signed_of_size(u.size() * 2)
            } else {
                Float32
            }
        }
    }
}

/// Whether `issubdtype(dtype, category)` holds.
///
/// ```
/// use lazulite::{issubdtype, Category, DType};
/// assert!(issubdtype(DType::UInt8, Category::Integer));
/// assert!(!issubdtype(DType::UInt8, Category::SignedInteger));
/// ```
pub fn issubdtype(dtype: DType, category: Category) -> bool {
    dtype.is_in(category)
}

/// Whether `from` casts to `to` under MLX's rule: `to` is what the two promote to
/// (so any integer casts to any float, unlike NumPy's "safe" casting).
///
/// ```
/// use lazulite::{can_cast, DType::*};
/// assert!(can_cast(Int64, Float16));
/// assert!(!can_cast(UInt8, Int8));
/// assert!(!can_cast(Float16, BFloat16));
/// ```
pub fn can_cast(from: DType, to: DType) -> bool {
    promote_types(from, to) == to
}

/// Machine limits of a floating dtype (MLX's `finfo`).
///
/// ```
/// let info = lazulite::finfo(lazulite::DType::Float32).unwrap();
/// assert_eq!(info.eps, f64::from(f32::EPSILON));
/// assert_eq!(info.min, -info.max);
/// ```
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct FInfo {
    /// The dtype described.
    pub dtype: DType,
    /// The lowest finite value.
    pub min: f64,
    /// The largest finite value.
    pub max: f64,
    /// The difference between 1 and the next larger representable value.
    pub eps: f64,
    /// The smallest positive normal value.
    pub smallest_normal: f64,
}

/// Limits of a floating or complex dtype; `None` for integer and bool dtypes.
///
/// ```
/// let f = lazulite::finfo(lazulite::DType::Float16).unwrap();
/// assert_eq!(f.max, 65504.0);
/// assert_eq!(f.smallest_normal, 2f64.powi(-14));
/// ```
pub fn finfo(dtype: DType) -> Option<FInfo> {
    use DType::*;
    let (max, eps, smallest_normal) = match dtype {
        Float16 => (
            f64::from(half::f16::MAX),
            f64::from(half::f16::EPSILON),
            f64::from(half::f16::MIN_POSITIVE),
        ),
        BFloat16 => (
            f64::from(half::bf16::MAX),
            f64::from(half::bf16::EPSILON),
            f64::from(half::bf16::MIN_POSITIVE),
        ),
        Float32 | Complex64 => (
            f64::from(f32::MAX),
            f64::from(f32::EPSILON),
            f64::from(f32::MIN_POSITIVE),
        ),
        Float64 => (f64::MAX, f64::EPSILON, f64::MIN_POSITIVE),
        _ => return None,
    };
    Some(FInfo {
        dtype: dtype.real_part(),
        min: -max,
        max,
        eps,
        smallest_normal,
    })
}

/// Limits of an integer dtype (MLX's `iinfo`).
///
/// ```
/// let info = lazulite::iinfo(lazulite::DType::UInt8).unwrap();
/// assert_eq!((info.min, info.max), (0, 255));
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct IInfo {
    /// The dtype described.
    pub dtype: DType,
    /// The smallest value.
    pub min: i128,
    /// The largest value.
    pub max: i128,
}

/// Limits of an integer dtype; `None` for the others.
///
/// ```
/// assert_eq!(lazulite::iinfo(lazulite::DType::Int8).unwrap().min, -128);
/// ```
pub fn iinfo(dtype: DType) -> Option<IInfo> {
    if !dtype.is_integer() {
        return None;
    }
    let bits = 8 * dtype.size() as u32;
    let (min, max) = if dtype.is_unsigned() {
        (0, (1i128 << bits) - 1)
    } else {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    };
    Some(IInfo { dtype, min, max })
}

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    #[test]
    fn promotion_is_symmetric_and_idempotent() {
        for a in DType::ALL {
            assert_eq!(promote_types(a, a), a);
            for b in DType::ALL {
                assert_eq!(promote_types(a, b), promote_types(b, a), "{a} {b}");
            }
        }
    }

    #[test]
    fn promotion_matches_mlx_samples() {
        assert_eq!(promote_types(UInt8, Int8), Int16);
        assert_eq!(promote_types(UInt32, Int32), Int64);
        assert_eq!(promote_types(UInt64, Int8), Float32);
        assert_eq!(promote_types(Int64, Float16), Float16);
        assert_eq!(promote_types(BFloat16, Float16), Float32);
        assert_eq!(promote_types(Float64, Complex64), Complex64);
        assert_eq!(promote_types(Bool, UInt16), UInt16);
    }

    #[test]
    fn limits() {
        assert_eq!(iinfo(UInt8).unwrap().max, 255);
        assert_eq!(iinfo(Int64).unwrap().min, i64::MIN as i128);
        assert_eq!(finfo(Float32).unwrap().eps, f32::EPSILON as f64);
        assert!(finfo(Int32).is_none());
    }
}
