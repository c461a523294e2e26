//! Linear algebra ops against NumPy (fixtures from `tools/fixtures/linalg.py`), and their
//! errors.

use crate::common;

use common::{array_from_json, assert_matches, json_dtype, load_fixture};
use lazulite::{
    addmm, einsum, einsum_path, inner, kron, matmul, outer, tensordot, vecdot, Array, DType,
    ErrorKind, TensordotAxes,
};
use serde_json::Value;

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .expect("list")
        .iter()
        .map(|x| x.as_i64().expect("int"))
        .collect()
}

/// The fixture input with its views applied (transpose, slice, broadcast).
fn input(v: &Value) -> Array {
    let mut a = array_from_json(&v["array"]);
    for view in v["views"].as_array().expect("views") {
        a = match view[0].as_str().expect("view kind") {
            "transpose" => {
                let perm: Vec<i32> = ints(&view[1]).iter().map(|&p| p as i32).collect();
                a.transpose(&perm).unwrap()
            }
            "slice" => {
                lazulite::slice(&a, &ints(&view[1]), &ints(&view[2]), &ints(&view[3])).unwrap()
            }
            "broadcast" => {
                let shape: Vec<usize> = ints(&view[1]).iter().map(|&d| d as usize).collect();
                a.broadcast_to(&shape).unwrap()
            }
            other => panic!("unknown view {other}"),
        };
    }
    a
}

fn tensordot_axes(v: &Value) -> TensordotAxes {
    match v {
        Value::Number(n) => TensordotAxes::Count(n.as_i64().expect("int")),
        Value::Array(pair) => {
            let axes = |x: &Value| ints(x).iter().map(|&a| a as i32).collect::<Vec<_>>();
            TensordotAxes::Pairs(axes(&pair[0]), axes(&pair[1]))
        }
        other => panic!("bad axes {other}"),
    }
}

/// Tolerances for results of `dtype` computed from inputs exact in every float dtype.
fn tolerance(dtype: DType) -> (f64, f64) {
    match dtype {
        DType::Float64 => (1e-12, 1e-12),
        DType::Float16 => (2e-3, 2e-3),
        DType::BFloat16 => (8e-3, 1e-2),
        _ => (1e-5, 1e-5),
    }
}

fn run_case(case: &Value) -> Array {
    let inputs: Vec<Array> = case["inputs"]
        .as_array()
        .expect("inputs")
        .iter()
        .map(input)
        .collect();
    let params = &case["params"];
    let f = |k: &str| params[k].as_f64().expect("float param");
    let result = match case["op"].as_str().expect("op") {
        "matmul" => matmul(&inputs[0], &inputs[1]),
        "addmm" => addmm(&inputs[0], &inputs[1], &inputs[2], f("alpha"), f("beta")),
        "inner" => inner(&inputs[0], &inputs[1]),
        "outer" => outer(&inputs[0], &inputs[1]),
        "tensordot" => tensordot(&inputs[0], &inputs[1], tensordot_axes(&params["axes"])),
        "vecdot" => vecdot(
            &inputs[0],
            &inputs[1],
            params["axis"].as_i64().unwrap() as i32,
        ),
        "kron" => kron(&inputs[0], &inputs[1]),
        "einsum" => {
            let refs: Vec<&Array> = inputs.iter().collect();
            einsum(params["subscripts"].as_str().unwrap(), &refs)
        }
        other => panic!("unknown op {other}"),
    };
    result.unwrap_or_else(|e| panic!("{}: {e}", case["name"]))
}

fn check_cases(op: &str) {
    let fixture = load_fixture("linalg");
    let mut count = 0;
    for case in fixture["cases"].as_array().unwrap() {
        if case["op"] != op {
            continue;
        }
        let name = case["name"].as_str().unwrap();
        let (rtol, atol) = tolerance(json_dtype(&case["expected"]["dtype"]));
        assert_matches(&run_case(case), &case["expected"], rtol, atol, name);
        count += 1;
    }
    assert!(count > 0, "no {op} cases");
}

#[test]
fn matmul_matches_numpy() {
    check_cases("matmul");
}

#[test]
fn addmm_matches_numpy() {
    check_cases("addmm");
}

#[test]
fn inner_outer_kron_match_numpy() {
    check_cases("inner");
    check_cases("outer");
    check_cases("kron");
}

#[test]
fn tensordot_matches_numpy() {
    check_cases("tensordot");
}

#[test]
fn vecdot_matches_numpy() {
    check_cases("vecdot");
}

#[test]
fn einsum_matches_numpy() {
    check_cases("einsum");
}

fn f32s(values: &[f32], shape: &[usize]) -> Array {
    Array::from_slice(values, shape).unwrap()
}

fn zeros(shape: &[usize]) -> Array {
    lazulite::zeros(shape, DType::Float32).unwrap()
}

#[test]
fn matmul_is_lazy_and_method_form_agrees() {
    let a = f32s(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let p = a.matmul(&a).unwrap();
    assert!(!p.is_evaluated());
    assert_eq!(p.to_vec::<f32>().unwrap(), vec![7.0, 10.0, 15.0, 22.0]);
    assert_eq!(
        p.to_string(),
        "array([[7, 10],\n       [15, 22]], dtype=float32)"
    );
}

#[test]
fn addmm_with_zero_beta_ignores_nan_in_c() {
    let c = f32s(&[f32::NAN], &[1, 1]);
    let a = f32s(&[2.0], &[1, 1]);
    let r = addmm(&c, &a, &a, 1.5, 0.0).unwrap();
    assert_eq!(r.to_vec::<f32>().unwrap(), vec![6.0]);
}

#[test]
fn addmm_reuses_nothing_it_does_not_own() {
    // `c` is read, not overwritten: it keeps its values after addmm is evaluated.
    let c = f32s(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let eye = f32s(&[1.0, 0.0, 0.0, 1.0], &[2, 2]);
    let r = addmm(&c, &eye, &eye, 1.0, 1.0).unwrap();
    assert_eq!(r.to_vec::<f32>().unwrap(), vec![2.0, 2.0, 3.0, 5.0]);
    assert_eq!(c.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
}

/// Asserts `result` is an error of `kind` whose message contains `text`.
fn assert_error(result: lazulite::Result<Array>, kind: ErrorKind, text: &str) {
    let err = result.expect_err(text);
    assert_eq!(err.kind(), kind, "{err}");
    assert!(
        err.message().contains(text),
        "{err} does not contain {text:?}"
    );
}

#[test]
fn matmul_errors() {
    let (a, b) = (zeros(&[2, 3]), zeros(&[2, 3]));
    assert_error(
        matmul(&a, &b),
        ErrorKind::Value,
        "[matmul] Last dimension of first input with shape (2,3) must match second to last \
         dimension of second input with shape (2,3).",
    );
    assert_error(
        matmul(&zeros(&[3]), &zeros(&[4])),
        ErrorKind::Value,
        "shape (1,3) must match second to last dimension of second input with shape (4,1)",
    );
    assert_error(
        matmul(&Array::scalar(1.0f32), &zeros(&[3])),
        ErrorKind::Value,
        "[matmul] Got 0 dimension input.",
    );
    assert_error(
        matmul(&zeros(&[2, 3, 4]), &zeros(&[5, 4, 2])),
        ErrorKind::Value,
        "(2,3,4) and (5,4,2) cannot be broadcast",
    );
    let i = Array::from_slice(&[1i32, 2, 3, 4], &[2, 2]).unwrap();
    assert_error(
        matmul(&i, &i),
        ErrorKind::Value,
        "[matmul] Only inexact types are supported but int32 and int32 were provided which \
         results in int32, which is not a floating point type.",
    );
    let flags = Array::from_slice(&[true, false], &[2]).unwrap();
    assert_error(matmul(&flags, &flags), ErrorKind::Value, "bool and bool");
    // The inputs are untouched by the failed calls.
    assert_eq!(i.to_vec::<i32>().unwrap(), vec![1, 2, 3, 4]);
    assert_eq!(a.shape(), &[2, 3]);
}

#[test]
fn addmm_errors() {
    let c = zeros(&[2, 2]);
    let i = Array::from_slice(&[1i32, 2, 3, 4], &[2, 2]).unwrap();
    assert_error(
        addmm(&i, &i, &i, 1.0, 1.0),
        ErrorKind::Value,
        "[addmm] Only real floating point types are supported but int32, int32 and int32",
    );
    assert_error(
        addmm(&zeros(&[3, 2]), &zeros(&[2, 3]), &zeros(&[3, 2]), 1.0, 1.0),
        ErrorKind::Value,
        "[addmm] Input c with shape (3,2) must broadcast to the output shape (2,2).",
    );
    assert_error(
        addmm(
            &zeros(&[5, 2, 2]),
            &zeros(&[2, 3]),
            &zeros(&[3, 2]),
            1.0,
            1.0,
        ),
        ErrorKind::Value,
        "must broadcast to the output shape",
    );
    assert_error(
        addmm(&c, &zeros(&[2, 3]), &zeros(&[2, 2]), 1.0, 1.0),
        ErrorKind::Value,
        "[addmm] Last dimension of first input",
    );
}

#[test]
fn inner_outer_kron_errors() {
    assert_error(
        inner(&zeros(&[2, 3]), &zeros(&[4, 2])),
        ErrorKind::Value,
        "[inner] a and b must have the same last dimension",
    );
    let i = Array::from_slice(&[1i32, 2], &[2]).unwrap();
    assert_error(
        inner(&i, &i),
        ErrorKind::Value,
        "[matmul] Only inexact types",
    );
    assert_error(
        kron(&zeros(&[2, 0]), &zeros(&[3])),
        ErrorKind::Value,
        "[kron] Input arrays cannot be empty",
    );
    assert_eq!(
        outer(&i, &i).unwrap().to_vec::<i32>().unwrap(),
        vec![1, 2, 2, 4]
    );
}

#[test]
fn tensordot_errors() {
    let (a, b) = (zeros(&[2, 3, 4]), zeros(&[3, 4, 5]));
    assert_error(
        tensordot(&a, &b, -1),
        ErrorKind::Value,
        "[tensordot] axis must be greater or equal to 0.",
    );
    assert_error(
        tensordot(&a, &b, 4),
        ErrorKind::Value,
        "[tensordot] axis must be less than the number of dimensions of a and b",
    );
    assert_error(
        tensordot(&a, &b, (vec![1, 2], vec![1])),
        ErrorKind::Value,
        "[tensordot] axes must have the same size",
    );
    assert_error(
        tensordot(&a, &b, ([5], [1])),
        ErrorKind::Axis,
        "[tensordot] Invalid axis 5 for array with 3 dimensions.",
    );
    assert_error(
        tensordot(&a, &b, ([1, 1], [0, 0])),
        ErrorKind::Value,
        "[tensordot] Repeated axes",
    );
    assert_error(
        tensordot(&zeros(&[2, 3]), &zeros(&[2, 3]), 1),
        ErrorKind::Value,
        "[tensordot] a and b must have the same shape on the contracted axes",
    );
    assert_eq!(tensordot(&a, &b, 2).unwrap().shape(), &[2, 5]);
}

#[test]
fn vecdot_errors() {
    assert_error(
        vecdot(&Array::scalar(1.0f32), &Array::scalar(1.0f32), -1),
        ErrorKind::Value,
        "[vecdot] inputs must be at least 1D.",
    );
    assert_error(
        vecdot(&zeros(&[2, 3]), &zeros(&[2, 3]), 5),
        ErrorKind::Axis,
        "[vecdot] axis 5 is out of bounds",
    );
    assert_error(
        vecdot(&zeros(&[2, 3]), &zeros(&[2, 4]), -1),
        ErrorKind::Value,
        "[vecdot] a and b must have the same size along axis",
    );
    assert_error(
        vecdot(&zeros(&[2, 3]), &zeros(&[4, 3]), -1),
        ErrorKind::Value,
        "[vecdot] Shapes (2) and (4) cannot be broadcast.",
    );
}

#[test]
fn vecdot_of_integers_sums_the_products() {
    let i = Array::from_slice(&[1i32, 2, -3, 4], &[2, 2]).unwrap();
    let v = vecdot(&i, &i, -1).unwrap();
    assert_eq!(v.dtype(), lazulite::DType::Int32);
    assert_eq!(v.to_vec::<i32>().unwrap(), vec![5, 25]);
}

#[test]
fn einsum_errors() {
    let m = zeros(&[2, 3]);
    let e = |s: &str, ops: &[&Array]| einsum(s, ops);
    assert_error(
        e("ij,jk", &[]),
        ErrorKind::Value,
        "[einsum] At least one operand is required.",
    );
    assert_error(
        e("ij,jk", &[&m]),
        ErrorKind::Value,
        "[einsum] Number of operands, 1, does not match number of input subscripts, 2",
    );
    assert_error(
        e("i1", &[&m]),
        ErrorKind::Value,
        "Subscripts must be letters, but got '1'.",
    );
    assert_error(e("i..j", &[&m]), ErrorKind::Value, "but got '.'.");
    assert_error(e("ij->j->i", &[&m]), ErrorKind::Value, "but got '-'.");
    assert_error(
        e("...i...", &[&m]),
        ErrorKind::Value,
        "Only one ellipsis per subscript",
    );
    assert_error(
        e("ijk", &[&m]),
        ErrorKind::Value,
        "[einsum] Invalid number of subscripts 3 for input 0 with 2 dimensions.",
    );
    assert_error(
        e("...ijk", &[&m]),
        ErrorKind::Value,
        "[einsum] Operand 0 with shape (2,3) has insufficient dimensions for subscript \
         '...ijk'. The ellipsis requires at least 3 dimensions but the operand has 2 \
         dimensions.",
    );
    assert_error(e("i\tj", &[&m]), ErrorKind::Value, "but got '\t'.");
    assert_error(
        e("ij->ii", &[&m]),
        ErrorKind::Value,
        "Repeat indices not allowed in output.",
    );
    assert_error(
        e("ij->ik", &[&m]),
        ErrorKind::Value,
        "Output subscript 'k' does not appear",
    );
    assert_error(
        e("ii->", &[&m]),
        ErrorKind::Value,
        "Dimensions of repeated subscripts do not have the same size (2 != 3)",
    );
    assert_error(
        e("ij,ij", &[&m, &zeros(&[3, 3])]),
        ErrorKind::Value,
        "[einsum] Cannot broadcast dimension 0 of input 1 with shape (3,3) to size 2.",
    );
    let i = Array::from_slice(&[1i32, 2], &[2]).unwrap();
    assert_error(
        e("i,i", &[&i, &i]),
        ErrorKind::Value,
        "[matmul] Only inexact types",
    );
    assert_error(e("i->", &[&i]), ErrorKind::NotImplemented, "int32");
    assert_eq!(i.to_vec::<i32>().unwrap(), vec![1, 2]);
}

/// A zero broadcast to `shape`: only the shape is stored.
fn wide(shape: &[usize]) -> Array {
    lazulite::broadcast_to(&Array::from_slice(&[0.0f32], &[]).unwrap(), shape).unwrap()
}

fn report(naive: (usize, u128), optimized: (usize, u128), subscripts: &str) -> String {
    format!(
        "  Complete contraction:  {subscripts}\n         Naive scaling:  {}\n     \
         Optimized scaling:  {}\n      Naive FLOP count:  {}\n  Optimized FLOP count:  {}\n",
        naive.0, optimized.0, naive.1, optimized.1
    )
}

#[test]
fn einsum_path_of_a_chain_contracts_the_cheap_end_first() {
    let (a, b, c) = (wide(&[2, 3]), wide(&[3, 4]), wide(&[4, 5]));
    let (path, text) = einsum_path("ij,jk,kl->il", &[&a, &b, &c]).unwrap();
    // Naive: i,j,k,l = 120 elements, times 2 (three terms) + 1 (a sum) = 360. Greedy:
    // jk,kl frees 12 + 20 - 15 elements (ij,jk frees only 6 + 12 - 8), costing 60 * 2;
    // then ij,jl costs 30 * 2.
    assert_eq!(path, vec![vec![1, 2], vec![0, 1]]);
    assert_eq!(text, report((4, 360), (3, 180), "ij,jk,kl->il"));
    // One or two operands: one step over all of them.
    let (path, text) = einsum_path("ii", &[&wide(&[3, 3])]).unwrap();
    assert_eq!(path, vec![vec![0]]);
    assert_eq!(text, report((1, 6), (1, 6), "ii"));
}

#[test]
fn einsum_path_contracts_the_rest_at_once_when_no_pair_fits() {
    let shapes: [&[usize]; 5] = [&[2, 3, 4], &[3, 4, 5], &[4, 5, 6], &[5, 6, 2], &[6, 2, 3]];
    let ops: Vec<Array> = shapes.iter().map(|s| wide(s)).collect();
    let refs: Vec<&Array> = ops.iter().collect();
    let (path, text) = einsum_path("abc,bcd,cde,dea,eab->", &refs).unwrap();
    // Real MLX 0.32.4 gives this path and these counts.
    assert_eq!(path, vec![vec![0, 1], vec![0, 1, 2, 3]]);
    assert_eq!(text, report((5, 3600), (5, 3000), "abc,bcd,cde,dea,eab->"));
    // einsum follows the same steps: a full sum of products of ones.
    let ones: Vec<Array> = shapes
        .iter()
        .map(|s| lazulite::ones(s, DType::Float32).unwrap())
        .collect();
    let refs: Vec<&Array> = ones.iter().collect();
    let total = einsum("abc,bcd,cde,dea,eab->", &refs).unwrap();
    assert_eq!(total.item::<f32>().unwrap(), 720.0);
}

#[test]
fn einsum_path_counts_do_not_overflow() {
    let n = 1usize << 20;
    let a = wide(&[n, n]);
    let (path, text) = einsum_path("ij,jk,kl", &[&a, &a, &a]).unwrap();
    let n = n as u128;
    assert_eq!(path, vec![vec![0, 1], vec![0, 1]]);
    assert_eq!(
        text,
        report((4, n.pow(4) * 3), (3, n.pow(3) * 4), "ij,jk,kl")
    );
    let big = wide(&[1 << 29, 1 << 30]);
    let (_, text) = einsum_path("ab,cd,ef->", &[&big, &big, &big]).unwrap();
    assert!(
        text.contains(&format!("Naive FLOP count:  {}\n", u128::MAX)),
        "{text}"
    );
}

#[test]
fn einsum_path_errors_name_einsum_path() {
    let m = zeros(&[2, 3]);
    let err = |s: &str, ops: &[&Array]| einsum_path(s, ops).map(|_| m.clone());
    assert_error(
        err("ij,jk", &[]),
        ErrorKind::Value,
        "[einsum_path] At least one operand is required.",
    );
    assert_error(
        err("ij,ij", &[&m, &zeros(&[4, 3])]),
        ErrorKind::Value,
        "[einsum_path] Cannot broadcast dimension 0 of input 1 with shape (4,3) to size 2.",
    );
    assert_error(
        err("ij->k", &[&m]),
        ErrorKind::Value,
        "[einsum_path] Output subscript 'k' does not appear in the input subscripts.",
    );
}

#[test]
fn gather_mm_equals_a_loop_of_products() {
    let data = |n: usize, scale: f64| {
        (0..n)
            .map(|i| ((i * 7 % 11) as f64 - 5.0) * scale)
            .collect::<Vec<_>>()
    };
    let a = Array::from_slice(&data(3 * 2 * 4, 0.25), &[3, 2, 4]).unwrap();
    let b = Array::from_slice(&data(5 * 4 * 6, 0.5), &[5, 4, 6]).unwrap();
    let (lhs, rhs) = ([2u32, 0, 2, 1], [4u32, 4, 0, 3]);
    let out = lazulite::gather_mm(
        &a,
        &b,
        Some(&Array::from_slice(&lhs, &[2, 2]).unwrap()),
        Some(&Array::from_slice(&rhs, &[2, 2]).unwrap()),
    )
    .unwrap();
    assert_eq!(out.shape(), &[2, 2, 2, 6]);
    let (av, bv) = (a.to_vec::<f64>().unwrap(), b.to_vec::<f64>().unwrap());
    let mut want = Vec::new();
    for (&l, &r) in lhs.iter().zip(&rhs) {
        for i in 0..2 {
            for j in 0..6 {
                want.push(
                    (0..4)
                        .map(|k| av[l as usize * 8 + i * 4 + k] * bv[r as usize * 24 + k * 6 + j])
                        .sum::<f64>(),
                );
            }
        }
    }
    assert_eq!(out.to_vec::<f64>().unwrap(), want);
    // Every float dtype; vectors on either side lose their dimension.
    for dtype in [DType::Float16, DType::BFloat16, DType::Float32] {
        let r = lazulite::gather_mm(
            &a.astype(dtype).unwrap(),
            &b.astype(dtype).unwrap(),
            None,
            Some(&Array::from_slice(&[1u32, 2, 3], &[3]).unwrap()),
        )
        .unwrap();
        assert_eq!((r.shape(), r.dtype()), (&[3usize, 2, 6][..], dtype));
    }
    let v = Array::from_slice(&data(4, 1.0), &[4]).unwrap();
    let r = lazulite::gather_mm(
        &v,
        &b,
        None,
        Some(&Array::from_slice(&[1u32, 2], &[2]).unwrap()),
    )
    .unwrap();
    assert_eq!(r.shape(), &[2, 6]);
}

#[test]
fn gather_mm_rejects_bad_operands() {
    let a = lazulite::ones(&[3, 2, 4], DType::Float32).unwrap();
    let b = lazulite::ones(&[5, 4, 6], DType::Float32).unwrap();
    let i = |v: &[i32]| Array::from_slice(v, &[v.len()]).unwrap();
    let kind = |r: lazulite::Result<Array>| r.and_then(|x| x.eval().map(|_| x)).unwrap_err().kind();
    use lazulite::ErrorKind;
    // Out of range, and negative (cast to uint32 as MLX does): an index error on evaluation.
    assert_eq!(
        kind(lazulite::gather_mm(
            &a,
            &b,
            Some(&i(&[0, 3])),
            Some(&i(&[0, 0]))
        )),
        ErrorKind::Index
    );
    assert_eq!(
        kind(lazulite::gather_mm(&a, &b, None, Some(&i(&[-1])))),
        ErrorKind::Index
    );
    let f = Array::from_slice(&[0.0f32], &[1]).unwrap();
    assert_eq!(
        kind(lazulite::gather_mm(&a, &b, Some(&f), None)),
        ErrorKind::Value
    );
    assert_eq!(
        kind(lazulite::gather_mm(&a, &a, Some(&i(&[0])), None)),
        ErrorKind::Value
    );
    // Integer operands of a product that promotes to an integer dtype.
    let ints = lazulite::ones(&[3, 2, 4], DType::Int32).unwrap();
    assert_eq!(
        kind(lazulite::gather_mm(
            &ints,
            &ints.swapaxes(-1, -2).unwrap(),
            Some(&i(&[0])),
            None
        )),
        ErrorKind::Value
    );
    assert_eq!(
        kind(lazulite::gather_mm(
            &a,
            &b,
            Some(&i(&[0, 1, 2])),
            Some(&i(&[0, 1]))
        )),
        ErrorKind::Value
    );
}

fn normal(shape: &[usize]) -> Array {
    lazulite::random::normal(shape, DType::Float32, None, None, None).unwrap()
}

fn float64(a: &Array) -> Array {
    a.astype(DType::Float64).unwrap()
}

/// Products of `(m, k)` by `(k, n)` in each float dtype against float64 products of the
/// same values: both unit-stride layouts of the right operand, a left operand whose rows
/// are a slice of wider ones, batches, broadcasts, gathers and addmm.
fn products_match_float64_in_every_layout(shapes: &[(usize, usize, usize)]) {
    for dtype in [DType::Float32, DType::BFloat16, DType::Float16] {
        for &(m, k, n) in shapes {
            let what = format!("{dtype} m={m} k={k} n={n}");
            // float32 sums round more the deeper they are (the deepest case here, 8192,
            // left 8e-5 too little in one run of many).
            let tol = match dtype {
                DType::Float32 => 1e-5 * (k as f64 / 256.0).max(1.0),
                _ => 1e-2,
            };
            let check = |got: &Array, want: &Array, dtype: DType, what: &str| {
                assert_eq!(got.dtype(), dtype, "{what}");
                assert_eq!(got.shape(), want.shape(), "{what}");
                let close = lazulite::allclose(&float64(got), want, tol, tol, false).unwrap();
                assert!(close.item::<bool>().unwrap(), "{what}");
            };
            let x = normal(&[m, k]).astype(dtype).unwrap();
            // Row-major (k, n), and the transpose of a row-major (n, k).
            let b_rows = normal(&[k, n]).astype(dtype).unwrap();
            let b_cols = normal(&[n, k])
                .astype(dtype)
                .unwrap()
                .transpose(&[1, 0])
                .unwrap();
            for b in [&b_rows, &b_cols] {
                let want = matmul(&float64(&x), &float64(b)).unwrap();
                check(&matmul(&x, b).unwrap(), &want, dtype, &what);
                let c = normal(&[m, n]).astype(dtype).unwrap();
                let want_addmm = addmm(&float64(&c), &float64(&x), &float64(b), 0.5, 2.0).unwrap();
                check(
                    &addmm(&c, &x, b, 0.5, 2.0).unwrap(),
                    &want_addmm,
                    dtype,
                    &what,
                );
            }
            let wide = normal(&[m, k + 6]).astype(dtype).unwrap();
            let sliced = lazulite::slice(&wide, &[0, 0], &[m as i64, k as i64], &[1, 1]).unwrap();
            let want = matmul(&float64(&sliced), &float64(&b_cols)).unwrap();
            check(&matmul(&sliced, &b_cols).unwrap(), &want, dtype, &what);
            // A batch of left operands against one broadcast right operand, and a batch
            // of right operands.
            let xs = normal(&[3, m, k]).astype(dtype).unwrap();
            let want = matmul(&float64(&xs), &float64(&b_cols)).unwrap();
            check(&matmul(&xs, &b_cols).unwrap(), &want, dtype, &what);
            let bs = normal(&[3, n, k])
                .astype(dtype)
                .unwrap()
                .transpose(&[0, 2, 1])
                .unwrap();
            let want = matmul(&float64(&x), &float64(&bs)).unwrap();
            check(&matmul(&x, &bs).unwrap(), &want, dtype, &what);
            let rhs = Array::from_slice(&[2u32, 0, 2], &[3]).unwrap();
            let got = lazulite::gather_mm(&x, &bs, None, Some(&rhs)).unwrap();
            let want = lazulite::gather_mm(&float64(&x), &float64(&bs), None, Some(&rhs)).unwrap();
            check(&got, &want, dtype, &what);
            // Gathered left operands of more dimensions than the right one.
            let lhs = Array::from_slice(&[1u32, 2, 0, 1], &[4]).unwrap();
            let got = lazulite::gather_mm(&xs, &b_cols, Some(&lhs), None).unwrap();
            let want =
                lazulite::gather_mm(&float64(&xs), &float64(&b_cols), Some(&lhs), None).unwrap();
            check(&got, &want, dtype, &what);
        }
    }
}

#[test]
fn few_row_products_match_float64_in_every_layout() {
    // Up to 8 rows on the left (one decode step of a language model): the right operand
    // is streamed in its own dtype and layout.
    products_match_float64_in_every_layout(&[
        (1, 1, 5),
        (1, 300, 33),
        (2, 64, 1),
        (3, 7, 40),
        (5, 129, 17),
        (8, 64, 600),
    ]);
}

#[test]
fn many_row_products_match_float64_in_every_layout() {
    // More rows (a prefill): bfloat16 with an even depth goes through the pair-product
    // tiles (column blocks of 32, rows in passes of 8), other cases through gemm. With a
    // depth-contiguous right operand and a depth of 64 or more, gemm gets the right
    // operand copied row-major (40 x 64 by 64 x 70), or the left one copied column-major
    // and the result transposed (12 x 80 by 80 x 200). Half-precision weights without the
    // pair product are widened in panels of 2^21 values: a depth of 8192 makes panels of
    // 256 columns, so 300 columns take two.
    products_match_float64_in_every_layout(&[
        (9, 2, 33),
        (40, 64, 70),
        (12, 80, 200),
        (130, 96, 65),
        (17, 300, 1),
        (20, 33, 40),
        (9, 8192, 300),
    ]);
}

#[test]
fn products_with_a_depth_contiguous_right_operand_match_a_loop() {
    // `x @ W.T` with W row-major (the right operand contiguous along the depth) and more
    // rows than the few-row kernel takes, so that gemm computes it.
    let (m, k, n) = (20, 33, 50);
    let x = lazulite::random::normal(&[m, k], DType::Float64, None, None, None).unwrap();
    let w = lazulite::random::normal(&[n, k], DType::Float64, None, None, None).unwrap();
    let c = lazulite::random::normal(&[m, n], DType::Float64, None, None, None).unwrap();
    let (xv, wv, cv) = (
        x.to_vec::<f64>().unwrap(),
        w.to_vec::<f64>().unwrap(),
        c.to_vec::<f64>().unwrap(),
    );
    let dot = |i: usize, j: usize| (0..k).map(|t| xv[i * k + t] * wv[j * k + t]).sum::<f64>();
    let product: Vec<f64> = (0..m * n).map(|e| dot(e / n, e % n)).collect();
    let with_addend: Vec<f64> = (0..m * n).map(|e| 0.5 * product[e] + 2.0 * cv[e]).collect();
    for dtype in [DType::Float64, DType::Float32, DType::Float16] {
        let tol = match dtype {
            DType::Float64 => 1e-12,
            DType::Float32 => 1e-4,
            _ => 5e-2,
        };
        let (x, w, c) = (
            x.astype(dtype).unwrap(),
            w.astype(dtype).unwrap(),
            c.astype(dtype).unwrap(),
        );
        let wt = w.transpose(&[1, 0]).unwrap();
        for (got, want) in [
            (matmul(&x, &wt).unwrap(), &product),
            (addmm(&c, &x, &wt, 0.5, 2.0).unwrap(), &with_addend),
        ] {
            assert_eq!((got.shape(), got.dtype()), (&[m, n][..], dtype));
            let got = got.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap();
            for (g, e) in got.iter().zip(want.iter()) {
                assert!(
                    (g - e).abs() <= tol * (1.0 + e.abs()),
                    "{dtype}: {g} vs {e}"
                );
            }
        }
    }
    // A batch of inputs against one broadcast weight, with a broadcast bias row.
    let xs = lazulite::random::normal(&[2, m, k], DType::Float64, None, None, None).unwrap();
    let bias = lazulite::random::normal(&[n], DType::Float64, None, None, None).unwrap();
    let (xsv, biasv) = (xs.to_vec::<f64>().unwrap(), bias.to_vec::<f64>().unwrap());
    let got = addmm(&bias, &xs, &w.transpose(&[1, 0]).unwrap(), 1.0, 1.0).unwrap();
    assert_eq!(got.shape(), &[2, m, n][..]);
    for (e, g) in got.to_vec::<f64>().unwrap().into_iter().enumerate() {
        let (b, i, j) = (e / (m * n), e / n % m, e % n);
        let row = &xsv[(b * m + i) * k..][..k];
        let want = biasv[j] + (0..k).map(|t| row[t] * wv[j * k + t]).sum::<f64>();
        assert!(
            (g - want).abs() <= 1e-12 * (1.0 + want.abs()),
            "{g} vs {want}"
        );
    }
}

#[test]
fn batches_against_one_broadcast_right_operand_match_a_loop() {
    // `x @ W` with `x` of shape (batch..., m, k) and `W` shared by every matrix of the
    // batch runs as one product of all the rows when the batch and row axes of `x` (and
    // of an addend) collapse; the layouts below collapse or do not, and all must agree
    // with a product written out element by element.
    let (m, k, n) = (10, 19, 23);
    let value = |i: usize| ((i * 37 % 101) as f64 - 50.0) / 16.0;
    let (xv, wv, cv): (Vec<f64>, Vec<f64>, Vec<f64>) = (
        (0..6 * m * k).map(value).collect(),
        (0..k * n).map(|i| value(i + 7)).collect(),
        (0..6 * m * n).map(|i| value(i + 3)).collect(),
    );
    let x = Array::from_slice(&xv, &[6, m, k]).unwrap();
    let w = Array::from_slice(&wv, &[k, n]).unwrap();
    let c = Array::from_slice(&cv, &[6, m, n]).unwrap();
    let wt = Array::from_slice(&wv, &[n, k])
        .unwrap()
        .transpose(&[1, 0])
        .unwrap();
    // Element (i, p) of `w` and of `wt` (which holds `wv` as an (n, k) matrix).
    let w_at = |i: usize, p: usize| wv[i * n + p];
    let wt_at = |i: usize, p: usize| wv[p * k + i];
    let reshape = |a: &Array, shape: &[i64]| lazulite::reshape(a, shape).unwrap();
    let slice = |a: &Array, start: &[i64], stop: &[i64]| {
        lazulite::slice(a, start, stop, &vec![1; start.len()]).unwrap()
    };
    // Rows of `x` with a gap of 3 elements after each.
    let padded_value = |b: usize, i: usize, t: usize| value(((b * m + i) * (k + 3) + t) % 997 + 11);
    let padded: Vec<f64> = (0..6 * m * (k + 3))
        .map(|e| padded_value(e / (k + 3) / m, e / (k + 3) % m, e % (k + 3)))
        .collect();
    let padded = Array::from_slice(&padded, &[6, m, k + 3]).unwrap();
    let xs_values = &xv;
    let at = move |b: usize, i: usize, t: usize| xs_values[(b * m + i) * k + t];
    // (left operand, its element [b, i, t], batch shape)
    type Layout<'a> = (
        Array,
        Box<dyn Fn(usize, usize, usize) -> f64 + 'a>,
        Vec<usize>,
    );
    let layouts: Vec<(&str, Layout<'_>)> = vec![
        ("contiguous", (x.clone(), Box::new(at), vec![6])),
        (
            "two batch axes",
            (
                reshape(&x, &[2, 3, m as i64, k as i64]),
                Box::new(at),
                vec![2, 3],
            ),
        ),
        (
            "every other matrix",
            (
                lazulite::slice(&x, &[0, 0, 0], &[6, m as i64, k as i64], &[2, 1, 1]).unwrap(),
                Box::new(move |b, i, t| at(2 * b, i, t)),
                vec![3],
            ),
        ),
        (
            "first 9 rows of each matrix",
            (
                slice(&x, &[0, 0, 0], &[6, 9, k as i64]),
                Box::new(at),
                vec![6],
            ),
        ),
        (
            "rows with gaps",
            (
                slice(&padded, &[0, 0, 0], &[6, m as i64, k as i64]),
                Box::new(padded_value),
                vec![6],
            ),
        ),
        (
            "batch axis behind the rows",
            (
                reshape(&x, &[m as i64, 6, k as i64])
                    .transpose(&[1, 0, 2])
                    .unwrap(),
                Box::new(move |b, i, t| xs_values[(i * 6 + b) * k + t]),
                vec![6],
            ),
        ),
        (
            "one matrix broadcast over the batch",
            (
                slice(&x, &[0, 0, 0], &[1, m as i64, k as i64])
                    .broadcast_to(&[4, m, k])
                    .unwrap(),
                Box::new(move |_, i, t| at(0, i, t)),
                vec![4],
            ),
        ),
        (
            "a batch axis of length 1",
            (
                reshape(&x, &[6, 1, m as i64, k as i64]),
                Box::new(at),
                vec![6, 1],
            ),
        ),
    ];
    for (name, (xs, at, batch)) in &layouts {
        let rows = xs.shape()[xs.ndim() - 2];
        let batches: usize = batch.iter().product();
        for (right, w_el) in [(&w, &w_at as &dyn Fn(usize, usize) -> f64), (&wt, &wt_at)] {
            let want = |b: usize, i: usize, j: usize| {
                (0..k).map(|t| at(b, i, t) * w_el(t, j)).sum::<f64>()
            };
            let mut shape = batch.clone();
            shape.extend([rows, n]);
            let c_part = reshape(
                &slice(&c, &[0, 0, 0], &[batches as i64, rows as i64, n as i64]),
                &shape.iter().map(|&d| d as i64).collect::<Vec<_>>(),
            );
            for dtype in [DType::Float64, DType::Float32] {
                let tol = if dtype == DType::Float64 { 1e-12 } else { 1e-4 };
                let (xs, right) = (xs.astype(dtype).unwrap(), right.astype(dtype).unwrap());
                let product = matmul(&xs, &right).unwrap();
                let with_addend =
                    addmm(&c_part.astype(dtype).unwrap(), &xs, &right, 0.5, 2.0).unwrap();
                let row_bias = slice(&c, &[0, 0, 0], &[1, 1, n as i64])
                    .astype(dtype)
                    .unwrap();
                let with_bias = addmm(&row_bias, &xs, &right, 1.0, 1.0).unwrap();
                for (what, got) in [
                    ("product", &product),
                    ("addmm", &with_addend),
                    ("bias", &with_bias),
                ] {
                    assert_eq!(got.shape(), &shape[..], "{name} {what}");
                    let got = got.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap();
                    for (e, g) in got.into_iter().enumerate() {
                        let (b, i, j) = (e / (rows * n), e / n % rows, e % n);
                        let product = want(b, i, j);
                        let expected = match what {
                            "product" => product,
                            "addmm" => 0.5 * product + 2.0 * cv[(b * m + i) * n + j],
                            _ => product + cv[j],
                        };
                        assert!(
                            (g - expected).abs() <= tol * (1.0 + expected.abs()),
                            "{name} {what} {dtype} [{b}, {i}, {j}]: {g} vs {expected}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn segmented_and_block_masked_products_equal_loops() {
    let data = |n: usize| {
        (0..n)
            .map(|i| ((i * 7 % 13) as f64 - 6.0) * 0.25)
            .collect::<Vec<_>>()
    };
    let (m, k, n) = (3, 70, 40);
    let (av, bv) = (data(m * k), data(k * n));
    let a = Array::from_slice(&av, &[m, k]).unwrap();
    let b = Array::from_slice(&bv, &[k, n]).unwrap();
    let product = |rows: &dyn Fn(usize, usize) -> bool, i: usize, j: usize| {
        (0..k)
            .filter(|&p| rows(i, p))
            .map(|p| av[i * k + p] * bv[p * n + j])
            .sum::<f64>()
    };
    // Segments, one empty.
    let pairs = [(0u32, 10u32), (10, 70), (5, 5)];
    let flat: Vec<u32> = pairs.iter().flat_map(|&(s, e)| [s, e]).collect();
    let out = lazulite::segmented_mm(&a, &b, &Array::from_slice(&flat, &[3, 2]).unwrap()).unwrap();
    assert_eq!(out.shape(), &[3, m, n]);
    let mut want = Vec::new();
    for &(s, e) in &pairs {
        for i in 0..m {
            for j in 0..n {
                want.push(product(&|_, p| (s as usize..e as usize).contains(&p), i, j));
            }
        }
    }
    assert_eq!(out.to_vec::<f64>().unwrap(), want);
    // Tiles of 32: a's tile (0, 1) is masked, so its columns 32..64 do not count.
    let lhs = Array::from_slice(&[true, false, true], &[1, 3]).unwrap();
    let out_mask = Array::from_slice(&[true, false], &[1, 2]).unwrap();
    let out = lazulite::block_masked_mm(&a, &b, 32, Some(&out_mask), Some(&lhs), None).unwrap();
    let got = out.to_vec::<f64>().unwrap();
    for i in 0..m {
        for j in 0..n {
            let want = if j < 32 {
                product(&|_, p| !(32..64).contains(&p), i, j)
            } else {
                0.0
            };
            assert_eq!(got[i * n + j], want, "({i}, {j})");
        }
    }
    // Compositions of differentiable ops: the gradient with respect to `a` of the
    // masked product's sum is the row sums of `b` where the tiles let `a` through.
    let grad = lazulite::grad(|x: &Array| {
        let y = lazulite::block_masked_mm(x, &b, 32, None, Some(&lhs), None)?;
        lazulite::sum(&y, lazulite::Axes::All, false)
    });
    let g = grad(&a).unwrap().to_vec::<f64>().unwrap();
    for i in 0..m {
        for p in 0..k {
            let row: f64 = (0..n).map(|j| bv[p * n + j]).sum();
            let want = if (32..64).contains(&p) { 0.0 } else { row };
            assert!((g[i * k + p] - want).abs() < 1e-12, "({i}, {p})");
        }
    }
}
