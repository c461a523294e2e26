//! Saving and loading: round trips of every format and dtype, files written by NumPy, the
//! `safetensors` and `gguf` Python packages (tools/fixtures/io.py), the guide's examples,
//! laziness, atomic saves, and malformed files (errors, never panics).

use lazulite::{
    load, save, save_gguf, save_safetensors, savez, savez_compressed, Array, Complex, DType,
    ErrorKind, Loaded, MetadataValue,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/io")
        .join(rel)
}

/// A fresh directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lazulite_io_{}_{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The values tools/fixtures/io.py writes: element i, exact in every dtype.
fn pattern(dtype: DType, shape: &[usize]) -> Array {
    let n: usize = shape.iter().product();
    let i = (0..n).map(|i| i as i64);
    match dtype {
        DType::Bool => Array::from_slice(&i.map(|i| i % 3 == 0).collect::<Vec<_>>(), shape),
        DType::Complex64 => Array::from_slice(
            &i.map(|i| Complex::new((i - 3) as f32 * 0.25, i as f32 * 0.5))
                .collect::<Vec<_>>(),
            shape,
        ),
        d if d.is_unsigned() => {
            Array::from_slice(&i.map(|i| (i * 37) % 251).collect::<Vec<_>>(), shape)
        }
        d if d.is_signed_integer() => {
            Array::from_slice(&i.map(|i| (i * 37) % 251 - 125).collect::<Vec<_>>(), shape)
        }
        _ => Array::from_slice(&i.map(|i| (i - 3) as f64 * 0.25).collect::<Vec<_>>(), shape),
    }
    .unwrap()
    .astype(dtype)
    .unwrap()
}

/// Same dtype, shape and elements (bit for bit, NaN equal to NaN).
fn assert_same(actual: &Array, expected: &Array, context: &str) {
    assert_eq!(actual.dtype(), expected.dtype(), "{context}: dtype");
    assert_eq!(actual.shape(), expected.shape(), "{context}: shape");
    let a = actual.to_vec::<Complex>().unwrap();
    let e = expected.to_vec::<Complex>().unwrap();
    let bits = |v: &[Complex]| -> Vec<(u32, u32)> {
        v.iter()
            .map(|c| {
                let norm = |x: f32| {
                    if x.is_nan() {
                        f32::NAN.to_bits()
                    } else {
                        x.to_bits()
                    }
                };
                (norm(c.re), norm(c.im))
            })
            .collect()
    };
    assert_eq!(bits(&a), bits(&e), "{context}: values");
    if expected.dtype().size() == 8 && !expected.dtype().is_complex() {
        // 64-bit integers and float64 do not fit Complex exactly: compare them wide too.
        assert_eq!(
            actual.to_vec::<i64>().unwrap(),
            expected.to_vec::<i64>().unwrap(),
            "{context}"
        );
        assert_eq!(
            actual
                .to_vec::<f64>()
                .unwrap()
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>(),
            expected
                .to_vec::<f64>()
                .unwrap()
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>(),
            "{context}"
        );
    }
}

fn arrays(loaded: Loaded) -> BTreeMap<String, Array> {
    loaded.into_arrays().unwrap()
}

/// Extreme values of each dtype (limits, NaN, infinities, -0), as a (2, 4) array.
fn extremes(dtype: DType) -> Array {
    let f = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.0,
        1e-300,
        65504.0,
        -1.5,
        3.0,
    ];
    let a = match dtype {
        DType::Bool => Array::from_slice(
            &[true, false, true, true, false, false, true, false],
            &[2, 4],
        ),
        DType::UInt64 => {
            Array::from_slice(&[u64::MAX, 0, 1, u64::MAX - 1, 2, 3, 1 << 63, 7], &[2, 4])
        }
        DType::Int64 => Array::from_slice(
            &[i64::MIN, i64::MAX, -1, 0, 1, -(1 << 53) - 1, 5, 6],
            &[2, 4],
        ),
        d if d.is_integer() => {
            let info = lazulite::iinfo(d).unwrap();
            let v = [info.min, info.max, -1, 0, 1, 2, 3, 4].map(|x| x as i64);
            Array::from_slice(&v, &[2, 4])
        }
        DType::Complex64 => Array::from_slice(
            &f.iter()
                .map(|&v| Complex::new(v as f32, -(v as f32)))
                .collect::<Vec<_>>(),
            &[2, 4],
        ),
        DType::Float64 => Array::from_slice(&f, &[2, 4]),
        _ => Array::from_slice(&f.map(|v| v as f32), &[2, 4]),
    };
    a.unwrap().astype(dtype).unwrap()
}

// ---------------------------------------------------------------------------------------
// Files written by NumPy, safetensors and gguf

const NPY_DTYPES: [DType; 13] = [
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
    DType::Complex64,
];

#[test]
fn reads_numpy_npy_files() {
    for dtype in NPY_DTYPES {
        let a = load(fixture(&format!("npy/{dtype}.npy")), None, false)
            .unwrap()
            .into_array()
            .unwrap();
        assert!(!a.is_evaluated(), "{dtype}: lazy");
        assert_same(&a, &pattern(dtype, &[2, 3]), &format!("npy {dtype}"));
    }
    for dtype in [
        DType::UInt16,
        DType::Int32,
        DType::Int64,
        DType::Float16,
        DType::Float32,
        DType::Float64,
        DType::Complex64,
    ] {
        let a = load(fixture(&format!("npy/be_{dtype}.npy")), None, false).unwrap();
        assert_same(
            &a.into_array().unwrap(),
            &pattern(dtype, &[2, 3]),
            &format!("big-endian {dtype}"),
        );
    }
    let cases = [
        ("fortran_float32.npy", DType::Float32, vec![2, 3]),
        ("fortran_be_float64.npy", DType::Float64, vec![2, 3, 4]),
        ("scalar_float64.npy", DType::Float64, vec![]),
        ("empty_int32.npy", DType::Int32, vec![0, 3]),
    ];
    for (file, dtype, shape) in cases {
        let a = load(fixture(&format!("npy/{file}")), None, false)
            .unwrap()
            .into_array()
            .unwrap();
        assert_same(&a, &pattern(dtype, &shape), file);
    }
    // NumPy's two-byte voids are MLX's bfloat16.
    let a = load(fixture("npy/void_bfloat16.npy"), None, false)
        .unwrap()
        .into_array()
        .unwrap();
    assert_same(&a, &pattern(DType::BFloat16, &[2, 3]), "void bfloat16");
}

#[test]
fn reads_numpy_npz_files() {
    for file in ["npz/savez.npz", "npz/savez_compressed.npz"] {
        let m = arrays(load(fixture(file), None, false).unwrap());
        assert_eq!(
            m.keys().collect::<Vec<_>>(),
            ["arr_0", "arr_1", "b", "c", "e", "s"]
        );
        assert!(m.values().all(|a| !a.is_evaluated()), "{file}: lazy");
        assert_same(&m["arr_0"], &pattern(DType::Float32, &[2, 3]), file);
        assert_same(&m["arr_1"], &pattern(DType::Int64, &[4]), file);
        assert_same(&m["b"], &pattern(DType::Bool, &[5]), file);
        assert_same(&m["c"], &pattern(DType::Complex64, &[2, 2]), file);
        assert_same(&m["e"], &pattern(DType::Float16, &[0]), file);
        assert_same(&m["s"], &pattern(DType::Int16, &[]), file);
    }
}

#[test]
fn reads_safetensors_package_files() {
    let Loaded::WithMetadata(m, meta) =
        load(fixture("safetensors/numpy.safetensors"), None, true).unwrap()
    else {
        panic!("metadata asked for")
    };
    for dtype in [
        DType::Bool,
        DType::UInt8,
        DType::Int8,
        DType::UInt16,
        DType::Int16,
        DType::UInt32,
        DType::Int32,
        DType::UInt64,
        DType::Int64,
        DType::Float16,
        DType::Float32,
        DType::Float64,
    ] {
        assert_same(
            &m[dtype.name()],
            &pattern(dtype, &[2, 3]),
            &format!("safetensors {dtype}"),
        );
    }
    assert_same(&m["scalar"], &pattern(DType::Float32, &[]), "scalar");
    assert_same(&m["empty"], &pattern(DType::Int32, &[0, 4]), "empty");
    assert!(matches!(&meta["format"], MetadataValue::String(s) if s == "np"));
    assert!(matches!(&meta["note"], MetadataValue::String(s) if s == "caf\u{e9} \"quoted\"\n"));
    let m = arrays(load(fixture("safetensors/bfloat16.safetensors"), None, false).unwrap());
    assert_same(
        &m["w"],
        &pattern(DType::BFloat16, &[2, 3]),
        "safetensors bf16",
    );
}

#[test]
fn reads_gguf_package_files() {
    let Loaded::WithMetadata(m, meta) = load(fixture("gguf/tensors.gguf"), None, true).unwrap()
    else {
        panic!("metadata asked for")
    };
    for dtype in [
        DType::Float32,
        DType::Float16,
        DType::Float64,
        DType::Int8,
        DType::Int16,
        DType::Int32,
        DType::Int64,
        DType::BFloat16,
    ] {
        assert_same(
            &m[dtype.name()],
            &pattern(dtype, &[2, 3]),
            &format!("gguf {dtype}"),
        );
    }
    assert_same(&m["vector"], &pattern(DType::Float32, &[5]), "vector");
    // Quantized tensors load as MLX's triple (the names are shorter than ".weight", so
    // MLX keeps them whole for the scales' and biases' names).
    for (q, bits) in [("q4_0", 4), ("q4_1", 4), ("q8_0", 8)] {
        let expected = load(fixture(&format!("gguf/{q}_expected.npy")), None, false)
            .unwrap()
            .into_array()
            .unwrap();
        assert_eq!(expected.shape(), &[3, 64]);
        let (w, scales, biases) = (
            &m[q],
            &m[&format!("{q}.scales")],
            &m[&format!("{q}.biases")],
        );
        assert_eq!(
            (w.dtype(), w.shape()),
            (DType::UInt32, &[3, 64 * bits / 32][..])
        );
        assert_eq!(
            (scales.dtype(), scales.shape()),
            (DType::Float16, &[3, 2][..])
        );
        assert_eq!(
            (biases.dtype(), biases.shape()),
            (DType::Float16, &[3, 2][..])
        );
        // `scale * level + bias` in float32 is ggml's `d * (level - offset)` exactly,
        // up to the sign of zero.
        let wide = |a: &Array| lazulite::astype(a, DType::Float32).unwrap();
        let values = lazulite::dequantize(
            w,
            &wide(scales),
            Some(&wide(biases)),
            lazulite::Quantization::affine(32, bits as i32),
            None,
            None,
        )
        .unwrap();
        assert_eq!(
            values.to_vec::<f32>().unwrap(),
            expected.to_vec::<f32>().unwrap(),
            "{q}"
        );
    }
    let scalar = |key: &str| match &meta[key] {
        MetadataValue::Array(a) => {
            assert_eq!(a.ndim(), 0, "{key}");
            a.clone()
        }
        other => panic!("{key}: {other:?}"),
    };
    assert_eq!(scalar("m.u8").to_vec::<u8>().unwrap(), [200]);
    assert_eq!(scalar("m.i8").to_vec::<i8>().unwrap(), [-100]);
    assert_eq!(scalar("m.u16").to_vec::<u16>().unwrap(), [60000]);
    assert_eq!(scalar("m.i16").to_vec::<i16>().unwrap(), [-30000]);
    assert_eq!(scalar("m.u32").to_vec::<u32>().unwrap(), [4_000_000_000]);
    assert_eq!(scalar("m.i32").to_vec::<i32>().unwrap(), [-2_000_000_000]);
    assert_eq!(scalar("m.f32").to_vec::<f32>().unwrap(), [1.5]);
    assert_eq!(scalar("m.bool").dtype(), DType::Bool);
    assert_eq!(scalar("m.bool").to_vec::<bool>().unwrap(), [true]);
    assert_eq!(scalar("m.u64").to_vec::<u64>().unwrap(), [(1 << 63) + 5]);
    assert_eq!(scalar("m.i64").to_vec::<i64>().unwrap(), [-(1 << 62)]);
    assert_eq!(scalar("m.f64").to_vec::<f64>().unwrap(), [0.1]);
    assert!(matches!(&meta["m.str"], MetadataValue::String(s) if s == "caf\u{e9}"));
    assert!(matches!(&meta["general.architecture"], MetadataValue::String(s) if s == "test"));
    assert!(matches!(&meta["m.strs"], MetadataValue::Strings(v) if v == &["a", "bc"]));
    let MetadataValue::Array(ints) = &meta["m.ints"] else {
        panic!()
    };
    assert_eq!(ints.shape(), &[3]);
    assert_eq!(ints.to_vec::<i64>().unwrap(), [1, 2, 3]);
    // Without return_metadata, only the arrays.
    assert!(matches!(
        load(fixture("gguf/tensors.gguf"), None, false).unwrap(),
        Loaded::Arrays(_)
    ));
}

// ---------------------------------------------------------------------------------------
// Round trips

/// Inputs of every layout: contiguous, transposed, reversed slice, broadcast, 0-d, empty.
fn layouts(dtype: DType) -> Vec<(&'static str, Array)> {
    let base = pattern(dtype, &[3, 4]);
    vec![
        ("contiguous", base.clone()),
        ("transposed", base.t().unwrap()),
        (
            "reversed",
            lazulite::slice(&base, &[2, 0], &[-4, 4], &[-2, 1]).unwrap_or(base.clone()),
        ),
        (
            "broadcast",
            lazulite::broadcast_to(&pattern(dtype, &[1, 4]), &[3, 4]).unwrap(),
        ),
        ("scalar", pattern(dtype, &[])),
        ("empty", pattern(dtype, &[0, 2])),
        ("extremes", extremes(dtype)),
    ]
}

#[test]
fn npy_round_trips_every_dtype_and_layout() {
    let dir = scratch("npy_rt");
    for dtype in DType::ALL {
        for (layout, a) in layouts(dtype) {
            let path = dir.join(format!("{dtype}_{layout}.npy"));
            save(&path, &a).unwrap();
            let b = load(&path, None, false).unwrap().into_array().unwrap();
            assert_same(&b, &a, &format!("npy {dtype} {layout}"));
        }
    }
}

#[test]
fn npz_round_trips_every_dtype() {
    let dir = scratch("npz_rt");
    for compressed in [false, true] {
        for dtype in DType::ALL {
            let cases = layouts(dtype);
            let named: Vec<(&str, &Array)> = cases.iter().map(|(n, a)| (*n, a)).collect();
            let positional = pattern(dtype, &[2]);
            let path = dir.join(format!("{dtype}_{compressed}.npz"));
            if compressed {
                savez_compressed(&path, &[&positional], named.clone()).unwrap();
            } else {
                savez(&path, &[&positional], named.clone()).unwrap();
            }
            let m = arrays(load(&path, None, false).unwrap());
            assert_eq!(m.len(), named.len() + 1);
            assert_same(&m["arr_0"], &positional, "positional");
            for (name, a) in named {
                assert_same(
                    &m[name],
                    a,
                    &format!("npz {dtype} {name} compressed={compressed}"),
                );
            }
        }
    }
}

#[test]
fn safetensors_round_trips_every_dtype() {
    let dir = scratch("st_rt");
    let mut all = BTreeMap::new();
    for dtype in DType::ALL {
        for (layout, a) in layouts(dtype) {
            all.insert(format!("{dtype}.{layout}"), a);
        }
    }
    let metadata = BTreeMap::from([("k".to_string(), "v \"q\" \u{e9}".to_string())]);
    let path = dir.join("all.safetensors");
    save_safetensors(&path, &all, Some(&metadata)).unwrap();
    let Loaded::WithMetadata(m, meta) = load(&path, None, true).unwrap() else {
        panic!()
    };
    assert_eq!(m.len(), all.len());
    for (name, a) in &all {
        assert_same(&m[name], a, name);
    }
    assert!(matches!(&meta["k"], MetadataValue::String(s) if s == "v \"q\" \u{e9}"));
}

#[test]
fn gguf_round_trips_every_dtype_it_holds() {
    let dir = scratch("gguf_rt");
    let dtypes = [
        DType::Float32,
        DType::Float16,
        DType::BFloat16,
        DType::Float64,
        DType::Int8,
        DType::Int16,
        DType::Int32,
        DType::Int64,
    ];
    let mut all = BTreeMap::new();
    for dtype in dtypes {
        for (layout, a) in layouts(dtype) {
            all.insert(format!("{dtype}.{layout}"), a);
        }
    }
    let metadata = BTreeMap::from([
        ("s".to_string(), MetadataValue::String("str".into())),
        (
            "l".to_string(),
            MetadataValue::Strings(vec!["x".into(), "y".into()]),
        ),
        ("e".to_string(), MetadataValue::Strings(vec![])),
        ("n".to_string(), MetadataValue::Array(Array::scalar(3i32))),
        ("b".to_string(), MetadataValue::Array(Array::scalar(true))),
        (
            "u".to_string(),
            MetadataValue::Array(Array::from_slice(&[1u64, u64::MAX], &[2]).unwrap()),
        ),
        (
            "f".to_string(),
            MetadataValue::Array(Array::from_slice(&[0.5f64], &[1]).unwrap()),
        ),
    ]);
    let path = dir.join("all");
    save_gguf(&path, &all, &metadata).unwrap();
    let Loaded::WithMetadata(m, meta) = load(path.with_extension("gguf"), None, true).unwrap()
    else {
        panic!()
    };
    for (name, a) in &all {
        assert_same(&m[name], a, name);
    }
    assert!(matches!(&meta["s"], MetadataValue::String(s) if s == "str"));
    assert!(matches!(&meta["l"], MetadataValue::Strings(v) if v == &["x", "y"]));
    assert!(matches!(&meta["e"], MetadataValue::Strings(v) if v.is_empty()));
    for key in ["n", "b", "u", "f"] {
        let (MetadataValue::Array(got), MetadataValue::Array(want)) = (&meta[key], &metadata[key])
        else {
            panic!("{key}")
        };
        assert_same(got, want, key);
    }
    // Unsupported dtypes and ranks are refused before anything is written.
    for dtype in [DType::Bool, DType::UInt8, DType::UInt32, DType::Complex64] {
        let err = save_gguf(
            dir.join("bad"),
            [("a", pattern(dtype, &[2]))],
            &BTreeMap::new(),
        )
        .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Value);
        assert!(err.message().contains("not supported"), "{err}");
    }
    let nine_d = pattern(DType::Float32, &[1, 1, 1, 1, 1, 1, 1, 1, 2]);
    assert_eq!(
        save_gguf(dir.join("bad"), [("a", &nine_d)], &BTreeMap::new())
            .unwrap_err()
            .kind(),
        ErrorKind::Value
    );
    let bad_meta = BTreeMap::from([(
        "m".to_string(),
        MetadataValue::Array(pattern(DType::Float16, &[2])),
    )]);
    assert_eq!(
        save_gguf(
            dir.join("bad"),
            [("a", &pattern(DType::Float32, &[2]))],
            &bad_meta
        )
        .unwrap_err()
        .kind(),
        ErrorKind::Value
    );
    assert!(!dir.join("bad.gguf").exists());
}

// ---------------------------------------------------------------------------------------
// The guide's examples (docs: saving and loading)

#[test]
fn guide_examples() {
    let dir = scratch("guide");
    // a = mx.array([1.0]); mx.save("array", a)  -> array.npy
    let a = Array::from_slice(&[1.0f32], &[1]).unwrap();
    save(dir.join("array"), &a).unwrap();
    assert!(dir.join("array.npy").exists());
    // mx.load("array.npy") -> array([1], dtype=float32)
    let loaded = load(dir.join("array.npy"), None, false)
        .unwrap()
        .into_array()
        .unwrap();
    assert_eq!(loaded.to_string(), "array([1], dtype=float32)");
    // b = mx.array([2.0]); mx.savez("arrays", a, b=b)
    let b = Array::from_slice(&[2.0f32], &[1]).unwrap();
    savez(dir.join("arrays"), &[&a], [("b", &b)]).unwrap();
    // mx.load("arrays.npz") -> {'b': array([2], dtype=float32), 'arr_0': array([1], ...)}
    let m = arrays(load(dir.join("arrays.npz"), None, false).unwrap());
    assert_eq!(m["b"].to_string(), "array([2], dtype=float32)");
    assert_eq!(m["arr_0"].to_string(), "array([1], dtype=float32)");
    // mx.save_safetensors("arrays", {"a": a, "b": b})
    save_safetensors(dir.join("arrays"), [("a", &a), ("b", &b)], None).unwrap();
    let m = arrays(load(dir.join("arrays.safetensors"), None, false).unwrap());
    assert_eq!(m["a"].to_string(), "array([1], dtype=float32)");
    // mx.save_gguf: same as save_safetensors, plus typed metadata.
    save_gguf(dir.join("arrays"), [("a", &a), ("b", &b)], &BTreeMap::new()).unwrap();
    let m = arrays(load(dir.join("arrays.gguf"), None, false).unwrap());
    assert_eq!(m["b"].to_string(), "array([2], dtype=float32)");
    // An extension other than the format's is kept and the format's appended, as MLX.
    save(dir.join("x.bin"), &a).unwrap();
    assert!(dir.join("x.bin.npy").exists());
    // `format` overrides the extension.
    std::fs::rename(dir.join("array.npy"), dir.join("array_noext")).unwrap();
    let err = load(dir.join("array_noext"), None, false).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Value);
    assert_eq!(
        err.message(),
        "[load] Could not infer file format from extension"
    );
    assert!(load(dir.join("array_noext"), Some("npy"), false).is_ok());
}

// ---------------------------------------------------------------------------------------
// Laziness, sharing and atomic saves

#[test]
fn loading_is_lazy_and_zero_copy_when_aligned() {
    let dir = scratch("lazy");
    let big = pattern(DType::Float32, &[256, 1024]);
    let small = pattern(DType::Int32, &[4]);
    let path = dir.join("w.safetensors");
    save_safetensors(&path, [("big", &big), ("small", &small)], None).unwrap();
    let m = arrays(load(&path, None, false).unwrap());
    assert!(!m["big"].is_evaluated() && !m["small"].is_evaluated());
    assert_eq!(
        m["small"].to_vec::<i32>().unwrap(),
        small.to_vec::<i32>().unwrap()
    );
    assert!(
        !m["big"].is_evaluated(),
        "using one tensor leaves the others unread"
    );
    // Aligned little-endian data is the mapped file itself: the raw pointer lies in no
    // pool buffer, and it stays valid after the loaded map is dropped.
    let raw = m["big"].raw_data().unwrap();
    let first = unsafe { *(raw.ptr() as *const f32) };
    assert_eq!(first, -0.75);
    drop(m);
    assert_eq!(unsafe { *(raw.ptr() as *const f32).add(5) }, 0.5);
}

#[test]
fn results_computed_in_place_never_reach_the_file() {
    let dir = scratch("cow");
    let path = dir.join("a.npy");
    save(&path, &pattern(DType::Float32, &[1000])).unwrap();
    let before = std::fs::read(&path).unwrap();
    // `a` is held only by the sin node, so sin may write into its (mapped) buffer.
    let a = load(&path, None, false).unwrap().into_array().unwrap();
    let s = a.sin().unwrap();
    drop(a);
    s.eval().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let again = load(&path, None, false).unwrap().into_array().unwrap();
    assert_same(&again, &pattern(DType::Float32, &[1000]), "file unchanged");
}

#[test]
fn saving_over_a_loaded_file_keeps_the_loaded_arrays() {
    let dir = scratch("overwrite");
    let path = dir.join("w.npy");
    save(&path, &pattern(DType::Int64, &[8])).unwrap();
    let old = load(&path, None, false).unwrap().into_array().unwrap();
    save(&path, &(&old * 2i64)).unwrap(); // reads old, then renames a new file over it
    assert_same(&old, &pattern(DType::Int64, &[8]), "old mapping intact");
    let new = load(&path, None, false).unwrap().into_array().unwrap();
    assert_eq!(new.to_vec::<i64>().unwrap()[1], 2 * (37 - 125));
    // No temporary files are left behind, after success or failure.
    assert!(
        save(dir.join("missing_dir/x.npy"), &old)
            .unwrap_err()
            .kind()
            == ErrorKind::NotFound
    );
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["w.npy"]);
}

#[test]
fn saving_evaluates_lazy_and_transformed_inputs() {
    let dir = scratch("lazy_save");
    let x = pattern(DType::Float32, &[4]);
    let y = (&x * 2.0f32).exp().unwrap();
    assert!(!y.is_evaluated());
    save(dir.join("y.npy"), &y).unwrap();
    let back = load(dir.join("y.npy"), None, false)
        .unwrap()
        .into_array()
        .unwrap();
    assert_same(&back, &y, "evaluated on save");
}

// ---------------------------------------------------------------------------------------
// Errors

#[test]
fn argument_errors_match_mlx() {
    let dir = scratch("args");
    let a = pattern(DType::Float32, &[2]);
    save(dir.join("a.npy"), &a).unwrap();
    let err = load(dir.join("nope.npy"), None, false).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    let err = load(dir.join("a.npy"), Some("xyz"), false).unwrap_err();
    assert_eq!(
        (err.kind(), err.message()),
        (ErrorKind::Value, "[load] Unknown file format xyz")
    );
    let err = load(dir.join("a.npy"), None, true).unwrap_err();
    assert_eq!(
        err.message(),
        "[load] metadata not supported for format npy"
    );
    let err = savez(dir.join("z"), &[&a], [("arr_0", &a)]).unwrap_err();
    assert_eq!(
        err.message(),
        "[savez] Cannot use un-named variables and keyword arr_0"
    );
    let err = save_safetensors(dir.join("d"), [("x", &a), ("x", &a)], None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Value);
    assert!(load(dir.join("a.npy"), None, false)
        .unwrap()
        .into_arrays()
        .is_err());
}

/// Writes `bytes` to a file of `ext` and loads it, evaluating every array.
fn load_bytes(dir: &Path, ext: &str, bytes: &[u8]) -> lazulite::Result<()> {
    let path = dir.join(format!("case.{ext}"));
    std::fs::write(&path, bytes).unwrap();
    let all: Vec<Array> = match load(&path, None, ext == "safetensors" || ext == "gguf")? {
        Loaded::Array(a) => vec![a],
        Loaded::Arrays(m) | Loaded::WithMetadata(m, _) => m.into_values().collect(),
    };
    for a in &all {
        a.eval()?;
    }
    Ok(())
}

fn expect_io_error(dir: &Path, ext: &str, bytes: &[u8], needle: &str) {
    let err = load_bytes(dir, ext, bytes).expect_err(needle);
    assert!(
        matches!(err.kind(), ErrorKind::Io | ErrorKind::Value),
        "{err}"
    );
    assert!(
        err.message().contains(needle),
        "expected '{needle}' in: {err}"
    );
}

fn npy_bytes(header_dict: &str, data: &[u8]) -> Vec<u8> {
    let mut dict = header_dict.to_string();
    while !(10 + dict.len() + 1).is_multiple_of(64) {
        dict.push(' ');
    }
    dict.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((dict.len() as u16).to_le_bytes());
    out.extend(dict.as_bytes());
    out.extend(data);
    out
}

fn safetensors_bytes(header: &str, data: &[u8]) -> Vec<u8> {
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend(header.as_bytes());
    out.extend(data);
    out
}

#[test]
fn malformed_npy_files_give_errors() {
    let dir = scratch("bad_npy");
    let d = |shape: &str, descr: &str| {
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}")
    };
    expect_io_error(&dir, "npy", b"", "bad magic");
    expect_io_error(&dir, "npy", b"garbage!!!!!", "bad magic");
    expect_io_error(
        &dir,
        "npy",
        &npy_bytes(&d("(4,)", "<f4"), &[0; 15]),
        "truncated",
    );
    expect_io_error(
        &dir,
        "npy",
        &npy_bytes(&d("(4,)", "<x4"), &[0; 16]),
        "unsupported dtype",
    );
    let huge = d("(4294967296, 4294967296, 4294967296)", "<f4");
    expect_io_error(&dir, "npy", &npy_bytes(&huge, &[]), "too large");
    expect_io_error(
        &dir,
        "npy",
        &npy_bytes(&d("(99999999999999999999999,)", "<f4"), &[]),
        "bad dimension",
    );
    expect_io_error(&dir, "npy", &npy_bytes("{'descr': '<f4'}", &[]), "lacks");
    expect_io_error(
        &dir,
        "npy",
        &npy_bytes("{'descr': '<f4', 'shape': (", &[]),
        "malformed",
    );
    let mut long = b"\x93NUMPY\x02\x00".to_vec();
    long.extend(u32::MAX.to_le_bytes());
    expect_io_error(&dir, "npy", &long, "too long");
    let mut lying = npy_bytes(&d("(1,)", "<f4"), &[0; 4]);
    lying[8] = 0xff; // header length past the end
    assert!(load_bytes(&dir, "npy", &lying).is_err());
    // A valid file with trailing bytes loads (NumPy ignores them too).
    assert!(load_bytes(&dir, "npy", &npy_bytes(&d("(1,)", "<f4"), &[0; 9])).is_ok());
    // Bools other than 0/1 in the file read as true, stored as 1.
    let path = dir.join("b.npy");
    std::fs::write(&path, npy_bytes(&d("(3,)", "|b1"), &[0, 1, 7])).unwrap();
    let b = load(&path, None, false).unwrap().into_array().unwrap();
    assert_eq!(
        b.astype(DType::UInt8).unwrap().to_vec::<u8>().unwrap(),
        [0, 1, 1]
    );
}

#[test]
fn malformed_safetensors_files_give_errors() {
    let dir = scratch("bad_st");
    let t = |dtype: &str, shape: &str, offsets: &str| {
        format!("{{\"dtype\":\"{dtype}\",\"shape\":{shape},\"data_offsets\":{offsets}}}")
    };
    expect_io_error(&dir, "safetensors", b"", "truncated");
    expect_io_error(&dir, "safetensors", &u64::MAX.to_le_bytes(), "too large");
    expect_io_error(
        &dir,
        "safetensors",
        &safetensors_bytes("{\"a\":", &[]),
        "malformed",
    );
    expect_io_error(&dir, "safetensors", &1000u64.to_le_bytes(), "truncated");
    expect_io_error(
        &dir,
        "safetensors",
        &safetensors_bytes("[1]", &[]),
        "not a JSON object",
    );
    let one = |entry: String, data: &[u8]| safetensors_bytes(&format!("{{\"a\":{entry}}}"), data);
    expect_io_error(
        &dir,
        "safetensors",
        &one(t("F32", "[2]", "[0,8]"), &[0; 4]),
        "do not fit",
    );
    expect_io_error(
        &dir,
        "safetensors",
        &one(t("F32", "[2]", "[0,4]"), &[0; 8]),
        "do not fit",
    );
    expect_io_error(
        &dir,
        "safetensors",
        &one(t("F32", "[2]", "[8,0]"), &[0; 8]),
        "do not fit",
    );
    expect_io_error(
        &dir,
        "safetensors",
        &one(t("F8_E5M2", "[2]", "[0,2]"), &[0; 2]),
        "unsupported dtype",
    );
    let huge = t("F32", "[4294967296,4294967296,4294967296]", "[0,0]");
    expect_io_error(&dir, "safetensors", &one(huge, &[]), "too large");
    let big_offset = t("U8", "[1]", "[18446744073709551615,18446744073709551616]");
    expect_io_error(&dir, "safetensors", &one(big_offset, &[]), "non-integer");
    let overlap = format!(
        "{{\"a\":{},\"b\":{}}}",
        t("F32", "[2]", "[0,8]"),
        t("F32", "[2]", "[4,12]")
    );
    expect_io_error(
        &dir,
        "safetensors",
        &safetensors_bytes(&overlap, &[0; 12]),
        "overlap",
    );
    let deep = "[".repeat(10_000);
    expect_io_error(
        &dir,
        "safetensors",
        &safetensors_bytes(&deep, &[]),
        "nested too deeply",
    );
    expect_io_error(
        &dir,
        "safetensors",
        &one("{\"dtype\":\"F32\"}".into(), &[]),
        "malformed 'shape'",
    );
    let meta = "{\"__metadata__\":{\"k\":1}}";
    expect_io_error(
        &dir,
        "safetensors",
        &safetensors_bytes(meta, &[]),
        "strings",
    );
}

/// A GGUF file with the given tensor descriptions (name, dims, GGML type, offset), no
/// metadata, then `data`.
fn gguf_file(tensors: &[(&str, &[u64], u32, u64)], data: &[u8]) -> Vec<u8> {
    let mut out = b"GGUF".to_vec();
    out.extend(3u32.to_le_bytes());
    out.extend((tensors.len() as u64).to_le_bytes());
    out.extend(0u64.to_le_bytes());
    for (name, dims, ggml_type, offset) in tensors {
        out.extend((name.len() as u64).to_le_bytes());
        out.extend(name.as_bytes());
        out.extend((dims.len() as u32).to_le_bytes());
        dims.iter().for_each(|d| out.extend(d.to_le_bytes()));
        out.extend(ggml_type.to_le_bytes());
        out.extend(offset.to_le_bytes());
    }
    while !out.len().is_multiple_of(32) {
        out.push(0);
    }
    out.extend(data);
    out
}

fn gguf_bytes(dims: &[u64], ggml_type: u32, offset: u64, data: &[u8]) -> Vec<u8> {
    gguf_file(&[("w", dims, ggml_type, offset)], data)
}

#[test]
fn malformed_gguf_files_give_errors() {
    let dir = scratch("bad_gguf");
    assert!(load_bytes(&dir, "gguf", &gguf_bytes(&[2], 0, 0, &[0; 8])).is_ok());
    expect_io_error(&dir, "gguf", b"GGU", "truncated");
    expect_io_error(&dir, "gguf", b"GGML\x03\x00\x00\x00", "bad magic");
    expect_io_error(&dir, "gguf", b"GGUF\x01\x00\x00\x00", "version");
    expect_io_error(&dir, "gguf", &gguf_bytes(&[2], 0, 0, &[0; 7]), "truncated");
    expect_io_error(
        &dir,
        "gguf",
        &gguf_bytes(&[2], 0, u64::MAX, &[0; 8]),
        "too large",
    );
    expect_io_error(
        &dir,
        "gguf",
        &gguf_bytes(&[2], 99, 0, &[0; 8]),
        "unsupported GGML tensor type",
    );
    expect_io_error(
        &dir,
        "gguf",
        &gguf_bytes(&[2; 9], 0, 0, &[0; 8]),
        "dimensions",
    );
    let huge = [1 << 32, 1 << 32, 1 << 32];
    expect_io_error(&dir, "gguf", &gguf_bytes(&huge, 0, 0, &[]), "too large");
    expect_io_error(
        &dir,
        "gguf",
        &gguf_bytes(&[33], 8, 0, &[0; 64]),
        "multiple of 32",
    );
    expect_io_error(
        &dir,
        "gguf",
        &gguf_bytes(&[64], 8, 0, &[0; 34]),
        "truncated",
    );
    // Counts that promise more than the file holds are refused before allocating.
    let mut counts = b"GGUF".to_vec();
    counts.extend(3u32.to_le_bytes());
    counts.extend(u64::MAX.to_le_bytes());
    counts.extend(0u64.to_le_bytes());
    expect_io_error(&dir, "gguf", &counts, "tensor count");
    let mut kv = b"GGUF".to_vec();
    kv.extend(3u32.to_le_bytes());
    kv.extend(0u64.to_le_bytes());
    kv.extend((1u64 << 60).to_le_bytes());
    expect_io_error(&dir, "gguf", &kv, "metadata count");
    // A string array claiming 2^60 items.
    let mut arr = b"GGUF".to_vec();
    arr.extend(3u32.to_le_bytes());
    arr.extend(0u64.to_le_bytes());
    arr.extend(1u64.to_le_bytes());
    arr.extend(1u64.to_le_bytes());
    arr.push(b'k');
    arr.extend(9u32.to_le_bytes());
    arr.extend(8u32.to_le_bytes());
    arr.extend((1u64 << 60).to_le_bytes());
    arr.extend([0u8; 16]);
    expect_io_error(&dir, "gguf", &arr, "bytes left");
    // Two tensors over the same bytes.
    let two = gguf_file(&[("a", &[2], 0, 0), ("b", &[2], 0, 4)], &[0; 16]);
    expect_io_error(&dir, "gguf", &two, "overlap");
}

#[test]
fn malformed_npz_files_give_errors() {
    let dir = scratch("bad_npz");
    expect_io_error(&dir, "npz", b"", "zip");
    expect_io_error(&dir, "npz", b"PK\x03\x04 not really", "zip");
    // A compressed entry whose npy header promises far more than its stream can hold.
    let path = dir.join("ok.npz");
    savez_compressed(&path, &[], [("a", pattern(DType::Float32, &[64]))]).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let at = bytes.windows(5).position(|w| w == b"(64,)");
    assert!(at.is_none(), "the header is compressed");
    // Truncating the archive anywhere gives an error, not a panic.
    for cut in 0..bytes.len() {
        let _ = load_bytes(&dir, "npz", &bytes[..cut]);
    }
}

/// A small deterministic generator (xorshift) for the mutation test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Flips, overwrites and truncates bytes of valid files of every format and loads the
/// result: any outcome but a panic (or an abort from a huge allocation) is fine.
#[test]
fn mutated_files_never_panic() {
    let dir = scratch("mutate");
    let sources = [
        (fixture("npy/be_complex64.npy"), "npy"),
        (fixture("npy/fortran_be_float64.npy"), "npy"),
        (fixture("npz/savez.npz"), "npz"),
        (fixture("npz/savez_compressed.npz"), "npz"),
        (fixture("safetensors/numpy.safetensors"), "safetensors"),
        (fixture("gguf/tensors.gguf"), "gguf"),
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let interesting = [0u8, 1, 0x7f, 0x80, 0xff];
    for (path, ext) in sources {
        let original = std::fs::read(&path).unwrap();
        assert!(load_bytes(&dir, ext, &original).is_ok(), "{path:?} loads");
        for round in 0..300 {
            let mut bytes = original.clone();
            match round % 4 {
                0 => {
                    let i = rng.below(bytes.len());
                    bytes[i] ^= 1 << rng.below(8);
                }
                1 => {
                    for _ in 0..1 + rng.below(4) {
                        let i = rng.below(bytes.len());
                        bytes[i] = interesting[rng.below(interesting.len())];
                    }
                }
                2 => bytes.truncate(rng.below(bytes.len())),
                _ => {
                    // Overwrite a little-endian length or count field's high byte.
                    let i = rng.below(bytes.len().min(512));
                    bytes[i] = 0xff;
                    if i + 1 < bytes.len() {
                        bytes[i + 1] = 0x7f;
                    }
                }
            }
            let _ = load_bytes(&dir, ext, &bytes);
        }
    }
}
