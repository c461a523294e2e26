//! Random numbers: Threefry known answers, equality with numbers drawn by real MLX
//! (fixtures from tools/fixtures/random.py), statistics of each distribution at fixed
//! keys, argument errors, vmap over keys, and independence from threading.

mod common;

use common::{array_from_json, load_fixture};
use lazulite::random::{self, key};
use lazulite::{Array, DType, ErrorKind, Operand};
use serde_json::Value;

#[test]
fn threefry_matches_random123_known_answers() {
    // Random123's kat_vectors, "threefry2x32 20": (counter, key) -> output.
    let cases = [
        ([0, 0], [0, 0], [0x6b20_0159, 0x99ba_4efe]),
        (
            [0xffff_ffff, 0xffff_ffff],
            [0xffff_ffff, 0xffff_ffff],
            [0x1cb9_96fc, 0xbb00_2be7],
        ),
        (
            [0x243f_6a88, 0x85a3_08d3],
            [0x1319_8a2e, 0x0370_7344],
            [0xc492_3a9c, 0x483d_f7a0],
        ),
    ];
    for (ctr, k, out) in cases {
        assert_eq!(
            random::threefry2x32(k, ctr),
            out,
            "key {k:x?} counter {ctr:x?}"
        );
    }
}

fn f(v: f64) -> Option<Operand> {
    Some(Operand::from(v))
}

/// The lazulite call for each fixture case, made exactly as the generator made it.
fn lazulite_case(name: &str) -> Array {
    use random::*;
    let k = |s: u64| Some(key(s));
    let arr = |v: &[f32], shape: &[usize]| Array::from_slice(v, shape).unwrap();
    let iarr = |v: &[i32], shape: &[usize]| Array::from_slice(v, shape).unwrap();
    let r = match name {
        "key_0" => Ok(key(0)),
        "key_big" => Ok(key((5 << 32) | 7)),
        "key_max" => Ok(key(u64::MAX)),
        "split_0_1" => split(&key(0), 1),
        "split_0_2" => split(&key(0), 2),
        "split_7_3" => split(&key(7), 3),
        "split_7_8" => split(&key(7), 8),
        "split_max_5" => split(&key(u64::MAX), 5),
        "uniform_f32_1" => uniform(0, 1, &[1], DType::Float32, k(1).as_ref()),
        "uniform_f32_7" => uniform(0, 1, &[7], DType::Float32, k(1).as_ref()),
        "uniform_f32_2x3" => uniform(0, 1, &[2, 3], DType::Float32, k(2).as_ref()),
        "uniform_f32_1000" => uniform(0, 1, &[1000], DType::Float32, k(3).as_ref()),
        "uniform_f32_scalar" => uniform(0, 1, &[], DType::Float32, k(4).as_ref()),
        "uniform_range" => uniform(-2, 3, &[9], DType::Float32, k(5).as_ref()),
        "uniform_low_gt_high" => uniform(2, 1, &[5], DType::Float32, k(5).as_ref()),
        "uniform_array_bounds" => uniform(
            &arr(&[0.0, 1.0], &[2]),
            3,
            &[3, 2],
            DType::Float32,
            k(6).as_ref(),
        ),
        "uniform_f16" => uniform(0, 1, &[11], DType::Float16, k(7).as_ref()),
        "uniform_bf16" => uniform(0, 1, &[11], DType::BFloat16, k(7).as_ref()),
        "uniform_f16_range" => uniform(-1, 5, &[6], DType::Float16, k(8).as_ref()),
        "normal_f32" => normal(&[9], DType::Float32, None, None, k(1).as_ref()),
        "normal_f32_1000" => normal(&[1000], DType::Float32, None, None, k(9).as_ref()),
        "normal_loc_scale" => normal(&[5], DType::Float32, f(1.0), f(2.0), k(1).as_ref()),
        "normal_loc_array" => normal(
            &[3],
            DType::Float32,
            Some(iarr(&[1, 2, 3], &[3]).into()),
            None,
            k(1).as_ref(),
        ),
        "normal_f16" => normal(&[7], DType::Float16, None, None, k(2).as_ref()),
        "normal_bf16" => normal(&[7], DType::BFloat16, None, None, k(2).as_ref()),
        "normal_f64" => normal(&[7], DType::Float64, None, None, k(2).as_ref()),
        "normal_c64" => normal(&[5], DType::Complex64, None, None, k(3).as_ref()),
        "randint_0_10" => randint(0, 10, &[20], DType::Int32, k(1).as_ref()),
        "randint_neg" => randint(-50, 50, &[4, 5], DType::Int32, k(2).as_ref()),
        "randint_int64" => randint(-5, 5, &[9], DType::Int64, k(3).as_ref()),
        "randint_uint8" => randint(0, 200, &[9], DType::UInt8, k(3).as_ref()),
        "randint_big" => randint(-(1 << 30), 1 << 30, &[9], DType::Int32, k(4).as_ref()),
        "randint_array_bounds" => randint(
            &iarr(&[0, 10, 100], &[3]),
            &iarr(&[5, 20, 1000], &[3]),
            &[2, 3],
            DType::Int32,
            k(5).as_ref(),
        ),
        "randint_array_empty" => randint(
            &iarr(&[10, 0], &[2]),
            &iarr(&[0, 3], &[2]),
            &[2],
            DType::Int32,
            k(5).as_ref(),
        ),
        "bernoulli_03" => bernoulli(0.3, Some(&[20]), k(1).as_ref()),
        "bernoulli_array" => bernoulli(&arr(&[0.1, 0.5, 0.9], &[3]), Some(&[4, 3]), k(2).as_ref()),
        "bernoulli_default_shape" => {
            bernoulli(&arr(&[0.0, 1.0, 0.5, 0.25], &[4]), None, k(3).as_ref())
        }
        "bernoulli_default" => bernoulli(0.5, None, k(4).as_ref()),
        "truncated_normal" => truncated_normal(-1, 1, Some(&[9]), DType::Float32, k(1).as_ref()),
        "truncated_normal_arrays" => truncated_normal(
            &arr(&[-2.0, 0.0], &[2]),
            &arr(&[0.5, 3.0], &[2, 1]),
            None,
            DType::Float32,
            k(2).as_ref(),
        ),
        "truncated_normal_f16" => {
            truncated_normal(-0.5, 2, Some(&[6]), DType::Float16, k(3).as_ref())
        }
        "gumbel" => gumbel(&[9], DType::Float32, k(1).as_ref()),
        "gumbel_f16" => gumbel(&[6], DType::Float16, k(2).as_ref()),
        "laplace" => laplace(&[9], DType::Float32, 0.0, 1.0, k(1).as_ref()),
        "laplace_loc_scale" => laplace(&[6], DType::Float32, 1.0, 3.0, k(2).as_ref()),
        "laplace_f16" => laplace(&[6], DType::Float16, 0.0, 1.0, k(3).as_ref()),
        other => panic!("no lazulite call for fixture case {other}"),
    };
    r.unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Exact equality with a fixture array. The expected values go through the fixture's
/// dtype first, which also absorbs the last-digit slack of JSON float parsing.
fn assert_bit_identical(got: &Array, expected: &Value, name: &str) {
    let want = array_from_json(expected);
    assert_eq!(
        (got.dtype(), got.shape()),
        (want.dtype(), want.shape()),
        "{name}"
    );
    if got.dtype() == DType::Int64 {
        assert_eq!(
            got.to_vec::<i64>().unwrap(),
            want.to_vec::<i64>().unwrap(),
            "{name}"
        );
    } else {
        assert_eq!(
            got.to_vec::<f64>().unwrap(),
            want.to_vec::<f64>().unwrap(),
            "{name}"
        );
    }
}

/// Cases that must equal MLX bit for bit: everything that does not go through a
/// transcendental function.
const EXACT_PREFIXES: [&str; 6] = [
    "key_",
    "split_",
    "uniform_",
    "randint_",
    "bernoulli_",
    "seed42",
];

fn cases() -> serde_json::Map<String, Value> {
    load_fixture("random")["cases"].as_object().unwrap().clone()
}

#[test]
fn keys_bits_uniform_randint_bernoulli_equal_mlx_bit_for_bit() {
    let mut checked = 0;
    for (name, expected) in cases() {
        if name.starts_with("seed42") || !EXACT_PREFIXES.iter().any(|p| name.starts_with(p)) {
            continue;
        }
        assert_bit_identical(&lazulite_case(&name), &expected, &name);
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} exact cases");
}

/// Distance in units in the last place between two floats of `dtype`.
fn ulps(a: f64, b: f64, dtype: DType) -> u64 {
    if a == b || (a.is_nan() && b.is_nan()) {
        return 0;
    }
    let ordered = |bits: i64| if bits < 0 { i64::MIN - bits } else { bits };
    match dtype {
        // Float64 samples are drawn in float32 (as in MLX): compare at that precision.
        DType::Float32 | DType::Float64 => {
            let o = |x: f64| ordered((x as f32).to_bits() as i32 as i64);
            (o(a) - o(b)).unsigned_abs()
        }
        // Half precision: measure in float32 ulps scaled to the 10/7-bit mantissas.
        DType::Float16 => ulps(a, b, DType::Float32) >> 13,
        _ => ulps(a, b, DType::Float32) >> 16,
    }
}

#[test]
fn transcendental_distributions_agree_with_mlx_to_a_few_ulps() {
    let mut exact = 0usize;
    let mut total = 0usize;
    for (name, expected) in cases() {
        if EXACT_PREFIXES.iter().any(|p| name.starts_with(p)) {
            continue;
        }
        let got = lazulite_case(&name);
        let want = array_from_json(&expected);
        assert_eq!(got.dtype(), want.dtype(), "{name}");
        assert_eq!(got.shape(), want.shape(), "{name}");
        let (g, w) = if got.dtype() == DType::Complex64 {
            let split = |a: &Array| -> Vec<f64> {
                a.to_vec::<lazulite::Complex>()
                    .unwrap()
                    .iter()
                    .flat_map(|c| [c.re as f64, c.im as f64])
                    .collect()
            };
            (split(&got), split(&want))
        } else {
            (got.to_vec::<f64>().unwrap(), want.to_vec::<f64>().unwrap())
        };
        let dtype = if got.dtype() == DType::Complex64 {
            DType::Float32
        } else {
            got.dtype()
        };
        for (i, (a, b)) in g.iter().zip(&w).enumerate() {
            let d = ulps(*a, *b, dtype);
            // Near zero, truncated_normal's `erfinv(u)` magnifies a last-bit difference
            // of `erf` at the bounds: allow a small absolute error there.
            assert!(
                d <= 4 || (a - b).abs() <= 1e-6,
                "{name}[{i}]: lazulite {a}, MLX {b} ({d} ulps apart)"
            );
            exact += (d == 0) as usize;
            total += 1;
        }
    }
    eprintln!("transcendental cases: {exact}/{total} elements bit-identical to MLX");
}

#[test]
fn global_seed_follows_mlx_key_sequence() {
    let cases = cases();
    random::seed(42);
    let first = random::uniform(0, 1, &[4], DType::Float32, None).unwrap();
    let second = random::uniform(0, 1, &[4], DType::Float32, None).unwrap();
    let state = random::state();
    assert_bit_identical(&first, &cases["seed42_first"], "first draw");
    assert_bit_identical(&second, &cases["seed42_second"], "second draw");
    assert_bit_identical(&state, &cases["seed42_state"], "state");
}
