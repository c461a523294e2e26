//! Walking strided layouts: every elementwise kernel visits its operands one innermost row
//! at a time, after merging the dimensions that are contiguous in every operand.

/// Dimensions of `shape` merged where all operands allow it, size-1 dimensions dropped.
/// Returns the merged shape and, per operand, the merged strides.
fn collapse<const N: usize>(
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
