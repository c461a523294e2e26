//! Random numbers: Threefry known answers, equality with numbers drawn by real MLX
//! (fixtures from tools/fixtures/random.py), statistics of each distribution at fixed
//! keys, argument errors, vmap over keys, and independence from threading.

use crate::common;

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
            arr(&[0.0, 1.0], &[2]),
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
            iarr(&[0, 10, 100], &[3]),
            iarr(&[5, 20, 1000], &[3]),
            &[2, 3],
            DType::Int32,
            k(5).as_ref(),
        ),
        "randint_array_empty" => randint(
            iarr(&[10, 0], &[2]),
            iarr(&[0, 3], &[2]),
            &[2],
            DType::Int32,
            k(5).as_ref(),
        ),
        "bernoulli_03" => bernoulli(0.3, Some(&[20]), k(1).as_ref()),
        "bernoulli_array" => bernoulli(arr(&[0.1, 0.5, 0.9], &[3]), Some(&[4, 3]), k(2).as_ref()),
        "bernoulli_default_shape" => {
            bernoulli(arr(&[0.0, 1.0, 0.5, 0.25], &[4]), None, k(3).as_ref())
        }
        "bernoulli_default" => bernoulli(0.5, None, k(4).as_ref()),
        "truncated_normal" => truncated_normal(-1, 1, Some(&[9]), DType::Float32, k(1).as_ref()),
        "truncated_normal_arrays" => truncated_normal(
            arr(&[-2.0, 0.0], &[2]),
            arr(&[0.5, 3.0], &[2, 1]),
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
        "categorical_1d_shape" => categorical(
            &arr(&[0.1, 2.0, -1.0, 0.5], &[4]),
            -1,
            Some(&[20]),
            None,
            k(1).as_ref(),
        ),
        "categorical_2d" => categorical(&logits_2d(), -1, None, None, k(2).as_ref()),
        "categorical_axis0" => categorical(&logits_2d(), 0, None, None, k(3).as_ref()),
        "categorical_num_samples" => categorical(&logits_2d(), -1, None, Some(6), k(4).as_ref()),
        "categorical_num_samples_axis0" => {
            categorical(&logits_2d(), 0, None, Some(4), k(4).as_ref())
        }
        "categorical_shape" => categorical(&logits_2d(), -1, Some(&[4, 3]), None, k(5).as_ref()),
        "categorical_f16" => categorical(
            &lazulite::astype(&logits_2d(), DType::Float16).unwrap(),
            -1,
            None,
            None,
            k(6).as_ref(),
        ),
        "categorical_int" => categorical(
            &iarr(&[1, 2, 3, 0], &[4]),
            -1,
            Some(&[10]),
            None,
            k(7).as_ref(),
        ),
        "categorical_many" => {
            categorical(&arr(&[0.0; 50], &[50]), -1, None, Some(2000), k(8).as_ref())
        }
        "categorical_single_row" => categorical(
            &arr(&[0.1, 2.0, -1.0, 0.5], &[1, 4]),
            -1,
            None,
            Some(30),
            k(9).as_ref(),
        ),
        "categorical_single_big" => categorical(
            &uniform(-4, 4, &[1000], DType::Float32, k(20).as_ref()).unwrap(),
            -1,
            None,
            Some(3000),
            k(21).as_ref(),
        ),
        "categorical_batch_big" => categorical(
            &uniform(-4, 4, &[8, 100], DType::Float32, k(22).as_ref()).unwrap(),
            -1,
            None,
            Some(50),
            k(23).as_ref(),
        ),
        "permutation_10" => permutation(10, k(1).as_ref()),
        "permutation_1" => permutation(1, k(2).as_ref()),
        "permutation_0" => permutation(0, k(3).as_ref()),
        "permutation_1000" => permutation(1000, k(4).as_ref()),
        "permutation_array_axis0" => permutation_along(&arange_3d(), 0, k(5).as_ref()),
        "permutation_array_axis1" => permutation_along(&arange_3d(), 1, k(6).as_ref()),
        "permutation_array_axis_neg1" => permutation_along(&arange_3d(), -1, k(7).as_ref()),
        "permutation_floats" => {
            permutation_along(&arr(&[0.5, -1.0, 2.0, 8.0, 3.0], &[5]), 0, k(8).as_ref())
        }
        other => panic!("no lazulite call for fixture case {other}"),
    };
    r.unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The logits of the categorical fixture cases.
fn logits_2d() -> Array {
    let v = [
        0.5f32, -1.0, 2.0, 0.0, 1.0, 3.0, 3.0, -2.0, 0.25, 0.0, -1.0, 0.0, 1.0, 2.0, -3.0,
    ];
    Array::from_slice(&v, &[3, 5]).unwrap()
}

/// `arange(24).reshape(2, 3, 4)` in int32.
fn arange_3d() -> Array {
    let v: Vec<i32> = (0..24).collect();
    Array::from_slice(&v, &[2, 3, 4]).unwrap()
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
const EXACT_PREFIXES: [&str; 8] = [
    "key_",
    "split_",
    "uniform_",
    "randint_",
    "bernoulli_",
    "categorical_",
    "permutation_",
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

/// Everything that touches the global key, in one test so that parallel tests cannot
/// interleave draws.
#[test]
fn global_seed_follows_mlx_key_sequence() {
    let cases = cases();
    // A failed call must not consume a key.
    random::seed(42);
    assert!(random::uniform(0, 1, &[4], DType::Int32, None).is_err());
    assert!(random::bernoulli(0.5, Some(&[3]), Some(&key(0)))
        .and(random::bernoulli(
            Array::from_slice(&[0.5f32; 2], &[2]).unwrap(),
            Some(&[3]),
            None
        ))
        .is_err());
    assert!(random::randint(0, 3, &[2], DType::Float32, None).is_err());
    assert_eq!(random::state().to_vec::<u32>().unwrap(), vec![0, 42]);
    let first = random::uniform(0, 1, &[4], DType::Float32, None).unwrap();
    let second = random::uniform(0, 1, &[4], DType::Float32, None).unwrap();
    let state = random::state();
    assert_bit_identical(&first, &cases["seed42_first"], "first draw");
    assert_bit_identical(&second, &cases["seed42_second"], "second draw");
    assert_bit_identical(&state, &cases["seed42_state"], "state");

    // set_state rewinds; each thread has its own key, so another thread's draws (from
    // its own key, or after its own seed) leave this one's sequence alone.
    random::set_state(&key(42)).unwrap();
    let elsewhere = std::thread::spawn(|| {
        random::seed(42);
        let seeded = random::uniform(0, 1, &[4], DType::Float32, None).unwrap();
        random::uniform(0, 1, &[4], DType::Float32, None).unwrap();
        seeded.to_vec::<f32>().unwrap()
    })
    .join()
    .unwrap();
    assert_eq!(elsewhere, first.to_vec::<f32>().unwrap());
    let again = random::uniform(0, 1, &[4], DType::Float32, None).unwrap();
    assert_eq!(
        again.to_vec::<f32>().unwrap(),
        first.to_vec::<f32>().unwrap()
    );
    let bad = random::set_state(&Array::from_slice(&[1i32, 2], &[2]).unwrap());
    assert_eq!(bad.unwrap_err().kind(), ErrorKind::Value);
    // Without a seed, successive calls differ.
    let a = random::bits(&[4], 4, None)
        .unwrap()
        .to_vec::<u32>()
        .unwrap();
    let b = random::bits(&[4], 4, None)
        .unwrap()
        .to_vec::<u32>()
        .unwrap();
    assert_ne!(a, b);
}

/// Word `i` of `n` in MLX's layout for one key, straight from the cipher.
fn word(k: [u32; 2], n: usize, i: usize) -> u32 {
    let (half, odd) = (n / 2, n % 2);
    let offset = half + odd;
    if i < half {
        random::threefry2x32(k, [i as u32, (i + offset) as u32])[0]
    } else if odd == 1 && i == half {
        random::threefry2x32(k, [half as u32, 0])[0]
    } else {
        let p = i - offset;
        random::threefry2x32(k, [p as u32, i as u32])[1]
    }
}

#[test]
fn bits_follow_the_counter_layout_on_any_number_of_threads() {
    let k = [0x0bad_cafe, 0x1234_5678];
    let key_arr = Array::from_slice(&k, &[2]).unwrap();
    // 2_000_003 words are split over threads; small sizes are not.
    for n in [1, 2, 3, 4, 5, 31, 32, 33, 2_000_003] {
        let b = random::bits(&[n], 4, Some(&key_arr))
            .unwrap()
            .to_vec::<u32>()
            .unwrap();
        let step = (n / 997).max(1);
        for i in (0..n).step_by(step).chain([n - 1, n / 2]) {
            assert_eq!(b[i], word(k, n, i), "n = {n}, word {i}");
        }
    }
}

#[test]
fn narrow_bits_are_the_bytes_of_the_word_stream() {
    let k = key(11);
    let words = random::bits(&[2], 4, Some(&k))
        .unwrap()
        .to_vec::<u32>()
        .unwrap();
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let b8 = random::bits(&[5], 1, Some(&k)).unwrap();
    assert_eq!(b8.dtype(), DType::UInt8);
    assert_eq!(b8.to_vec::<u8>().unwrap(), bytes[..5].to_vec());
    let b16 = random::bits(&[3], 2, Some(&k)).unwrap();
    assert_eq!(b16.dtype(), DType::UInt16);
    let expected: Vec<u16> = bytes[..6]
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    assert_eq!(b16.to_vec::<u16>().unwrap(), expected);
    // Several keys each fill their own run of bytes.
    let keys = random::split(&k, 3).unwrap();
    let batched = lazulite::vmap(
        |a| Ok(vec![random::bits(&[5], 1, Some(&a[0]))?]),
        vec![Some(0)],
        vec![Some(0)],
    )(std::slice::from_ref(&keys))
    .unwrap();
    assert_eq!(batched[0].shape(), &[3, 5]);
    let flat = batched[0].to_vec::<u8>().unwrap();
    for i in 0..3 {
        let ki = row(&keys, i);
        let one = random::bits(&[5], 1, Some(&ki))
            .unwrap()
            .to_vec::<u8>()
            .unwrap();
        assert_eq!(flat[5 * i..5 * i + 5].to_vec(), one);
    }
}

/// Row `i` of a `[n, 2]` key array, as a key.
fn row(keys: &Array, i: usize) -> Array {
    let i = i as i64;
    let r = lazulite::slice(keys, &[i, 0], &[i + 1, 2], &[1, 1]).unwrap();
    lazulite::reshape(&r, &[2]).unwrap()
}

#[test]
fn vmap_over_keys_equals_a_loop() {
    let keys = random::split(&key(5), 4).unwrap();
    type Draw = fn(&Array) -> lazulite::Result<Array>;
    let draws: [(&str, Draw); 6] = [
        ("bits", |k| random::bits(&[3, 2], 4, Some(k))),
        ("uniform", |k| {
            random::uniform(-1.0, 2.0, &[5], DType::Float32, Some(k))
        }),
        ("normal", |k| {
            random::normal(&[7], DType::Float32, None, None, Some(k))
        }),
        ("randint", |k| {
            random::randint(0, 100, &[6], DType::Int32, Some(k))
        }),
        ("bernoulli", |k| random::bernoulli(0.4, Some(&[9]), Some(k))),
        ("split", |k| random::split(k, 3)),
    ];
    for (name, draw) in draws {
        let looped: Vec<Vec<f64>> = (0..4)
            .map(|i| draw(&row(&keys, i)).unwrap().to_vec::<f64>().unwrap())
            .collect();
        let mapped = lazulite::vmap(
            move |a| Ok(vec![draw(&a[0])?]),
            vec![Some(0)],
            vec![Some(0)],
        );
        let out = &mapped(std::slice::from_ref(&keys)).unwrap()[0];
        assert_eq!(out.shape()[0], 4, "{name}");
        let flat = out.to_vec::<f64>().unwrap();
        let per = flat.len() / 4;
        for (i, expected) in looped.iter().enumerate() {
            assert_eq!(
                &flat[i * per..(i + 1) * per],
                &expected[..],
                "{name}, key {i}"
            );
        }
        // Keys laid out along axis 1 (a transposed, strided key array).
        let columns = lazulite::transpose(&keys, &[1, 0]).unwrap();
        let mapped = lazulite::vmap(
            move |a| Ok(vec![draw(&a[0])?]),
            vec![Some(1)],
            vec![Some(0)],
        );
        let out = mapped(&[columns]).unwrap()[0].to_vec::<f64>().unwrap();
        assert_eq!(out, flat, "{name} with keys along axis 1");
    }
}

#[test]
fn many_keys_give_the_same_numbers_as_one_key_at_a_time() {
    // 64 keys x 4099 words: the batch is spread over threads key by key.
    let keys = random::split(&key(8), 64).unwrap();
    let mapped = lazulite::vmap(
        |a| {
            Ok(vec![random::uniform(
                0,
                1,
                &[4099],
                DType::Float32,
                Some(&a[0]),
            )?])
        },
        vec![Some(0)],
        vec![Some(0)],
    );
    let all = mapped(std::slice::from_ref(&keys)).unwrap()[0]
        .to_vec::<f32>()
        .unwrap();
    for i in [0, 1, 31, 63] {
        let one = random::uniform(0, 1, &[4099], DType::Float32, Some(&row(&keys, i)))
            .unwrap()
            .to_vec::<f32>()
            .unwrap();
        assert_eq!(&all[i * 4099..(i + 1) * 4099], &one[..], "key {i}");
    }
}

#[test]
fn gradients_flow_through_loc_and_scale() {
    let k = key(2);
    let loc = Array::from_slice(&[1.0f32, -2.0, 0.5], &[3]).unwrap();
    let scale = Array::from_slice(&[2.0f32; 3], &[3]).unwrap();
    let ones = Array::from_slice(&[1.0f32; 3], &[3]).unwrap();
    let (outs, grads) = lazulite::vjp(
        |p| {
            let x = random::normal(
                &[3],
                DType::Float32,
                Some((&p[0]).into()),
                Some((&p[1]).into()),
                Some(&k),
            )?;
            Ok(vec![x])
        },
        &[loc.clone(), scale.clone()],
        &[ones],
    )
    .unwrap();
    assert_eq!(grads[0].to_vec::<f32>().unwrap(), vec![1.0; 3]);
    // d x / d scale = (x - loc) / scale: the standard normal draw.
    let z = random::normal(&[3], DType::Float32, None, None, Some(&k)).unwrap();
    let (x, l) = (
        outs[0].to_vec::<f32>().unwrap(),
        loc.to_vec::<f32>().unwrap(),
    );
    let (g, z) = (
        grads[1].to_vec::<f32>().unwrap(),
        z.to_vec::<f32>().unwrap(),
    );
    for i in 0..3 {
        assert!((g[i] - z[i]).abs() < 1e-6 && (g[i] - (x[i] - l[i]) / 2.0).abs() < 1e-5);
    }
}

// ---- statistics at fixed keys -------------------------------------------------------

const N: usize = 100_000;

fn draw_f64(a: lazulite::Result<Array>) -> Vec<f64> {
    a.unwrap().to_vec::<f64>().unwrap()
}

fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    (
        m,
        x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0),
    )
}

/// Kolmogorov–Smirnov statistic of `x` against the CDF `cdf` (values for sorted `x`).
fn ks(mut x: Vec<f64>, cdf: impl Fn(&[f64]) -> Vec<f64>) -> f64 {
    x.sort_by(f64::total_cmp);
    let n = x.len() as f64;
    cdf(&x)
        .iter()
        .enumerate()
        .map(|(i, &f)| (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs()))
        .fold(0.0, f64::max)
}

/// The 1% critical value of the KS statistic for `n` samples.
fn ks_limit(n: usize) -> f64 {
    1.63 / (n as f64).sqrt()
}

/// The standard normal CDF of each value, through lazulite's erf in float64.
fn normal_cdf(x: &[f64]) -> Vec<f64> {
    let a = Array::from_slice(x, &[x.len()]).unwrap();
    let e = lazulite::erf(&lazulite::multiply(&a, std::f64::consts::FRAC_1_SQRT_2).unwrap());
    e.unwrap()
        .to_vec::<f64>()
        .unwrap()
        .iter()
        .map(|v| 0.5 * (1.0 + v))
        .collect()
}

fn assert_near(what: &str, got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol,
        "{what}: {got} vs {want} (tolerance {tol})"
    );
}

#[test]
fn uniform_statistics() {
    let k = key(100);
    let x = draw_f64(random::uniform(0, 1, &[N], DType::Float32, Some(&k)));
    let (m, v) = mean_var(&x);
    assert_near("mean", m, 0.5, 0.005);
    assert_near("variance", v, 1.0 / 12.0, 0.002);
    assert!(x.iter().all(|&u| (0.0..1.0).contains(&u)));
    let d = ks(x, |s| s.to_vec());
    assert!(d < ks_limit(N), "KS {d}");
    let y = draw_f64(random::uniform(-3.0, 5.0, &[N], DType::Float32, Some(&k)));
    let (m, v) = mean_var(&y);
    assert_near("mean on [-3, 5)", m, 1.0, 0.04);
    assert_near("variance on [-3, 5)", v, 64.0 / 12.0, 0.1);
    for dtype in [DType::Float16, DType::BFloat16, DType::Float64] {
        let z = random::uniform(0, 1, &[N], dtype, Some(&k)).unwrap();
        assert_eq!(z.dtype(), dtype);
        let z = draw_f64(Ok(z));
        assert!(z.iter().all(|&u| (0.0..1.0).contains(&u)), "{dtype}");
        assert_near(&format!("{dtype} mean"), mean_var(&z).0, 0.5, 0.01);
    }
}

#[test]
fn normal_statistics() {
    let k = key(101);
    let x = draw_f64(random::normal(&[N], DType::Float32, None, None, Some(&k)));
    let (m, v) = mean_var(&x);
    assert_near("mean", m, 0.0, 0.01);
    assert_near("variance", v, 1.0, 0.02);
    let d = ks(x, normal_cdf);
    assert!(d < ks_limit(N), "KS {d}");
    let y = draw_f64(random::normal(
        &[N],
        DType::Float32,
        f(3.0),
        f(0.5),
        Some(&k),
    ));
    let (m, v) = mean_var(&y);
    assert_near("mean with loc 3", m, 3.0, 0.005);
    assert_near("variance with scale 0.5", v, 0.25, 0.005);
    let z = random::normal(&[N], DType::Complex64, None, None, Some(&k)).unwrap();
    let z = z.to_vec::<lazulite::Complex>().unwrap();
    let re: Vec<f64> = z.iter().map(|c| c.re as f64).collect();
    let im: Vec<f64> = z.iter().map(|c| c.im as f64).collect();
    assert_near("complex real variance", mean_var(&re).1, 0.5, 0.01);
    assert_near("complex imaginary variance", mean_var(&im).1, 0.5, 0.01);
}

#[test]
fn randint_statistics() {
    let x = random::randint(-3, 7, &[N], DType::Int32, Some(&key(102))).unwrap();
    let mut counts = [0f64; 10];
    for v in x.to_vec::<i32>().unwrap() {
        assert!((-3..7).contains(&v));
        counts[(v + 3) as usize] += 1.0;
    }
    let expected = N as f64 / 10.0;
    let chi2: f64 = counts
        .iter()
        .map(|c| (c - expected).powi(2) / expected)
        .sum();
    // 9 degrees of freedom: 21.67 is the 1% critical value.
    assert!(chi2 < 21.67, "chi-square {chi2} for counts {counts:?}");
    for dtype in [DType::UInt8, DType::Int16, DType::Int64, DType::UInt32] {
        let y = random::randint(0, 200, &[1000], dtype, Some(&key(103))).unwrap();
        assert_eq!(y.dtype(), dtype);
        assert!(draw_f64(Ok(y)).iter().all(|&v| (0.0..200.0).contains(&v)));
    }
}

#[test]
fn bernoulli_statistics() {
    let x = random::bernoulli(0.3, Some(&[N]), Some(&key(104))).unwrap();
    assert_eq!(x.dtype(), DType::Bool);
    let (m, _) = mean_var(&draw_f64(Ok(x)));
    assert_near("frequency of true", m, 0.3, 0.005);
    let p = Array::from_slice(&[0.0f32, 1.0], &[2]).unwrap();
    let edges = random::bernoulli(&p, Some(&[1000, 2]), Some(&key(105))).unwrap();
    let v = edges.to_vec::<bool>().unwrap();
    assert!(
        v.chunks(2).all(|c| !c[0] && c[1]),
        "p = 0 never, p = 1 always"
    );
}

#[test]
fn truncated_normal_statistics() {
    let (a, b) = (-1.0, 2.0);
    let x = draw_f64(random::truncated_normal(
        a,
        b,
        Some(&[N]),
        DType::Float32,
        Some(&key(106)),
    ));
    assert!(x.iter().all(|&v| (a..=b).contains(&v)));
    let pdf = |t: f64| (-t * t / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let cdf = normal_cdf(&[a, b]);
    let z = cdf[1] - cdf[0];
    let mean = (pdf(a) - pdf(b)) / z;
    let var = 1.0 + (a * pdf(a) - b * pdf(b)) / z - mean * mean;
    let (m, v) = mean_var(&x);
    assert_near("mean", m, mean, 0.01);
    assert_near("variance", v, var, 0.01);
    let d = ks(x, |s| {
        normal_cdf(s).iter().map(|c| (c - cdf[0]) / z).collect()
    });
    assert!(d < ks_limit(N), "KS {d}");
}

#[test]
fn gumbel_and_laplace_statistics() {
    let g = draw_f64(random::gumbel(&[N], DType::Float32, Some(&key(107))));
    let (m, v) = mean_var(&g);
    assert_near("gumbel mean (Euler's gamma)", m, 0.577_215_664_9, 0.01);
    assert_near(
        "gumbel variance",
        v,
        std::f64::consts::PI.powi(2) / 6.0,
        0.05,
    );
    let d = ks(g, |s| s.iter().map(|x| (-(-x).exp()).exp()).collect());
    assert!(d < ks_limit(N), "gumbel KS {d}");
    let l = draw_f64(random::laplace(
        &[N],
        DType::Float32,
        1.0,
        2.0,
        Some(&key(108)),
    ));
    let (m, v) = mean_var(&l);
    assert_near("laplace mean", m, 1.0, 0.03);
    assert_near("laplace variance", v, 8.0, 0.2);
    let laplace_cdf = |x: f64| {
        let t = (x - 1.0) / 2.0;
        if t < 0.0 {
            0.5 * t.exp()
        } else {
            1.0 - 0.5 * (-t).exp()
        }
    };
    let d = ks(l, |s| s.iter().map(|&x| laplace_cdf(x)).collect());
    assert!(d < ks_limit(N), "laplace KS {d}");
}

// ---- argument errors ----------------------------------------------------------------

#[test]
fn bad_arguments_are_errors() {
    let k = key(0);
    let kr = Some(&k);
    let value_errors: Vec<(&str, lazulite::Result<Array>)> = vec![
        (
            "uniform int dtype",
            random::uniform(0, 1, &[2], DType::Int32, kr),
        ),
        (
            "uniform complex dtype",
            random::uniform(0, 1, &[2], DType::Complex64, kr),
        ),
        (
            "uniform bounds wider than shape",
            random::uniform(
                Array::from_slice(&[0.0f32, 1.0], &[2]).unwrap(),
                3,
                &[],
                DType::Float32,
                kr,
            ),
        ),
        (
            "uniform bounds that do not broadcast",
            random::uniform(
                Array::from_slice(&[0.0f32, 1.0], &[2]).unwrap(),
                3,
                &[3],
                DType::Float32,
                kr,
            ),
        ),
        (
            "normal int dtype",
            random::normal(&[2], DType::Int32, None, None, kr),
        ),
        (
            "normal loc shape",
            random::normal(
                &[2],
                DType::Float32,
                Some(Array::from_slice(&[1.0f32; 3], &[3]).unwrap().into()),
                None,
                kr,
            ),
        ),
        (
            "randint float dtype",
            random::randint(0, 10, &[2], DType::Float32, kr),
        ),
        ("bernoulli integer p", random::bernoulli(1, None, kr)),
        (
            "bernoulli p shape",
            random::bernoulli(
                Array::from_slice(&[0.5f32; 2], &[2]).unwrap(),
                Some(&[3]),
                kr,
            ),
        ),
        (
            "bernoulli p larger than shape",
            random::bernoulli(
                Array::from_slice(&[0.5f32; 2], &[2]).unwrap(),
                Some(&[]),
                kr,
            ),
        ),
        (
            "truncated_normal int dtype",
            random::truncated_normal(-1, 1, None, DType::Int32, kr),
        ),
        ("gumbel int dtype", random::gumbel(&[2], DType::UInt8, kr)),
        (
            "laplace int dtype",
            random::laplace(&[2], DType::Int32, 0.0, 1.0, kr),
        ),
        ("bits width 3", random::bits(&[2], 3, kr)),
        ("bits huge shape", random::bits(&[usize::MAX / 2, 4], 4, kr)),
        (
            "key of int32",
            random::bits(&[2], 4, Some(&Array::from_slice(&[1i32, 2], &[2]).unwrap())),
        ),
        (
            "key of shape [3]",
            random::bits(
                &[2],
                4,
                Some(&Array::from_slice(&[1u32, 2, 3], &[3]).unwrap()),
            ),
        ),
        (
            "key of shape [1, 2]",
            random::split(&Array::from_slice(&[1u32, 2], &[1, 2]).unwrap(), 2),
        ),
    ];
    for (what, r) in value_errors {
        let e = r.err().unwrap_or_else(|| panic!("{what}: no error"));
        assert_eq!(e.kind(), ErrorKind::Value, "{what}: {e}");
    }
    let msg = random::uniform(0, 1, &[2], DType::Int32, kr).unwrap_err();
    assert_eq!(
        msg.message(),
        "[uniform] Can only generate uniform numbers with real floating point type."
    );
    let msg = random::bits(
        &[2],
        4,
        Some(&Array::from_slice(&[1u32, 2, 3], &[3]).unwrap()),
    )
    .unwrap_err();
    assert_eq!(
        msg.message(),
        "[bits] Expected key shape (2) but received (3)."
    );
    // The key is intact and still usable after the failures.
    assert_eq!(k.to_vec::<u32>().unwrap(), vec![0, 0]);
}

#[test]
fn empty_and_scalar_shapes() {
    let k = key(3);
    assert_eq!(random::split(&k, 0).unwrap().shape(), &[0, 2]);
    let e = random::uniform(0, 1, &[0, 3], DType::Float32, Some(&k)).unwrap();
    assert_eq!((e.shape(), e.size()), (&[0usize, 3][..], 0));
    assert!(e.to_vec::<f32>().unwrap().is_empty());
    let s = random::normal(&[], DType::Float32, None, None, Some(&k)).unwrap();
    assert_eq!(s.shape(), &[] as &[usize]);
    assert!(s.item::<f32>().unwrap().is_finite());
    let t = random::truncated_normal(
        Array::from_slice(&[-1.0f32, 0.0], &[2]).unwrap(),
        Array::from_slice(&[1.0f32, 0.5], &[2, 1]).unwrap(),
        None,
        DType::Float32,
        Some(&k),
    )
    .unwrap();
    assert_eq!(t.shape(), &[2, 2]);
}

// ---- categorical, permutation, multivariate_normal ----------------------------------

/// Chi-square statistic of `counts` against expected probabilities `p`.
fn chi_square(counts: &[f64], p: &[f64]) -> f64 {
    let n: f64 = counts.iter().sum();
    counts
        .iter()
        .zip(p)
        .map(|(c, q)| (c - n * q).powi(2) / (n * q))
        .sum()
}

#[test]
fn categorical_statistics() {
    let p = [0.1, 0.2, 0.3, 0.4];
    let logits: Vec<f32> = p.iter().map(|v: &f64| v.ln() as f32).collect();
    let one = Array::from_slice(&logits, &[4]).unwrap();
    let batch = lazulite::broadcast_to(&one, &[3, 4]).unwrap();
    // One distribution (inverse CDF) and a batch (Gumbel argmax), along either axis.
    let draws = [
        random::categorical(&one, -1, None, Some(N), Some(&key(110))),
        random::categorical(&batch, 1, None, Some(N / 3), Some(&key(111))),
        random::categorical(
            &lazulite::transpose(&batch, &[1, 0]).unwrap(),
            0,
            Some(&[N / 3, 3]),
            None,
            Some(&key(112)),
        ),
    ];
    for (i, d) in draws.into_iter().enumerate() {
        let d = d.unwrap();
        assert_eq!(d.dtype(), DType::UInt32);
        let mut counts = [0f64; 4];
        for v in d.to_vec::<u32>().unwrap() {
            counts[v as usize] += 1.0;
        }
        let chi2 = chi_square(&counts, &p);
        // 3 degrees of freedom: 11.34 is the 1% critical value.
        assert!(
            chi2 < 11.34,
            "draw {i}: chi-square {chi2}, counts {counts:?}"
        );
    }
    let single = random::categorical(&one, -1, None, None, Some(&key(114))).unwrap();
    assert_eq!(single.shape(), &[] as &[usize]);
    // Impossible categories never come up.
    let masked =
        Array::from_slice(&[f32::NEG_INFINITY, 0.0, f32::NEG_INFINITY, 1.0], &[4]).unwrap();
    let s = random::categorical(&masked, 0, None, Some(5000), Some(&key(113))).unwrap();
    assert!(s.to_vec::<u32>().unwrap().iter().all(|&v| v == 1 || v == 3));
}

#[test]
fn permutations_are_permutations_and_uniform() {
    for n in [0usize, 1, 2, 7, 1000] {
        let mut v = random::permutation(n, Some(&key(n as u64)))
            .unwrap()
            .to_vec::<u32>()
            .unwrap();
        v.sort();
        assert_eq!(v, (0..n as u32).collect::<Vec<_>>());
    }
    // All 24 orders of 4 items, equally often over 24000 keys (vmap draws them at once).
    let keys = random::split(&key(120), 24_000).unwrap();
    let perms = lazulite::vmap(
        |a| Ok(vec![random::permutation(4, Some(&a[0]))?]),
        vec![Some(0)],
        vec![Some(0)],
    )(std::slice::from_ref(&keys))
    .unwrap();
    let flat = perms[0].to_vec::<u32>().unwrap();
    let mut counts = std::collections::HashMap::new();
    for p in flat.chunks(4) {
        *counts.entry(p.to_vec()).or_insert(0.0) += 1.0;
    }
    assert_eq!(counts.len(), 24);
    let counts: Vec<f64> = counts.into_values().collect();
    let chi2 = chi_square(&counts, &[1.0 / 24.0; 24]);
    // 23 degrees of freedom: 41.64 is the 1% critical value.
    assert!(chi2 < 41.64, "chi-square {chi2}");
    // Permuting an array moves whole slices along the axis.
    let x = Array::from_slice(&(0..12).collect::<Vec<i32>>(), &[3, 4]).unwrap();
    let y = random::permutation_along(&x, -1, Some(&key(121))).unwrap();
    let order = random::permutation(4, Some(&key(121)))
        .unwrap()
        .to_vec::<u32>()
        .unwrap();
    let y = y.to_vec::<i32>().unwrap();
    for r in 0..3 {
        for c in 0..4 {
            assert_eq!(y[r * 4 + c], (r * 4) as i32 + order[c] as i32);
        }
    }
}

#[test]
fn multivariate_normal_statistics() {
    let mean = [1.0f32, -2.0, 0.5];
    let cov = [2.0f32, 0.6, -0.3, 0.6, 1.0, 0.2, -0.3, 0.2, 0.5];
    let m = Array::from_slice(&mean, &[3]).unwrap();
    let c = Array::from_slice(&cov, &[3, 3]).unwrap();
    let x = random::multivariate_normal(&m, &c, &[N], DType::Float32, Some(&key(130))).unwrap();
    assert_eq!(x.shape(), &[N, 3]);
    let x = draw_f64(Ok(x));
    for i in 0..3 {
        let mi = x.iter().skip(i).step_by(3).sum::<f64>() / N as f64;
        assert_near(&format!("mean {i}"), mi, mean[i] as f64, 0.02);
        for j in 0..3 {
            let mj = x.iter().skip(j).step_by(3).sum::<f64>() / N as f64;
            let cij =
                x.chunks(3).map(|s| (s[i] - mi) * (s[j] - mj)).sum::<f64>() / (N as f64 - 1.0);
            assert_near(&format!("cov[{i}][{j}]"), cij, cov[3 * i + j] as f64, 0.03);
        }
    }
    // Each coordinate is normal: KS on the standardised first one.
    let first: Vec<f64> = x
        .iter()
        .step_by(3)
        .map(|v| (v - 1.0) / 2f64.sqrt())
        .collect();
    let d = ks(first, normal_cdf);
    assert!(d < ks_limit(N), "KS {d}");
    // Batch shapes broadcast: 2 means against one covariance, 4 samples each.
    let means = Array::from_slice(&[0.0f32, 0.0, 0.0, 100.0, 100.0, 100.0], &[2, 3]).unwrap();
    let b =
        random::multivariate_normal(&means, &c, &[4, 2], DType::Float32, Some(&key(131))).unwrap();
    assert_eq!(b.shape(), &[4, 2, 3]);
    let b = b.to_vec::<f32>().unwrap();
    assert!(b
        .chunks(6)
        .all(|s| s[..3].iter().all(|v| v.abs() < 10.0) && s[3..].iter().all(|v| *v > 90.0)));
}

#[test]
fn new_draws_do_not_depend_on_the_thread_pool() {
    let run = || {
        let logits = random::uniform(-2, 2, &[64, 300], DType::Float32, Some(&key(140))).unwrap();
        let mean = Array::from_slice(&[0.0f32; 8], &[8]).unwrap();
        let cov = lazulite::eye(8, None, 0, DType::Float32).unwrap();
        vec![
            draw_f64(random::categorical(
                &logits,
                -1,
                None,
                Some(40),
                Some(&key(141)),
            )),
            draw_f64(random::permutation(100_000, Some(&key(142)))),
            draw_f64(random::multivariate_normal(
                &mean,
                &cov,
                &[5000],
                DType::Float32,
                Some(&key(143)),
            )),
            draw_f64(random::normal(
                &[300_000],
                DType::Float32,
                None,
                None,
                Some(&key(144)),
            )),
        ]
    };
    let pool = |n: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
    };
    let one = pool(1).install(run);
    let four = pool(4).install(run);
    assert!(one == four);
}

#[test]
fn categorical_permutation_multivariate_errors() {
    let k = key(0);
    let kr = Some(&k);
    let logits = Array::from_slice(&[1.0f32, 2.0, 3.0, 0.0, 0.0, 5.0], &[2, 3]).unwrap();
    let mean = Array::from_slice(&[0.0f32, 1.0], &[2]).unwrap();
    let cov = Array::from_slice(&[1.0f32, 0.5, 0.5, 2.0], &[2, 2]).unwrap();
    let scalar = Array::scalar(1.0f32);
    let cases: Vec<(&str, lazulite::Result<Array>, ErrorKind, &str)> = vec![
        ("axis", random::categorical(&logits, 2, None, None, kr), ErrorKind::Axis, "[categorical] Invalid axis 2 for logits with 2 dimensions."),
        ("scalar logits", random::categorical(&scalar, -1, None, None, kr), ErrorKind::Axis, "[categorical] Invalid axis -1 for logits with 0 dimensions."),
        ("both", random::categorical(&logits, -1, Some(&[2]), Some(3), kr), ErrorKind::Value, "[categorical] At most one of shape or num_samples can be specified."),
        ("shape", random::categorical(&logits, -1, Some(&[]), None, kr), ErrorKind::Value, "[categorical] Requested shape () is not broadcast compatible with reduced logits shape(2)."),
        ("empty", random::categorical(&Array::from_slice(&[0.0f32; 0], &[2, 0]).unwrap(), -1, None, None, kr), ErrorKind::Value, "[argmax] Cannot argmax reduce zero size array."),
        ("no samples", random::categorical(&logits, -1, None, Some(0), kr), ErrorKind::Value, "[argmax] Cannot argmax reduce zero size array."),
        ("permutation axis", random::permutation_along(&logits, 2, kr), ErrorKind::Axis, "[permutation] Invalid axis 2 for array with 2 dimensions."),
        ("permutation scalar", random::permutation_along(&scalar, 0, kr), ErrorKind::Axis, "[permutation] Invalid axis 0 for array with 0 dimensions."),
        ("mvn mean 0-d", random::multivariate_normal(&scalar, &cov, &[], DType::Float32, kr), ErrorKind::Value, "[multivariate_normal] mean must have at least one dimension."),
        ("mvn cov 1-d", random::multivariate_normal(&mean, &mean, &[], DType::Float32, kr), ErrorKind::Value, "[multivariate_normal] cov must have at least two dimensions."),
        ("mvn cov not square", random::multivariate_normal(&mean, &logits, &[], DType::Float32, kr), ErrorKind::Value, "[multivariate_normal] last two dimensions of cov must be equal."),
        ("mvn sizes", random::multivariate_normal(&Array::from_slice(&[0.0f32; 3], &[3]).unwrap(), &cov, &[], DType::Float32, kr), ErrorKind::Value, "[multivariate_normal] mean and cov must have compatible shapes."),
        ("mvn dtype", random::multivariate_normal(&mean, &cov, &[], DType::Float64, kr), ErrorKind::Value, "[multivariate_normal] dtype must be float32."),
    ];
    for (what, r, kind, message) in cases {
        let e = r.err().unwrap_or_else(|| panic!("{what}: no error"));
        assert_eq!((e.kind(), e.message()), (kind, message), "{what}");
    }
    let four_means = Array::from_slice(&[0.0f32; 8], &[4, 2]).unwrap();
    let e = random::multivariate_normal(&four_means, &cov, &[3], DType::Float32, kr);
    assert_eq!(
        e.unwrap_err().kind(),
        ErrorKind::Value,
        "batch shape (4) against (3)"
    );
    assert_eq!(k.to_vec::<u32>().unwrap(), vec![0, 0]);
    // Zero-size draws that are not errors.
    assert_eq!(random::permutation(0, kr).unwrap().shape(), &[0]);
    let empty_mean = Array::from_slice(&[0.0f32; 0], &[0]).unwrap();
    let empty_cov = Array::from_slice(&[0.0f32; 0], &[0, 0]).unwrap();
    let x = random::multivariate_normal(&empty_mean, &empty_cov, &[], DType::Float32, kr).unwrap();
    assert_eq!(x.shape(), &[0]);
}
