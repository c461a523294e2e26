//! Accuracy of every function on every path this CPU has, against f64 `std` (or `libm`)
//! rounded to f32: dense grids over each function's interesting range, random bit
//! patterns over all floats, and special values. Run with `--nocapture` for the table of
//! measured maximum errors.

use super::{apply_with, Isa, Kernel};
use crate::backend::op::UnaryOp;

/// The ops with slice kernels.
const ALL: [UnaryOp; 32] = {
    use UnaryOp::*;
    [
        Exp, Expm1, Log, Log1p, Log2, Log10, Sin, Cos, Tan, Tanh, Sinh, Cosh, Arctan, Arcsin,
        Arccos, Arcsinh, Arccosh, Arctanh, Erf, Erfinv, Sigmoid, Sqrt, Rsqrt, Floor, Ceil, Round,
        Trunc, Abs, Negative, Square, Sign, Reciprocal,
    ]
};

fn kernel(op: UnaryOp) -> Kernel {
    Kernel::of(op).expect("every op tested has a slice kernel")
}

fn reference(f: UnaryOp) -> fn(f64) -> f64 {
    use UnaryOp::*;
    match f {
        Exp => f64::exp,
        Expm1 => f64::exp_m1,
        Log => f64::ln,
        Log1p => f64::ln_1p,
        Log2 => f64::log2,
        Log10 => f64::log10,
        Sin => f64::sin,
        Cos => f64::cos,
        Tan => f64::tan,
        Tanh => f64::tanh,
        Sinh => f64::sinh,
        Cosh => f64::cosh,
        Arctan => f64::atan,
        Arcsin => f64::asin,
        Arccos => f64::acos,
        Arcsinh => f64::asinh,
        Arccosh => f64::acosh,
        Arctanh => f64::atanh,
        Erf => libm::erf,
        Erfinv => super::super::math::erfinv_f64,
        Sigmoid => |x| 1.0 / (1.0 + (-x).exp()),
        Sqrt => f64::sqrt,
        Rsqrt => |x| 1.0 / x.sqrt(),
        Floor => f64::floor,
        Ceil => f64::ceil,
        Round => f64::round_ties_even,
        Trunc => f64::trunc,
        Abs => f64::abs,
        Negative => |x| -x,
        Square => |x| x * x,
        // MLX's sign: an unsigned zero for ±0 and NaN.
        Sign => |x| {
            if x.is_nan() || x == 0.0 {
                0.0
            } else {
                x.signum()
            }
        },
        Reciprocal => |x| 1.0 / x,
        other => panic!("no reference for {other:?}"),
    }
}

/// The allowed error in ulp: exact for the rounding and sign functions, the reciprocal and
/// the square, one rounding more for rsqrt (a division after a square root), 2 for the
/// rest.
fn tolerance(f: UnaryOp) -> u32 {
    use UnaryOp::*;
    match f {
        Sqrt | Floor | Ceil | Round | Trunc | Abs | Negative | Square | Sign | Reciprocal => 0,
        Rsqrt => 1,
        _ => 2,
    }
}

/// The ranges sampled densely for `f`, beyond the random bit patterns.
fn ranges(f: UnaryOp) -> &'static [(f32, f32)] {
    use UnaryOp::*;
    match f {
        Exp | Expm1 => &[(-110.0, 95.0), (-1.0, 1.0), (-1e-3, 1e-3)],
        Log | Log2 | Log10 => &[(0.0, 4.0), (0.5, 2.0), (0.0, 1e6), (0.0, 1e-37)],
        Log1p => &[(-1.0, 4.0), (-1e-3, 1e-3), (0.0, 1e6)],
        Sin | Cos | Tan => &[
            (-10.0, 10.0),
            (-1e5, 1e5),
            (-2e6, 2e6),
            (1e6, 1.1e6),
            (-1e-3, 1e-3),
        ],
        Tanh => &[(-12.0, 12.0), (-1.0, 1.0), (-1e-3, 1e-3)],
        Sinh | Cosh => &[(-92.0, 92.0), (-2.0, 2.0), (-1e-3, 1e-3)],
        Arctan => &[(-50.0, 50.0), (-2.0, 2.0), (-1e-3, 1e-3)],
        Arcsin | Arccos => &[(-1.1, 1.1), (0.99, 1.0), (-1.0, -0.99), (-1e-3, 1e-3)],
        Arcsinh => &[
            (-20.0, 20.0),
            (-1.0, 1.0),
            (-1e-3, 1e-3),
            (2e-4, 3e-4),
            (1e30, 3e38),
        ],
        Arccosh => &[
            (0.5, 20.0),
            (1.0, 1.001),
            (1.0, 1.000_01),
            (1.9, 2.1),
            (1e30, 3e38),
        ],
        Arctanh => &[
            (-1.1, 1.1),
            (0.99, 1.0),
            (-1.0, -0.999_99),
            (-1e-3, 1e-3),
            (2e-4, 3e-4),
        ],
        Erf => &[(-5.0, 5.0), (-1.5, 1.5), (-1e-3, 1e-3)],
        Erfinv => &[
            (-1.0, 1.0),
            (0.99, 1.0),
            (-1.0, -0.999),
            (0.999_99, 1.0),
            (0.9965, 0.9968),
            (-1e-3, 1e-3),
        ],
        Sigmoid => &[(-110.0, 110.0), (-20.0, 20.0)],
        _ => &[(-1e3, 1e3), (-3.0, 3.0), (0.0, 1e-3)],
    }
}

const SPECIALS: [f32; 22] = [
    0.0,
    -0.0,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
    1.0,
    -1.0,
    0.5,
    -0.5,
    1e-45,
    -1e-45,
    1e-40,
    -3e-39,
    f32::MIN_POSITIVE,
    -f32::MIN_POSITIVE,
    f32::MAX,
    f32::MIN,
    f32::EPSILON,
    1e7,
    -3.3e9,
    1e30,
    88.72284,
];

/// Inputs for `f`: specials, 20001 points per range and 50000 random bit patterns.
fn inputs(f: UnaryOp) -> Vec<f32> {
    let mut xs = SPECIALS.to_vec();
    for &(lo, hi) in ranges(f) {
        let n = 20_000;
        xs.extend((0..=n).map(|i| lo + (hi - lo) * (i as f32 / n as f32)));
    }
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
    xs.extend((0..50_000).map(|_| f32::from_bits(next() as u32)));
    xs
}

/// Distance in representable f32 between `a` and `b` (0 for equal values; signed zeros
/// and NaN handled by the caller).
fn ulps(a: f32, b: f32) -> u32 {
    let ordered = |v: f32| {
        let bits = v.to_bits() as i64;
        if bits & 0x8000_0000 != 0 {
            -(bits & 0x7fff_ffff)
        } else {
            bits
        }
    };
    (ordered(a) - ordered(b))
        .unsigned_abs()
        .min(u32::MAX as u64) as u32
}

/// A small deterministic generator (xorshift) whose values take every bit pattern.
fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

fn paths() -> Vec<Isa> {
    [Isa::Scalar, Isa::Avx2, Isa::Avx512]
        .into_iter()
        .filter(|&isa| isa <= Isa::detected())
        .collect()
}

#[test]
fn every_function_on_every_path_is_within_tolerance() {
    let mut failures = vec![];
    for f in ALL {
        let xs = inputs(f);
        let expected: Vec<f32> = xs.iter().map(|&x| reference(f)(x as f64) as f32).collect();
        let mut line = format!("{f:>10?}:");
        for isa in paths() {
            let mut got = vec![0.0; xs.len()];
            apply_with(isa, kernel(f), &xs, &mut got);
            let mut worst = (0, 0.0f32);
            for ((&x, &e), &g) in xs.iter().zip(&expected).zip(&got) {
                let err = if e.is_nan() || g.is_nan() {
                    if e.is_nan() == g.is_nan() {
                        0
                    } else {
                        u32::MAX
                    }
                } else if e == 0.0 && e.to_bits() != g.to_bits() {
                    // A zero of the wrong sign, or a non-zero where zero is exact.
                    ulps(e, g).max(1) + 1000
                } else {
                    ulps(e, g)
                };
                if err > worst.0 {
                    worst = (err, x);
                }
            }
            line += &format!("  {isa:?} {} ulp", worst.0);
            if worst.0 > tolerance(f) {
                let x = worst.1;
                let g = {
                    let mut out = [0.0];
                    apply_with(isa, kernel(f), &[x], &mut out);
                    out[0]
                };
                failures.push(format!(
                    "{f:?} on {isa:?}: {} ulp at x = {x:e} ({:#x}): got {g:e}, expected {:e}",
                    worst.0,
                    x.to_bits(),
                    reference(f)(x as f64) as f32
                ));
            }
        }
        println!("{line}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn tails_and_in_place_match_whole_vectors() {
    let xs: Vec<f32> = (0..53).map(|i| i as f32 * 0.37 - 9.0).collect();
    for isa in paths() {
        for f in ALL {
            let mut whole = vec![0.0; xs.len()];
            apply_with(isa, kernel(f), &xs, &mut whole);
            for n in 0..xs.len() {
                let mut part = vec![0.0; n];
                apply_with(isa, kernel(f), &xs[..n], &mut part);
                let same = part
                    .iter()
                    .zip(&whole)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same, "{f:?} on {isa:?}, length {n}");
            }
        }
    }
}

#[test]
fn threaded_split_matches_one_pass() {
    use super::{apply, apply_in_place, PARALLEL_MIN};
    let n = 2 * PARALLEL_MIN + 37;
    let xs: Vec<f32> = (0..n).map(|i| (i as f32 * 1e-4).sin() * 30.0).collect();
    for f in [UnaryOp::Exp, UnaryOp::Sin, UnaryOp::Sqrt].map(kernel) {
        let mut one = vec![0.0; n];
        apply_with(Isa::active(), f, &xs, &mut one);
        let mut split = vec![0.0; n];
        apply(f, &xs, &mut split);
        let mut in_place = xs.clone();
        apply_in_place(f, &mut in_place);
        let same = |v: &[f32]| v.iter().zip(&one).all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same(&split) && same(&in_place), "{f:?}");
    }
}

/// The unpackings `kernel` has, whatever the floating-point flags of this thread.
fn unpackings(kernel: super::PackedDots) -> Vec<super::packed::Unpacking> {
    let mut all = vec![super::packed::Unpacking::Converted];
    if kernel.subnormal_levels {
        all.push(super::packed::Unpacking::Subnormal);
    }
    all
}

#[test]
fn packed_dots_on_every_path_match_unpacked_sums() {
    use super::{packed_dots_of, PackedRows};
    let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
    for isa in paths() {
        let Some(kernel) = packed_dots_of(isa) else {
            assert_eq!(isa, Isa::Scalar, "a vector path without packed dots");
            continue;
        };
        let lanes = kernel.lanes;
        for bits in [2usize, 4, 8] {
            let per = 32 / bits;
            for words_per_group in [lanes / 4, lanes / 2, lanes, 2 * lanes] {
                // One row, and several rows whose scales follow one another.
                for (rows, words_per_row) in [(1, 4 * lanes), (3, 2 * lanes), (5, 6 * lanes)] {
                    if !words_per_row.is_multiple_of(words_per_group) {
                        continue;
                    }
                    let words: Vec<u32> =
                        (0..rows * words_per_row).map(|_| next() as u32).collect();
                    let groups = rows * words_per_row / words_per_group;
                    // Large weights too, whose sums the kernels' scalings must not overflow.
                    let weights = if rows == 5 { 1e8 } else { 1.0 };
                    let scales: Vec<f32> = (0..groups + super::SCALE_PADDING)
                        .map(|_| ((next() % 1000) as f32 / 500.0 - 1.0) * weights)
                        .collect();
                    let biases: Vec<f32> = (0..groups)
                        .map(|_| ((next() % 1000) as f32 / 250.0 - 2.0) * weights)
                        .collect();
                    let packed = PackedRows {
                        words: &words,
                        words_per_row,
                        scales: &scales,
                        biases: &biases,
                        words_per_group,
                    };
                    for vectors in 1..=super::MAX_VECTORS {
                        // Vectors of very different magnitudes: the layout scales each.
                        let magnitudes = [1.0, 2f32.powi(-70), 2f32.powi(90), 3e-3];
                        let xs: Vec<Vec<f32>> = (0..vectors)
                            .map(|i| {
                                (0..words_per_row * per)
                                    .map(|_| {
                                        ((next() % 2000) as f32 / 1000.0 - 1.0) * magnitudes[i]
                                    })
                                    .collect()
                            })
                            .collect();
                        let laid_out: Vec<_> = xs
                            .iter()
                            .map(|x| kernel.lay_out(x, bits, words_per_group * per))
                            .collect();
                        let refs: Vec<_> = laid_out.iter().collect();
                        let mut first: Option<Vec<f32>> = None;
                        for unpacking in unpackings(kernel) {
                            let mut got = vec![0.0; rows * vectors];
                            (kernel.dots)(bits, &packed, &refs, unpacking, &mut got);
                            // The unpackings differ only by exact powers of two.
                            let first = first.get_or_insert_with(|| got.clone());
                            assert_eq!(
                                got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                                first.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                                "{isa:?} {unpacking:?} bits {bits} group {words_per_group}"
                            );
                            for r in 0..rows {
                                for (i, x) in xs.iter().enumerate() {
                                    // Element e of row r is level e % per of word e / per.
                                    let want: f64 = (0..words_per_row * per)
                                        .map(|e| {
                                            let w = r * words_per_row + e / per;
                                            let level =
                                                (words[w] >> (e % per * bits)) & ((1 << bits) - 1);
                                            let g = w / words_per_group;
                                            (scales[g] as f64 * level as f64 + biases[g] as f64)
                                                * x[e] as f64
                                        })
                                        .sum();
                                    let g = got[r * vectors + i];
                                    let magnitude = magnitudes[i] as f64 * weights as f64;
                                    assert!(
                                        (g as f64 - want).abs() <= 1e-4 * (magnitude + want.abs()),
                                        "{isa:?} {unpacking:?} bits {bits} group \
                                     {words_per_group} row {r}: {g} vs {want}"
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn byte_dots_match_dequantized_sums() {
    use super::{bf16_rows_fit, byte_dots, AffineRows, BFloat16Vector};
    let Some(kernel) = byte_dots() else {
        return;
    };
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
    // bfloat16 bits of a value in [-1, 1) (halved for scales).
    let mut value = |scale: f32| {
        let v = ((next() % 2000) as f32 / 1000.0 - 1.0) * scale;
        (v.to_bits() >> 16) as u16
    };
    let widen = |b: u16| f32::from_bits(u32::from(b) << 16) as f64;
    let mut words_of = xorshift(0x2545_f491_4f6c_dd1du64);
    let mut checked = 0;
    for bits in [2usize, 4, 8] {
        for group_size in [32usize, 64, 128] {
            for (rows, levels) in [
                (1, 256),
                (3, 512),
                (5, 768),
                (2, 1024),
                (19, 256),
                (4, 1152),
                (3, 1344),
            ] {
                if !bf16_rows_fit(bits, levels, group_size) {
                    continue;
                }
                let words_per_row = levels * bits / 32;
                let words: Vec<u32> = (0..rows * words_per_row)
                    .map(|_| words_of() as u32)
                    .collect();
                let groups = rows * levels / group_size;
                let scales: Vec<u16> = (0..groups).map(|_| value(0.5)).collect();
                let biases: Vec<u16> = (0..groups).map(|_| value(1.0)).collect();
                let matrix = AffineRows {
                    words: &words,
                    words_per_row,
                    scales: &scales,
                    biases: &biases,
                    bits,
                    group_size,
                };
                for vectors in 1..=super::MAX_VECTORS {
                    // Vectors of very different magnitudes, subnormal and near the limit
                    // too, and with an infinity or a NaN, which the fixed-point layout
                    // leaves to a separate sum.
                    let magnitudes = [1.0, 2f32.powi(-130), 2f32.powi(112), 3e-3];
                    let mut xs: Vec<Vec<u16>> = (0..vectors)
                        .map(|i| (0..levels).map(|_| value(magnitudes[i])).collect())
                        .collect();
                    match vectors {
                        3 => xs[2][levels / 3] = 0xFF80,
                        4 => xs[3][5] = 0x7FC0,
                        _ => {}
                    }
                    let laid_out: Vec<BFloat16Vector> = xs
                        .iter()
                        .map(|x| BFloat16Vector::new(x, bits, group_size).unwrap())
                        .collect();
                    let refs: Vec<&BFloat16Vector> = laid_out.iter().collect();
                    let mut got = vec![0.0; rows * vectors];
                    (kernel.dots)(&matrix, &refs, &mut got);
                    for r in 0..rows {
                        for (i, x) in xs.iter().enumerate() {
                            // Each value's largest error in fixed point: 2^-14 of its
                            // group's largest finite magnitude.
                            let group_error: Vec<f64> = x
                                .chunks(group_size)
                                .map(|g| {
                                    let finite = g.iter().map(|&b| widen(b).abs());
                                    finite.filter(|v| v.is_finite()).fold(0.0, f64::max)
                                        * 2f64.powi(-14)
                                })
                                .collect();
                            // The sum, the sum of the terms' sizes that f32 rounding is
                            // relative to, and the fixed point's bound.
                            let (want, size, bound) = (0..levels)
                                .map(|e| {
                                    let per = 32 / bits;
                                    let w = words[r * words_per_row + e / per];
                                    let level = (w >> (e % per * bits)) & ((1 << bits) - 1);
                                    let g = (r * levels + e) / group_size;
                                    let weight = widen(scales[g]) * level as f64 + widen(biases[g]);
                                    let error = weight.abs() * group_error[e / group_size];
                                    (weight * widen(x[e]), error)
                                })
                                .fold((0.0, 0.0, 0.0), |(sum, size, bound), (t, error)| {
                                    (sum + t, size + t.abs(), bound + error)
                                });
                            let g = got[r * vectors + i] as f64;
                            let close = match want.is_finite() {
                                true => (g - want).abs() <= 1e-5 * size + bound + 1e-45,
                                false => g == want || (g.is_nan() && want.is_nan()),
                            };
                            assert!(
                                close,
                                "bits {bits} group {group_size} row {r}: {g} vs {want} (size {size})"
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    // Every bit width and group size above has some row length the kernel takes.
    assert!(checked > 100, "{checked}");
}

#[test]
fn bfloat16_pair_dots_match_widened_sums() {
    use super::{RowElements, StridedRows};
    let Some(kernel) = super::packed_bf16_dots() else {
        return;
    };
    let mut state = xorshift(0x2545_f491_4f6c_dd1du64);
    let mut next = move || (((state() % 2000) as f32 / 1000.0 - 1.0).to_bits() >> 16) as u16;
    let widen = |b: u16| f32::from_bits(u32::from(b) << 16) as f64;
    // Widths with and without a tail of the 32-value steps; row counts around the passes
    // of 4 rows and the blocks of 16 summed together; strides wider than the rows.
    for width in [0usize, 1, 31, 32, 33, 128, 200, 1000] {
        for count in [0usize, 1, 3, 4, 5, 15, 16, 17, 37] {
            for stride in [width, width + 5] {
                let data: Vec<u16> = (0..count * stride).map(|_| next()).collect();
                let rows = StridedRows {
                    data: RowElements::BFloat16(&data),
                    count,
                    width,
                    stride,
                };
                for vectors in 1..=super::MAX_VECTORS {
                    let xs: Vec<Vec<u16>> = (0..vectors)
                        .map(|_| (0..width + 3).map(|_| next()).collect())
                        .collect();
                    let refs: Vec<&[u16]> = xs.iter().map(|x| &x[..]).collect();
                    let mut got = vec![f32::NAN; vectors * count];
                    (kernel.dots)(&rows, &refs, &mut got);
                    for (i, x) in xs.iter().enumerate() {
                        for j in 0..count {
                            let row = &data[j * stride..][..width];
                            let want: f64 =
                                row.iter().zip(x).map(|(&a, &b)| widen(a) * widen(b)).sum();
                            let g = got[i * count + j] as f64;
                            assert!(
                                (g - want).abs() <= 1e-4 * (1.0 + want.abs()),
                                "width {width}, row {j} of {count}, vector {i}: {g} vs {want}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn attention_products_on_every_path_match_widened_sums() {
    use super::{attention, attention_products_of, AttentionProducts, RowElements, StridedRows};
    let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
    let mut value = move || (next() % 2000) as f32 / 1000.0 - 1.0;
    let portable = AttentionProducts {
        scores: attention::scores_portable,
        weighted_sum: attention::weighted_sum_portable,
    };
    let mut kernels: Vec<(String, AttentionProducts)> = vec![("portable".into(), portable)];
    for isa in paths() {
        if let Some(k) = attention_products_of(isa) {
            kernels.push((format!("{isa:?}"), k));
        }
    }
    // Widths of whole tiles, single vectors and scalar tails, and rows spaced wider than
    // they are (a cache's slice).
    for (count, width, gap) in [
        (1, 64, 0),
        (7, 1, 2),
        (20, 15, 0),
        (33, 17, 5),
        (5, 80, 16),
        (300, 128, 0),
        (9, 100, 3),
    ] {
        let stride = width + gap;
        let floats: Vec<f32> = (0..count * stride).map(|_| value()).collect();
        let f16s: Vec<u16> = floats
            .iter()
            .map(|&v| half::f16::from_f32(v).to_bits())
            .collect();
        let bf16s: Vec<u16> = floats
            .iter()
            .map(|&v| half::bf16::from_f32(v).to_bits())
            .collect();
        type Widened = fn(usize, &[f32], &[u16], &[u16]) -> f64;
        let formats: [(&str, RowElements<'_>, Widened); 3] = [
            ("float32", RowElements::Float32(&floats), |e, f, _, _| {
                f[e] as f64
            }),
            ("float16", RowElements::Float16(&f16s), |e, _, h, _| {
                half::f16::from_bits(h[e]).to_f64()
            }),
            ("bfloat16", RowElements::BFloat16(&bf16s), |e, _, _, b| {
                half::bf16::from_bits(b[e]).to_f64()
            }),
        ];
        for (format, data, widened) in formats {
            let rows = StridedRows {
                data,
                count,
                width,
                stride,
            };
            let element = |j: usize, d: usize| widened(j * stride + d, &floats, &f16s, &bf16s);
            for vectors in 1..=super::MAX_VECTORS {
                // Queries longer than the rows: only their width counts.
                let queries: Vec<Vec<f32>> = (0..vectors)
                    .map(|_| (0..width + 3).map(|_| value()).collect())
                    .collect();
                let weights: Vec<Vec<f32>> = (0..vectors)
                    .map(|_| (0..count).map(|_| value()).collect())
                    .collect();
                let query_refs: Vec<&[f32]> = queries.iter().map(|q| &q[..]).collect();
                let weight_refs: Vec<&[f32]> = weights.iter().map(|w| &w[..]).collect();
                for (name, kernel) in &kernels {
                    let mut scores = vec![f32::NAN; vectors * count];
                    (kernel.scores)(&rows, &query_refs, &mut scores);
                    let mut sums = vec![f32::NAN; vectors * width];
                    (kernel.weighted_sum)(&rows, &weight_refs, &mut sums);
                    for i in 0..vectors {
                        for j in 0..count {
                            let want: f64 = (0..width)
                                .map(|d| element(j, d) * queries[i][d] as f64)
                                .sum();
                            let got = scores[i * count + j] as f64;
                            assert!(
                                (got - want).abs() <= 1e-5 * (1.0 + width as f64),
                                "{name} {format} width {width} scores {i},{j}: {got} vs {want}"
                            );
                        }
                        for d in 0..width {
                            let want: f64 = (0..count)
                                .map(|j| element(j, d) * weights[i][j] as f64)
                                .sum();
                            let got = sums[i * width + d] as f64;
                            assert!(
                                (got - want).abs() <= 1e-5 * (1.0 + count as f64),
                                "{name} {format} width {width} sums {i},{d}: {got} vs {want}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn half_dots_on_every_path_match_widened_sums() {
    use super::{half_dots_of, Half};
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
    for isa in paths() {
        let Some(kernel) = half_dots_of(isa) else {
            continue;
        };
        for format in [Half::BFloat16, Half::Float16] {
            // Whole double steps, single vectors and scalar tails, and a row shorter
            // than one vector.
            for len in [0usize, 3, 8, 16, 31, 32, 33, 64, 100, 1027] {
                let row: Vec<u16> = (0..len)
                    .map(|_| {
                        let v = (next() % 2000) as f32 / 1000.0 - 1.0;
                        match format {
                            Half::BFloat16 => half::bf16::from_f32(v).to_bits(),
                            Half::Float16 => half::f16::from_f32(v).to_bits(),
                        }
                    })
                    .collect();
                let widened: Vec<f64> = row
                    .iter()
                    .map(|&b| match format {
                        Half::BFloat16 => half::bf16::from_bits(b).to_f64(),
                        Half::Float16 => half::f16::from_bits(b).to_f64(),
                    })
                    .collect();
                for vectors in 1..=super::MAX_VECTORS {
                    // Vectors longer than the row: only its length counts.
                    let xs: Vec<Vec<f32>> = (0..vectors)
                        .map(|_| {
                            (0..len + 5)
                                .map(|_| (next() % 2000) as f32 / 1000.0 - 1.0)
                                .collect()
                        })
                        .collect();
                    let refs: Vec<&[f32]> = xs.iter().map(|x| &x[..]).collect();
                    let mut got = vec![f32::NAN; vectors];
                    (kernel.dots)(format, &row, &refs, &mut got);
                    for (x, g) in xs.iter().zip(&got) {
                        let want: f64 = widened.iter().zip(x).map(|(w, &x)| w * x as f64).sum();
                        assert!(
                            (*g as f64 - want).abs() <= 1e-5 * (1.0 + len as f64),
                            "{isa:?} {format:?} length {len}: {g} vs {want}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn bfloat16_tiles_match_float64_products() {
    use super::{bf16_tiles, TILE_COLUMNS};
    let Some(kernel) = bf16_tiles() else {
        return;
    };
    let mut next = xorshift(0x51_7cc1_b727_220au64);
    let mut value = || {
        let v = (next() % 2000) as f32 / 1000.0 - 1.0;
        (v.to_bits() >> 16) as u16
    };
    let widen = |b: u16| f64::from(f32::from_bits(u32::from(b) << 16));
    for (m, columns, pairs) in [
        (1, 32, 16),
        (13, 32, 40),
        (8, 5, 3),
        (17, 29, 64),
        (3, 1, 1),
        // Where matrix tiles run the product: row and column counts on either side of a
        // tile's 16 and a block's 32.
        (16, 16, 16),
        (33, 32, 32),
        (48, 17, 48),
        (70, 31, 16),
    ] {
        let (k, w_stride, x_stride) = (2 * pairs, 2 * pairs + 6, 2 * pairs + 2);
        let w: Vec<u16> = (0..columns * w_stride).map(|_| value()).collect();
        let x: Vec<u16> = (0..m * x_stride).map(|_| value()).collect();
        let mut packed = vec![u32::MAX; pairs * TILE_COLUMNS];
        (kernel.pack)(&w, w_stride, columns, pairs, &mut packed);
        let c_stride = columns + 3;
        let mut c = vec![f32::NAN; m * c_stride];
        // SAFETY: c holds m rows of c_stride >= columns values.
        unsafe {
            (kernel.multiply)(
                &x,
                x_stride,
                m,
                &packed,
                pairs,
                columns,
                c.as_mut_ptr(),
                c_stride,
            )
        };
        for i in 0..m {
            for j in 0..c_stride {
                let got = c[i * c_stride + j];
                if j >= columns {
                    assert!(got.is_nan(), "column {j} past the block was written");
                    continue;
                }
                let (mut want, mut magnitude) = (0.0, 0.0);
                for d in 0..k {
                    let term = widen(x[i * x_stride + d]) * widen(w[j * w_stride + d]);
                    want += term;
                    magnitude += term.abs();
                }
                assert!(
                    (f64::from(got) - want).abs() <= 1e-6 * magnitude.max(1.0),
                    "m {m} columns {columns} pairs {pairs}: ({i}, {j}) {got} vs {want}"
                );
            }
        }
    }
}

#[test]
fn bfloat16_tiles_pack_columns_as_the_transpose_packs_rows() {
    use super::{bf16_tiles, TILE_COLUMNS};
    let Some(kernel) = bf16_tiles() else {
        return;
    };
    let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
    for (columns, pairs, b_stride) in [
        (32, 16, 32),
        (32, 3, 40),
        (5, 7, 9),
        (1, 1, 1),
        (29, 64, 100),
    ] {
        let k = 2 * pairs;
        // b is k x b_stride, row-major; W = b^T restricted to the block's columns.
        let b: Vec<u16> = (0..k * b_stride).map(|_| next() as u16).collect();
        let w: Vec<u16> = (0..columns)
            .flat_map(|j| (0..k).map(move |d| (j, d)))
            .map(|(j, d)| b[d * b_stride + j])
            .collect();
        let (mut from_columns, mut from_rows) = (
            vec![u32::MAX; pairs * TILE_COLUMNS],
            vec![u32::MAX; pairs * TILE_COLUMNS],
        );
        (kernel.pack_columns)(&b, b_stride, columns, pairs, &mut from_columns);
        (kernel.pack)(&w, k, columns, pairs, &mut from_rows);
        assert_eq!(from_columns, from_rows, "columns {columns} pairs {pairs}");
    }
}

#[test]
fn bfloat16_level_tiles_match_float64_affine_products() {
    use super::{bf16_tiles, level_offset, GroupedTile, TILE_COLUMNS};
    let Some(kernel) = bf16_tiles() else {
        return;
    };
    let mut next = xorshift(0x2f0b_3c8a_77e1_d905u64);
    let mut value = |scale: f32| {
        let v = ((next() % 2000) as f32 / 1000.0 - 1.0) * scale;
        (v.to_bits() >> 16) as u16
    };
    let widen = |b: u16| f64::from(f32::from_bits(u32::from(b) << 16));
    let mut words_of = xorshift(0x6a09_e667_f3bc_c908u64);
    for bits in [4usize, 8] {
        for (m, columns, k, group_size) in [(5, 32, 64, 32), (9, 7, 256, 64), (4, 19, 384, 128)] {
            let (pairs, group_pairs, groups) = (k / 2, group_size / 2, k / group_size);
            let words_per_row = k * bits / 32 + 3;
            let words: Vec<u32> = (0..columns * words_per_row)
                .map(|_| words_of() as u32)
                .collect();
            let level = |j: usize, d: usize| {
                let per = 32 / bits;
                (words[j * words_per_row + d / per] >> (bits * (d % per))) & ((1 << bits) - 1)
            };
            let x_stride = k + 4;
            let x: Vec<u16> = (0..m * x_stride).map(|_| value(1.0)).collect();
            let s: Vec<f32> = (0..columns * groups)
                .map(|_| widen(value(0.1)) as f32)
                .collect();
            let b: Vec<f32> = (0..columns * groups)
                .map(|_| widen(value(1.0)) as f32)
                .collect();
            let mut scales = vec![0.0f32; groups * TILE_COLUMNS];
            let mut offsets = vec![0.0f32; groups * TILE_COLUMNS];
            for g in 0..groups {
                for j in 0..columns {
                    let (sj, bj) = (s[j * groups + g], b[j * groups + g]);
                    scales[g * TILE_COLUMNS + j] = sj;
                    offsets[g * TILE_COLUMNS + j] = bj - level_offset(bits) * sj;
                }
            }
            let sums: Vec<f32> = (0..m * groups)
                .map(|e| {
                    let (i, g) = (e / groups, e % groups);
                    (g * group_size..(g + 1) * group_size)
                        .map(|d| widen(x[i * x_stride + d]) as f32)
                        .sum()
                })
                .collect();
            let mut packed = vec![u32::MAX; pairs * TILE_COLUMNS];
            (kernel.pack_levels)(&words, words_per_row, bits, columns, pairs, &mut packed);
            let c_stride = columns + 1;
            let mut c = vec![f32::NAN; m * c_stride];
            let tile = GroupedTile {
                x: &x,
                x_stride,
                m,
                packed: &packed,
                pairs,
                columns,
                group_pairs,
                scales: &scales,
                offsets: &offsets,
                sums: &sums,
            };
            // SAFETY: c holds m rows of c_stride >= columns values.
            unsafe { (kernel.multiply_groups)(tile, c.as_mut_ptr(), c_stride) };
            for i in 0..m {
                assert!(c[i * c_stride + columns].is_nan());
                for j in 0..columns {
                    let (mut want, mut magnitude) = (0.0, 0.0);
                    for d in 0..k {
                        let g = d / group_size;
                        let w = f64::from(s[j * groups + g]) * f64::from(level(j, d))
                            + f64::from(b[j * groups + g]);
                        let term = widen(x[i * x_stride + d]) * w;
                        want += term;
                        magnitude += term.abs();
                    }
                    let got = f64::from(c[i * c_stride + j]);
                    assert!(
                        (got - want).abs() <= 1e-5 * magnitude.max(1.0),
                        "{bits}-bit m {m} columns {columns} k {k}: ({i}, {j}) {got} vs {want}"
                    );
                }
            }
        }
    }
}

#[test]
fn dequantized_tiles_pack_the_rounded_affine_weights() {
    use super::{bf16_tiles, AffineRows, TILE_COLUMNS};
    let Some(kernel) = bf16_tiles() else {
        return;
    };
    let mut next = xorshift(0x3c6e_f372_fe94_f82bu64);
    let bf16_bits = |v: f32| half::bf16::from_f32(v).to_bits();
    for bits in [4usize, 8] {
        for (rows, k, group_size, extra_words) in
            [(32, 64, 32, 0), (7, 256, 64, 3), (19, 384, 128, 1)]
        {
            let (pairs, groups) = (k / 2, k / group_size);
            let words_per_row = k * bits / 32 + extra_words;
            let groups_per_row = words_per_row * 32 / bits / group_size;
            let words: Vec<u32> = (0..rows * words_per_row).map(|_| next() as u32).collect();
            let mut factor = || bf16_bits(((next() % 2000) as f32 / 1000.0 - 1.0) * 0.3);
            let scales: Vec<u16> = (0..rows * groups_per_row).map(|_| factor()).collect();
            let biases: Vec<u16> = (0..rows * groups_per_row).map(|_| factor()).collect();
            let levels = AffineRows {
                words: &words,
                words_per_row,
                scales: &scales,
                biases: &biases,
                bits,
                group_size,
            };
            // The oracle: each weight in f32 (one rounding, as a fused multiply-add), then
            // rounded to bfloat16, packed by the dense packer.
            let widen = |b: u16| f32::from_bits(u32::from(b) << 16);
            let weights: Vec<u16> = (0..rows * k)
                .map(|e| {
                    let (r, d) = (e / k, e % k);
                    let per = 32 / bits;
                    let word = words[r * words_per_row + d / per];
                    let level = (word >> (bits * (d % per))) & ((1 << bits) - 1);
                    let g = r * groups_per_row + d / group_size;
                    bf16_bits((level as f32).mul_add(widen(scales[g]), widen(biases[g])))
                })
                .collect();
            let mut want = vec![u32::MAX; pairs * TILE_COLUMNS];
            (kernel.pack)(&weights, k, rows, pairs, &mut want);
            let mut got = vec![u32::MAX; pairs * TILE_COLUMNS];
            (kernel.pack_dequantized)(&levels, rows, pairs, &mut got);
            assert_eq!(
                got, want,
                "{bits}-bit rows {rows} k {k} group {group_size} ({groups} groups)"
            );
        }
    }
}
