//! Batched matrix products through the `gemm` crate, over strided operands.
//!
//! Operands arrive as `(batch..., M, K)` and `(batch..., K, N)` with the same batch shape
//! (broadcast batch dimensions have stride 0). Their row and column strides go to gemm
//! as they are, so transposed, sliced and reversed inputs are not copied; an operand is
//! made contiguous only when neither of its matrix strides is 1, where gemm's packing
//! would gather element by element.

pub(crate) mod paired;
mod rows;
pub(crate) mod tiles;

use super::copy::contiguous;
use super::elementwise::{converted, map1};
use super::parallel;
use crate::backend::Tensor;
use crate::dtype::DType;
use crate::element::{Complex, Element};
use crate::error::{Error, Result};
use gemm::{c32, f16, Parallelism};
use half::bf16;
use rows::Widen;

/// Products with at least this many multiply-adds are split across threads by gemm;
/// smaller ones cost less than waking the thread pool.
const PARALLEL_WORK: usize = 1 << 17;

/// Below this many multiply-adds per product, a batch of many products is split across
/// threads by product rather than within each product.
const BATCH_SPLIT_WORK: usize = 1 << 22;

/// `a @ b`, or `alpha * (a @ b) + beta * c` when `addend` is `Some((c, alpha, beta))`
/// with `c` of the output's shape. All operands have the same dtype, one of float16,
/// bfloat16, float32, float64 and complex64; the result is a new contiguous tensor.
pub fn matmul(a: Tensor, b: Tensor, addend: Option<(Tensor, f64, f64)>) -> Result<Tensor> {
    let nd = a.ndim();
    debug_assert!(nd >= 2 && b.ndim() == nd && a.shape[..nd - 2] == b.shape[..nd - 2]);
    let mut shape = a.shape.clone();
    shape[nd - 1] = b.shape[nd - 1];
    batched_product(a, b, addend, &shape, Pairs::Aligned)
}

/// `a[lhs[i]] @ b[rhs[i]]` for every position `i` of the index tensors, whose shape is
/// `batch`: an index addresses a matrix of `a` (or `b`) by its row-major position in that
/// operand's own batch shape. Out-of-range indices are an `IndexError`; dtypes as in
/// [`matmul`].
pub fn gather_matmul(
    a: Tensor,
    b: Tensor,
    lhs: &[u32],
    rhs: &[u32],
    batch: &[usize],
) -> Result<Tensor> {
    for (indices, operand) in [(lhs, &a), (rhs, &b)] {
        let count: usize = operand.shape[..operand.ndim() - 2].iter().product();
        if let Some(&bad) = indices.iter().find(|&&i| i as usize >= count) {
            return Err(Error::index(format!(
                "[gather_mm] Index {bad} is out of bounds for an operand of {count} matrices."
            )));
        }
    }
    let (ra, rb) = (a.ndim(), b.ndim());
    let shape: Vec<usize> = batch
        .iter()
        .copied()
        .chain([a.shape[ra - 2], b.shape[rb - 1]])
        .collect();
    batched_product(a, b, None, &shape, Pairs::Gathered(lhs, rhs))
}

/// Which matrices of the operands output matrix `i` multiplies.
#[derive(Copy, Clone)]
enum Pairs<'a> {
    /// Matrix `i` of each (same batch shapes).
    Aligned,
    /// Matrices `lhs[i]` and `rhs[i]`.
    Gathered(&'a [u32], &'a [u32]),
}

impl Pairs<'_> {
    fn get(self, i: usize) -> (usize, usize) {
        match self {
            Pairs::Aligned => (i, i),
            Pairs::Gathered(lhs, rhs) => (lhs[i] as usize, rhs[i] as usize),
        }
    }
}

fn batched_product(
    a: Tensor,
    b: Tensor,
    addend: Option<(Tensor, f64, f64)>,
    shape: &[usize],
    pairs: Pairs,
) -> Result<Tensor> {
    let (m, k) = (shape[shape.len() - 2], a.shape[a.ndim() - 1]);
    if rows::applies(&a, &b, m, k) {
        return rows::product(a, b, addend, shape, pairs);
    }
    let (mut a, mut b, mut addend) = (a, b, addend);
    let rows = match pairs {
        Pairs::Aligned => folded(&mut a, &mut b, &mut addend),
        Pairs::Gathered(..) => None,
    };
    if let Some(rows) = rows {
        let mut out = batched_product(a, b, addend, &[rows, shape[shape.len() - 1]], pairs)?;
        out.strides = crate::backend::tensor::contiguous_strides(shape);
        out.shape = shape.to_vec();
        return Ok(out);
    }
    match a.dtype {
        DType::Float32 => run::<f32, f32>(a, b, addend, shape, pairs, |v| v as f32),
        DType::Float64 => run::<f64, f64>(a, b, addend, shape, pairs, |v| v),
        DType::Float16 => half_product::<f16>(a, b, addend, shape, pairs),
        DType::Complex64 => {
            run::<Complex, c32>(a, b, addend, shape, pairs, |v| c32::new(v as f32, 0.0))
        }
        DType::BFloat16 => half_product::<bf16>(a, b, addend, shape, pairs),
        other => Err(Error::type_error(format!(
            "[matmul] No matrix product kernel for {other}."
        ))),
    }
}

/// A batch of products sharing one right matrix (`x @ W` with `x` of shape `(batch...,
/// M, K)` and `W` broadcast over the batch), taken as one product of `batch * M` rows when
/// the left operand's (and the addend's) batch and row axes collapse into one: the
/// operands are then viewed so in place and the row count returned (`None`, operands
/// untouched, otherwise). One large product packs `W` once and splits evenly across
/// threads, where the batch of products packed `W` again for each matrix on the calling
/// thread while the pool waited.
fn folded(
    a: &mut Tensor,
    b: &mut Tensor,
    addend: &mut Option<(Tensor, f64, f64)>,
) -> Option<usize> {
    let nd = a.ndim();
    let shared = b.shape[..nd - 2]
        .iter()
        .zip(&b.strides)
        .all(|(&d, &s)| d == 1 || s == 0);
    if nd < 3 || a.shape[..nd - 2].iter().product::<usize>() < 2 || !shared {
        return None;
    }
    let a_rows = collapsed_row_stride(a)?;
    let c_rows = match addend {
        Some((c, ..)) => Some(collapsed_row_stride(c)?),
        None => None,
    };
    let rows: usize = a.shape[..nd - 1].iter().product();
    let view = |t: &mut Tensor, row_stride: isize| {
        t.shape = vec![rows, t.shape[nd - 1]];
        t.strides = vec![row_stride, t.strides[nd - 1]];
    };
    view(a, a_rows);
    if let (Some((c, ..)), Some(stride)) = (addend.as_mut(), c_rows) {
        view(c, stride);
    }
    b.shape.drain(..nd - 2);
    b.strides.drain(..nd - 2);
    Some(rows)
}

/// The stride between consecutive rows of `t`, of shape `(batch..., M, N)`, seen as
/// `(batch * M, N)`; `None` when its strides do not allow that view.
fn collapsed_row_stride(t: &Tensor) -> Option<isize> {
    let nd = t.ndim();
    let mut row_stride = t.strides[nd - 2];
    // The span of the axes inside the current one, which an outer axis longer than one
    // must step by.
    let mut span: Option<isize> = None;
    for (&d, &s) in t.shape[..nd - 1].iter().zip(&t.strides).rev() {
        if d == 1 {
            continue;
        }
        match span {
            None => row_stride = s,
            Some(span) if s != span => return None,
            Some(_) => {}
        }
        span = Some(s * d as isize);
    }
    Some(row_stride)
}

/// Half-precision products accumulate in float32, as MLX's CPU build does, and round once:
/// bfloat16 ones on the pair-product kernel where the CPU has it, others widened to
/// float32 (the left operand whole, the right one a panel at a time).
fn half_product<E: Widen>(
    a: Tensor,
    b: Tensor,
    addend: Option<(Tensor, f64, f64)>,
    shape: &[usize],
    pairs: Pairs,
) -> Result<Tensor> {
    let dtype = a.dtype;
    let mut out = match paired::applies(&a, &b) {
        Some(kernel) => paired::product(a, b, shape, pairs, kernel)?,
        None => tiles::widened_product::<E>(a, b, shape, pairs)?,
    };
    add_scaled(&mut out, addend)?;
    converted(out, dtype)
}

/// `out = alpha * out + beta * c` for a float32 product `out` and `addend = (c, alpha,
/// beta)`, `c` of its shape; nothing without an addend.
fn add_scaled(out: &mut Tensor, addend: Option<(Tensor, f64, f64)>) -> Result<()> {
    match addend {
        // As in BLAS, a zero beta ignores `c` (NaNs in it included).
        Some((_, alpha, 0.0)) => {
            out.slice_mut::<f32>()
                .iter_mut()
                .for_each(|o| *o *= alpha as f32);
        }
        Some((c, alpha, beta)) => {
            let c = converted(c, DType::Float32)?;
            let (alpha, beta) = (alpha as f32, beta as f32);
            for (o, &c) in out.slice_mut::<f32>().iter_mut().zip(c.slice::<f32>()) {
                *o = alpha * *o + beta * c;
            }
        }
        None => {}
    }
    Ok(())
}

/// Single products of at least this depth with a depth-contiguous right operand copy an
/// operand into gemm's preferred layout (see [`run`]).
const TRANSPOSED_DEPTH: usize = 64;

/// A matrix operand: its buffer, kept alive, and the strides gemm walks.
struct Operand {
    tensor: Tensor,
    row_stride: isize,
    col_stride: isize,
}

impl Operand {
    fn new(t: Tensor) -> Result<Operand> {
        let nd = t.ndim();
        let unit = |d: usize| t.shape[d] == 1 || t.strides[d] == 1;
        let t = if unit(nd - 1) || unit(nd - 2) {
            t
        } else {
            contiguous(t)?
        };
        Ok(Operand {
            row_stride: t.strides[nd - 2],
            col_stride: t.strides[nd - 1],
            tensor: t,
        })
    }

    /// Element offset of the matrix at `batch` (row-major index over the batch shape).
    fn batch_offset(&self, batch: usize) -> isize {
        let nd = self.tensor.ndim();
        let mut rem = batch;
        let mut off = self.tensor.offset as isize;
        for (&d, &s) in self.tensor.shape[..nd - 2]
            .iter()
            .zip(&self.tensor.strides[..nd - 2])
            .rev()
        {
            off += (rem % d) as isize * s;
            rem /= d;
        }
        off
    }
}

/// Raw pointers handed to worker threads; each thread writes its own output matrices.
#[derive(Copy, Clone)]
struct SendPtr<T>(*mut T);
// SAFETY: the pointers address buffers that outlive the parallel loop, and threads write
// disjoint output matrices.
unsafe impl<T> Send for SendPtr<T> {}
unsafe impl<T> Sync for SendPtr<T> {}

/// Runs the product on elements `E` seen as gemm's element type `G`, which has the same
/// layout. `from_f64` converts the scale factors.
fn run<E: Element, G: Copy + Send + Sync + 'static>(
    a: Tensor,
    b: Tensor,
    addend: Option<(Tensor, f64, f64)>,
    shape: &[usize],
    pairs: Pairs,
    from_f64: impl Fn(f64) -> G,
) -> Result<Tensor> {
    let nd = shape.len();
    let (m, n, k) = (shape[nd - 2], shape[nd - 1], a.shape[a.ndim() - 1]);
    let batches: usize = shape[..nd - 2].iter().product();
    let dtype = a.dtype;
    let mut lhs = Operand::new(a)?;
    let mut rhs = Operand::new(b)?;
    // gemm packs a right operand that runs along the depth (`x @ W.T`) slowly: 256 x 512
    // by (512 x 512)^T took 0.90 ms, 0.62 ms with `W.T` copied to row-major first. A
    // single product of some depth copies one side into the layouts gemm prefers, by
    // blocked transposes, whichever copies fewer elements: the right operand made
    // row-major (n * k), or the left one made column-major with the result computed
    // column-major and transposed at the end (m * k + m * n: a few rows against a wide
    // weight, as in a prefill). Over a shallow depth the copies cost more than they save
    // (256 x 10 by (512 x 10)^T, a gradient in a classifier's last layer). Batches of
    // products (attention heads) gained nothing measurable.
    let depth_major =
        batches == 1 && rhs.row_stride == 1 && rhs.col_stride != 1 && k >= TRANSPOSED_DEPTH;
    let transposed = depth_major && n * k > m.saturating_mul(k + n);
    if transposed {
        if lhs.col_stride == 1 && lhs.row_stride != 1 {
            let column_major = contiguous(last_two_swapped(lhs.tensor))?;
            lhs = Operand::new(last_two_swapped(column_major))?;
        }
    } else if depth_major {
        rhs = Operand::new(contiguous(rhs.tensor)?)?;
    }
    let mut work_shape = shape.to_vec();
    if transposed {
        work_shape.swap(nd - 2, nd - 1);
    }
    let (mut out, read_dst, alpha, beta) = match addend {
        Some((c, alpha, beta)) => {
            // gemm computes `dst = alpha * dst + beta * lhs @ rhs`: the roles of the two
            // factors are swapped with respect to BLAS and to addmm.
            // A contiguous buffer nobody else holds: `c` itself when it is donated.
            let c = if transposed { last_two_swapped(c) } else { c };
            let out = map1::<E, E>(c, |v| v)?;
            (out, beta != 0.0, from_f64(beta), from_f64(alpha))
        }
        None => (
            Tensor::uninit(dtype, &work_shape)?,
            false,
            from_f64(0.0),
            from_f64(1.0),
        ),
    };
    let finish = |out: Tensor| {
        if transposed {
            contiguous(last_two_swapped(out))
        } else {
            Ok(out)
        }
    };
    if out.size() == 0 {
        return finish(out);
    }
    let (dst_col_stride, dst_row_stride) = if transposed {
        (m as isize, 1)
    } else {
        (1, n as isize)
    };
    let dst = SendPtr(out.data_ptr_mut::<E>() as *mut G);
    let (pa, pb) = (
        lhs.tensor.buf.as_ptr() as *const G,
        rhs.tensor.buf.as_ptr() as *const G,
    );
    let (pa, pb) = (SendPtr(pa as *mut G), SendPtr(pb as *mut G));
    let work = m.saturating_mul(n).saturating_mul(k.max(1));
    // Block `b` of `blocks` of product `batch`: a range of the result's rows, or of its
    // columns when it has at least as many columns as rows.
    let by_columns = n >= m;
    let extent = if by_columns { n } else { m };
    let block = |batch: usize, b: usize, blocks: usize| {
        let (pa, pb, dst) = (pa, pb, dst);
        let (batch_a, batch_b) = pairs.get(batch);
        let (first, end) = (b * extent / blocks, (b + 1) * extent / blocks);
        let (dst_step, lhs_step, rhs_step) = if by_columns {
            (dst_col_stride, 0, rhs.col_stride)
        } else {
            (dst_row_stride, lhs.row_stride, 0)
        };
        let (rows, columns) = if by_columns {
            (m, end - first)
        } else {
            (end - first, n)
        };
        let at = first as isize;
        // SAFETY: offsets and strides come from tensors addressing elements inside their
        // buffers (gathered indices were checked against the batch sizes); the output
        // matrix `batch` is a disjoint contiguous block of `out`, and the blocks of a
        // product are disjoint ranges of its rows or columns.
        unsafe {
            gemm::gemm(
                rows,
                columns,
                k,
                dst.0.add(batch * m * n).offset(at * dst_step),
                dst_col_stride,
                dst_row_stride,
                read_dst,
                pa.0.offset(lhs.batch_offset(batch_a) + at * lhs_step),
                lhs.col_stride,
                lhs.row_stride,
                pb.0.offset(rhs.batch_offset(batch_b) + at * rhs_step),
                rhs.col_stride,
                rhs.row_stride,
                alpha,
                beta,
                false,
                false,
                false,
                Parallelism::None,
            )
        }
    };
    // Many products of moderate size (attention heads) split best by product: each
    // thread runs whole products with no synchronisation inside them. A large product is
    // cut into one block of rows or columns per thread, each computed by gemm on one
    // thread (packing its own operands), with the kernels' fork-join rather than gemm's
    // own rayon threads, which would compete with the helpers for the cores.
    let threads = parallel::threads();
    let by_product = batches >= 4 * threads && work < BATCH_SPLIT_WORK;
    if work >= PARALLEL_WORK && !by_product && threads > 1 && extent >= 2 * threads {
        for batch in 0..batches {
            parallel::for_each(threads, |b| block(batch, b, threads));
        }
    } else if batches > 1 && work.saturating_mul(batches) >= PARALLEL_WORK {
        parallel::for_each(batches, |i| block(i, 0, 1));
    } else {
        (0..batches).for_each(|i| block(i, 0, 1));
    }
    finish(out)
}

/// A view of `t` with its last two axes exchanged.
fn last_two_swapped(mut t: Tensor) -> Tensor {
    let nd = t.ndim();
    t.shape.swap(nd - 2, nd - 1);
    t.strides.swap(nd - 2, nd - 1);
    t
}
