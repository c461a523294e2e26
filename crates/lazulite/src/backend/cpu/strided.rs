//! Walking strided layouts: every elementwise kernel visits its operands one innermost row
//! at a time, after merging the dimensions that are contiguous in every operand.
//! [`par_for_each_run`] does the same for kernels writing a contiguous output, split across
//! threads for large outputs and in cache-sized tiles for operands transposed relative to
//! the output.

use super::parallel;
use crate::backend::tensor::is_row_major;

/// Dimensions of `shape` merged where all operands allow it, size-1 dimensions dropped.
/// Returns the merged shape and, per operand, the merged strides.
pub(crate) fn collapse<const N: usize>(
    shape: &[usize],
    strides: [&[isize]; N],
) -> (Vec<usize>, [Vec<isize>; N]) {
    let mut out_shape: Vec<usize> = Vec::with_capacity(shape.len());
    let mut out_strides: [Vec<isize>; N] = std::array::from_fn(|_| Vec::with_capacity(shape.len()));
    for (d, &n) in shape.iter().enumerate() {
        if n == 1 {
            continue;
        }
        let mergeable = !out_shape.is_empty()
            && (0..N).all(|k| {
                let prev = *out_strides[k].last().unwrap();
                prev == strides[k][d] * n as isize
            });
        if mergeable {
            *out_shape.last_mut().unwrap() *= n;
            for k in 0..N {
                *out_strides[k].last_mut().unwrap() = strides[k][d];
            }
        } else {
            out_shape.push(n);
            for k in 0..N {
                out_strides[k].push(strides[k][d]);
            }
        }
    }
    (out_shape, out_strides)
}

/// Calls `row(starts, len, steps)` for every innermost row of an iteration over `shape`,
/// where operand `k` starts at element offset `starts[k]` and advances by `steps[k]`.
/// Rows come in row-major order; an empty shape visits nothing, a 0-d shape one row of 1.
pub fn for_each_row<const N: usize>(
    shape: &[usize],
    strides: [&[isize]; N],
    offsets: [isize; N],
    mut row: impl FnMut([isize; N], usize, [isize; N]),
) {
    if shape.contains(&0) {
        return;
    }
    let (shape, strides) = collapse(shape, strides);
    let Some((&len, outer)) = shape.split_last() else {
        row(offsets, 1, [0; N]);
        return;
    };
    let steps: [isize; N] = std::array::from_fn(|k| *strides[k].last().unwrap());
    let mut index = vec![0usize; outer.len()];
    let mut starts = offsets;
    loop {
        row(starts, len, steps);
        // Odometer increment over the outer dimensions.
        let mut d = outer.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            for k in 0..N {
                starts[k] += strides[k][d];
            }
            if index[d] < outer[d] {
                break;
            }
            for k in 0..N {
                starts[k] -= strides[k][d] * outer[d] as isize;
            }
            index[d] = 0;
        }
    }
}

/// Outputs of fewer elements are computed on the calling thread alone: below this, handing
/// half of the work to another thread costs more than it saves (measured on 2 cores with
/// the cheapest maps, copies and adds).
pub(crate) const PARALLEL_MIN: usize = 1 << 17;

/// A pointer shared by the threads of one kernel, each touching its own elements.
#[derive(Copy, Clone)]
pub(crate) struct Shared<T>(pub *mut T);
// SAFETY: kernels only read their inputs through it, or write disjoint output positions.
unsafe impl<T> Send for Shared<T> {}
unsafe impl<T> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// The pointer (a method, so that closures capture the whole `Sync` wrapper).
    pub(crate) fn get(self) -> *mut T {
        self.0
    }
}

/// Output elements per parallel task of a walk in row-major order.
const TASK_LEN: usize = 1 << 15;

/// Rows and columns of the output blocks in which operands transposed relative to the
/// output are walked, so that the cache lines each block reads are reused before eviction.
const TILE_ROWS: usize = 32;
const TILE_COLS: usize = 64;

/// Calls `run(pos, starts, len, steps)` for runs of output positions `pos..pos + len` of
/// an iteration over `shape` in row-major order, where operand `k` of that run starts at
/// element offset `starts[k]` and advances by `steps[k]`. Every output position of a
/// non-empty shape is in exactly one run; runs may come in any order and, for outputs of
/// at least [`PARALLEL_MIN`] elements, from several threads at once. (`run` is called
/// through a reference to `dyn`, once per run, so that this walk is compiled once per
/// operand count rather than once per kernel.)
pub(crate) fn par_for_each_run<const N: usize>(
    shape: &[usize],
    strides: [&[isize]; N],
    offsets: [isize; N],
    run: &(dyn Fn(usize, [isize; N], usize, [isize; N]) + Sync),
) {
    let total: usize = shape.iter().product();
    if total == 0 {
        return;
    }
    let parallel = total >= PARALLEL_MIN && parallel::threads() > 1;
    if !parallel {
        // One run when every operand is read in order or is one broadcast value: small
        // elementwise ops take this path, which spares them collapsing the layout.
        let steps = strides.map(|s| single_run_step(shape, s));
        if steps.iter().all(Option::is_some) {
            return run(0, offsets, total, steps.map(|s| s.unwrap_or_default()));
        }
    }
    let (shape, strides) = collapse(shape, strides);
    if let Some(tiles) = Tiles::plan(&shape, &strides, offsets) {
        let units = tiles.units();
        if parallel {
            let per_task = (TASK_LEN / tiles.unit_len()).max(1);
            parallel::for_each(units.div_ceil(per_task), |t| {
                (t * per_task..((t + 1) * per_task).min(units)).for_each(|u| tiles.walk(u, run))
            });
        } else {
            (0..units).for_each(|u| tiles.walk(u, run));
        }
        return;
    }
    if parallel {
        parallel::for_each(total.div_ceil(TASK_LEN), |t| {
            let end = ((t + 1) * TASK_LEN).min(total);
            walk_range(&shape, &strides, offsets, t * TASK_LEN, end, run)
        });
    } else {
        walk_range(&shape, &strides, offsets, 0, total, run);
    }
}

/// The step of an operand that covers `shape` in a single run: 1 if it is laid out in
/// row-major order, 0 if every position reads the same element, else `None`.
fn single_run_step(shape: &[usize], strides: &[isize]) -> Option<isize> {
    if is_row_major(shape, strides) {
        Some(1)
    } else if shape.iter().zip(strides).all(|(&n, &s)| n == 1 || s == 0) {
        Some(0)
    } else {
        None
    }
}

/// The runs of output positions `lo..hi` in row-major order over a collapsed layout.
fn walk_range<const N: usize>(
    shape: &[usize],
    strides: &[Vec<isize>; N],
    offsets: [isize; N],
    lo: usize,
    hi: usize,
    run: &(dyn Fn(usize, [isize; N], usize, [isize; N]) + Sync),
) {
    let Some(&inner) = shape.last() else {
        return run(0, offsets, 1, [0; N]);
    };
    let last = shape.len() - 1;
    let steps: [isize; N] = std::array::from_fn(|k| strides[k][last]);
    let mut index = vec![0usize; shape.len()];
    let mut rem = lo;
    for d in (0..shape.len()).rev() {
        index[d] = rem % shape[d];
        rem /= shape[d];
    }
    let mut starts: [isize; N] = std::array::from_fn(|k| {
        offsets[k]
            + (0..shape.len())
                .map(|d| index[d] as isize * strides[k][d])
                .sum::<isize>()
    });
    let mut pos = lo;
    loop {
        let col = index[last];
        let len = (inner - col).min(hi - pos);
        run(pos, starts, len, steps);
        pos += len;
        if pos >= hi {
            return;
        }
        // The run ended its row: back to column 0, then odometer increment of the rows.
        for k in 0..N {
            starts[k] -= col as isize * steps[k];
        }
        index[last] = 0;
        let mut d = last;
        loop {
            d -= 1;
            index[d] += 1;
            for k in 0..N {
                starts[k] += strides[k][d];
            }
            if index[d] < shape[d] {
                break;
            }
            for k in 0..N {
                starts[k] -= strides[k][d] * shape[d] as isize;
            }
            index[d] = 0;
        }
    }
}

/// A walk of a collapsed layout in blocks of [`TILE_ROWS`] x [`TILE_COLS`] output
/// elements, over the innermost output dimension (columns) and the dimension along which
/// some operand is closest to contiguous (rows).
struct Tiles<const N: usize> {
    /// Dimensions other than rows and columns, with their strides (operands, then output).
    planes: Vec<(usize, [isize; N], isize)>,
    rows: usize,
    row_strides: [isize; N],
    out_row_stride: isize,
    cols: usize,
    col_steps: [isize; N],
    offsets: [isize; N],
}

impl<const N: usize> Tiles<N> {
    /// A tiled walk, when some operand reads the output's rows with a large step but is
    /// contiguous or nearly so along another dimension (a transpose).
    fn plan(shape: &[usize], strides: &[Vec<isize>; N], offsets: [isize; N]) -> Option<Self> {
        let r = shape.len();
        if r < 2 {
            return None;
        }
        let last = r - 1;
        // The dimension with the smallest step of an operand whose row step is larger.
        let (_, row_dim) = (0..N)
            .filter(|&k| strides[k][last].unsigned_abs() > 1)
            .flat_map(|k| {
                (0..last)
                    .filter(move |&d| {
                        strides[k][d] != 0
                            && strides[k][d].unsigned_abs() < strides[k][last].unsigned_abs()
                    })
                    .map(move |d| (strides[k][d].unsigned_abs(), d))
            })
            .min()?;
        let out_strides = crate::backend::contiguous_strides(shape);
        let planes = (0..last)
            .filter(|&d| d != row_dim)
            .map(|d| {
                let s: [isize; N] = std::array::from_fn(|k| strides[k][d]);
                (shape[d], s, out_strides[d])
            })
            .collect();
        Some(Tiles {
            planes,
            rows: shape[row_dim],
            row_strides: std::array::from_fn(|k| strides[k][row_dim]),
            out_row_stride: out_strides[row_dim],
            cols: shape[last],
            col_steps: std::array::from_fn(|k| strides[k][last]),
            offsets,
        })
    }

    /// Units of work: one band of [`TILE_ROWS`] rows of one plane each.
    fn units(&self) -> usize {
        let planes: usize = self.planes.iter().map(|p| p.0).product();
        planes * self.rows.div_ceil(TILE_ROWS)
    }

    fn unit_len(&self) -> usize {
        TILE_ROWS.min(self.rows) * self.cols
    }

    fn walk(&self, unit: usize, run: &(dyn Fn(usize, [isize; N], usize, [isize; N]) + Sync)) {
        let bands = self.rows.div_ceil(TILE_ROWS);
        let (mut plane, band) = (unit / bands, unit % bands);
        let mut base = self.offsets;
        let mut out_base = 0isize;
        for &(n, s, out_s) in self.planes.iter().rev() {
            let i = (plane % n) as isize;
            plane /= n;
            for k in 0..N {
                base[k] += i * s[k];
            }
            out_base += i * out_s;
        }
        let row_range = band * TILE_ROWS..((band + 1) * TILE_ROWS).min(self.rows);
        for col in (0..self.cols).step_by(TILE_COLS) {
            let len = TILE_COLS.min(self.cols - col);
            for row in row_range.clone() {
                let starts: [isize; N] = std::array::from_fn(|k| {
                    base[k] + row as isize * self.row_strides[k] + col as isize * self.col_steps[k]
                });
                let pos = out_base + row as isize * self.out_row_stride + col as isize;
                run(pos as usize, starts, len, self.col_steps);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visits_transposed_layout_in_row_major_order() {
        // A 2x3 array stored column-major: element (i, j) at offset i + 2j.
        let mut seen = vec![];
        for_each_row([2, 3].as_slice(), [&[1isize, 2][..]], [0], |s, len, st| {
            for i in 0..len as isize {
                seen.push(s[0] + i * st[0]);
            }
        });
        assert_eq!(seen, vec![0, 2, 4, 1, 3, 5]);
    }

    #[test]
    fn merges_contiguous_dims_and_handles_scalars() {
        let mut rows = 0;
        for_each_row(&[4, 5, 6], [&[30isize, 6, 1][..]], [0], |_, len, _| {
            assert_eq!(len, 120);
            rows += 1;
        });
        assert_eq!(rows, 1);
        let mut count = 0;
        for_each_row::<1>(&[], [&[][..]], [7], |s, len, _| {
            assert_eq!((s[0], len), (7, 1));
            count += 1;
        });
        assert_eq!(count, 1);
        for_each_row(&[3, 0], [&[0isize, 1][..]], [0], |_, _, _| {
            panic!("no rows")
        });
    }

    #[test]
    fn broadcast_strides() {
        let mut seen = vec![];
        for_each_row(
            &[2, 3],
            [&[0isize, 1][..], &[1isize, 0][..]],
            [0, 0],
            |s, len, st| {
                for i in 0..len as isize {
                    seen.push((s[0] + i * st[0], s[1] + i * st[1]));
                }
            },
        );
        assert_eq!(seen, vec![(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]);
    }
}
