//! Rows at a stride: what the dot-product kernels over a few vectors read, such as a key or
//! value cache's slice, or a weight matrix's rows along their depth.

use super::MAX_VECTORS;

/// The elements of strided rows.
#[derive(Copy, Clone, Debug)]
pub enum RowElements<'a> {
    Float32(&'a [f32]),
    /// float16 bits.
    Float16(&'a [u16]),
    /// bfloat16 bits.
    BFloat16(&'a [u16]),
}

/// `count` rows of `width` elements, row `j` starting `j * stride` elements into `data`.
#[derive(Copy, Clone, Debug)]
pub struct StridedRows<'a> {
    pub data: RowElements<'a>,
    pub count: usize,
    pub width: usize,
    pub stride: usize,
}

impl StridedRows<'_> {
    /// Panics unless the rows, `vectors` (1 to [`MAX_VECTORS`], each at least `len` long)
    /// and `out` (`per_vector` values for each vector) fit a product of the rows with the
    /// vectors: what each such kernel asserts before its unchecked loops.
    pub(super) fn check<T>(&self, vectors: &[&[T]], len: usize, out: &[f32], per_vector: usize) {
        assert!(
            self.fits()
                && (1..=MAX_VECTORS).contains(&vectors.len())
                && vectors.iter().all(|v| v.len() >= len)
                && out.len() == vectors.len() * per_vector,
            "strided rows and vectors do not fit"
        );
    }

    /// Whether every row lies inside the data.
    fn fits(&self) -> bool {
        let len = match self.data {
            RowElements::Float32(d) => d.len(),
            RowElements::Float16(d) | RowElements::BFloat16(d) => d.len(),
        };
        self.count == 0
            || (self.count - 1)
                .checked_mul(self.stride)
                .and_then(|last| last.checked_add(self.width))
                .is_some_and(|end| end <= len)
    }
}
