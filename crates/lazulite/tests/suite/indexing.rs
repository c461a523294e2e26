//! Indexing: NumPy fixtures for reads, writes and `.at` adds over many index expressions
//! (tools/fixtures/indexing.py), views of views, bounds errors for every entry point
//! (the input stays intact), masks, take/take_along_axis/put_along_axis, nonzero,
//! argwhere, unique and the guide examples. The gather and scatter rules are checked in the
//! rule table (`rules.rs`).

use crate::common;
use common::{array, uniform};

use common::{array_from_json, assert_matches, load_fixture};
use lazulite::{
    arange, argwhere, at, idx, index, index_put, nonzero, put_along_axis, reshape, take,
    take_along_axis, unique, vmap, Array, DType, ErrorKind, Index, Result,
};
use serde_json::Value;

fn base(shape: &Value) -> Array {
    let shape: Vec<i64> = shape
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_i64().unwrap())
        .collect();
    let n: i64 = shape.iter().product();
    reshape(&arange(0.0, n as f64, 1.0, DType::Int32).unwrap(), &shape).unwrap()
}

fn opt(v: &Value) -> Option<i64> {
    v.as_i64()
}

fn parse_index(v: &Value) -> Vec<Index> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|e| {
            if let Some(i) = e.get("int") {
                Index::Int(i.as_i64().unwrap())
            } else if let Some(s) = e.get("slice") {
                Index::slice(opt(&s[0]), opt(&s[1]), opt(&s[2]))
            } else if e.get("none").is_some() {
                Index::NewAxis
            } else if e.get("ellipsis").is_some() {
                Index::Ellipsis
            } else if let Some(a) = e.get("array") {
                Index::Array(array_from_json(a))
            } else {
                Index::Mask(array_from_json(&e["mask"]))
            }
        })
        .collect()
}

#[test]
fn reads_writes_and_adds_match_numpy() {
    let fx = load_fixture("indexing");
    for case in fx["cases"].as_array().unwrap() {
        let ctx = case["repr"].as_str().unwrap();
        let a = base(&case["shape"]);
        let ix = parse_index(&case["index"]);
        assert_matches(&index(&a, &ix).unwrap(), &case["read"], 0.0, 0.0, ctx);
        let value = array_from_json(&case["value"]);
        assert_matches(
            &index_put(&a, &ix, &value).unwrap(),
            &case["write"],
            0.0,
            0.0,
            ctx,
        );
        assert_matches(&at(&a, &ix).add(1).unwrap(), &case["add"], 0.0, 0.0, ctx);
        // The input is never modified.
        assert_matches(&a, &case_base(&case["shape"]), 0.0, 0.0, ctx);
    }
}

fn case_base(shape: &Value) -> Value {
    let s: Vec<u64> = shape
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap())
        .collect();
    let n: u64 = s.iter().product();
    serde_json::json!({"dtype": "int32", "shape": s, "data": (0..n).collect::<Vec<_>>()})
}

#[test]
fn views_of_views_match_numpy() {
    let fx = load_fixture("indexing");
    for (k, chain) in fx["chains"].as_array().unwrap().iter().enumerate() {
        let mut r = base(&chain["shape"]);
        for step in chain["steps"].as_array().unwrap() {
            r = index(&r, &parse_index(step)).unwrap();
        }
        assert_matches(&r, &chain["read"], 0.0, 0.0, &format!("chain {k}"));
    }
}

#[test]
fn layouts_and_dtypes() {
    // Transposed, reversed and broadcast inputs; indices in several dtypes and layouts.
    let a = reshape(&arange(0.0, 12.0, 1.0, DType::Float32).unwrap(), &[3, 4]).unwrap();
    let t = a.t().unwrap(); // (4, 3)
    let i = Array::from_slice(&[3i64, 0, -1], &[3]).unwrap();
    let r = index(&t, &idx![&i, 1]).unwrap();
    assert_eq!(r.to_vec::<f32>().unwrap(), vec![7.0, 4.0, 7.0]);
    let rev = index(&a, &idx![..;-1, ..;-2]).unwrap();
    let i2 = Array::from_slice(&[2i32, 0, -1], &[3]).unwrap();
    let got = index(&rev, &idx![&i2]).unwrap().to_vec::<f32>().unwrap();
    assert_eq!(got, vec![3.0, 1.0, 11.0, 9.0, 3.0, 1.0]);
    let b =
        lazulite::broadcast_to(&Array::from_slice(&[1.5f64, 2.5], &[2]).unwrap(), &[3, 2]).unwrap();
    let bi = lazulite::broadcast_to(&Array::from_slice(&[1u8], &[1]).unwrap(), &[4]).unwrap();
    assert_eq!(
        index(&b, &idx![.., &bi]).unwrap().to_vec::<f64>().unwrap(),
        vec![2.5; 12]
    );
    for dtype in [
        DType::Bool,
        DType::UInt8,
        DType::Int64,
        DType::Float16,
        DType::BFloat16,
        DType::Float64,
        DType::Complex64,
    ] {
        let x = a.astype(dtype).unwrap();
        let g = index(&x, &idx![&i2.astype(DType::Int16).unwrap(), ..2]).unwrap();
        let want = index(&a, &idx![&i2, ..2]).unwrap().astype(dtype).unwrap();
        assert_eq!(g.dtype(), dtype);
        assert!(
            lazulite::array_equal(&g, &want, false)
                .unwrap()
                .item::<bool>()
                .unwrap(),
            "{dtype}"
        );
        let w = index_put(&x, &idx![1, &i], 0).unwrap();
        let w_ref = index_put(&a, &idx![1, &i], 0)
            .unwrap()
            .astype(dtype)
            .unwrap();
        assert!(
            lazulite::array_equal(&w, &w_ref, false)
                .unwrap()
                .item::<bool>()
                .unwrap(),
            "{dtype}"
        );
    }
}

#[test]
fn at_modes_with_duplicates() {
    let a = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    let i = Array::from_slice(&[0i32, 0, 3, -1], &[4]).unwrap();
    let v = Array::from_slice(&[2.0f32, 3.0, 0.5, 4.0], &[4]).unwrap();
    let f = |r: Result<Array>| r.unwrap().to_vec::<f32>().unwrap();
    assert_eq!(f(at(&a, &idx![&i]).add(&v)), vec![6.0, 2.0, 3.0, 8.5]);
    assert_eq!(
        f(at(&a, &idx![&i]).subtract(&v)),
        vec![-4.0, 2.0, 3.0, -0.5]
    );
    assert_eq!(f(at(&a, &idx![&i]).multiply(&v)), vec![6.0, 2.0, 3.0, 8.0]);
    assert_eq!(
        f(at(&a, &idx![&i]).divide(&v)),
        vec![1.0 / 6.0, 2.0, 3.0, 4.0 / 0.5 / 4.0]
    );
    assert_eq!(f(at(&a, &idx![&i]).maximum(&v)), vec![3.0, 2.0, 3.0, 4.0]);
    assert_eq!(f(at(&a, &idx![&i]).minimum(&v)), vec![1.0, 2.0, 3.0, 0.5]);
    // Assignment: the last duplicate wins (MLX and NumPy).
    assert_eq!(f(index_put(&a, &idx![&i], &v)), vec![3.0, 2.0, 3.0, 4.0]);
    // Basic indices and scalar values, cast to the array's dtype.
    assert_eq!(f(at(&a, &idx![1..;2]).add(10)), vec![1.0, 12.0, 3.0, 14.0]);
    let ints = Array::from_slice(&[1u8, 2], &[2]).unwrap();
    assert_eq!(index_put(&ints, &idx![0], 7).unwrap().dtype(), DType::UInt8);
    assert!(index_put(&ints, &idx![0], 300).is_err());
}

/// Every entry point: an out-of-range index is an IndexError (static: when recorded;
/// array: from eval) and the input is untouched.
#[test]
fn out_of_bounds_errors_leave_input_intact() {
    let a = Array::from_slice(&[1i32, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
    let before = a.to_vec::<i32>().unwrap();
    let static_errors = [
        index(&a, &idx![2]).err(),
        index(&a, &idx![-3]).err(),
        index(&a, &idx![0, 3]).err(),
        index(&a, &idx![0, 0, 0]).err(),
        index_put(&a, &idx![.., -4], 0).err(),
        at(&a, &idx![5]).add(1).err(),
        index(&a, &idx![&Array::from_slice(&[true], &[1]).unwrap()]).err(),
    ];
    for (k, e) in static_errors.into_iter().enumerate() {
        assert_eq!(e.expect("an error").kind(), ErrorKind::Index, "static {k}");
    }
    let bad = Array::from_slice(&[0i32, 3], &[2]).unwrap();
    let bad_neg = Array::from_slice(&[-3i64], &[1]).unwrap();
    let lazy = [
        index(&a, &idx![.., &bad]).unwrap(),
        index(&a, &idx![&bad_neg]).unwrap(),
        index_put(&a, &idx![1, &bad], 9).unwrap(),
        at(&a, &idx![.., &bad]).add(1).unwrap(),
        take(&a, &bad, Some(1)).unwrap(),
        take(&a, &Array::from_slice(&[6i32], &[1]).unwrap(), None).unwrap(),
        take_along_axis(&a, &reshape(&bad, &[1, 2]).unwrap(), Some(1)).unwrap(),
        put_along_axis(
            &a,
            &reshape(&bad, &[1, 2]).unwrap(),
            &Array::scalar(0i32),
            Some(1),
        )
        .unwrap(),
    ];
    for (k, r) in lazy.iter().enumerate() {
        let e = r.eval().expect_err("out of bounds");
        assert_eq!(e.kind(), ErrorKind::Index, "lazy {k}: {}", e.message());
        assert!(e.message().contains("out of bounds"), "{}", e.message());
    }
    assert_eq!(a.to_vec::<i32>().unwrap(), before);
    // Float indices are a ValueError when recorded (as MLX).
    let f = Array::from_slice(&[1.0f32], &[1]).unwrap();
    assert_eq!(index(&a, &idx![&f]).unwrap_err().kind(), ErrorKind::Value);
}

#[test]
fn masks_nonzero_argwhere_unique() {
    let a = Array::from_slice(&[3.0f32, -1.0, 0.0, 5.0, -2.0, 7.0], &[2, 3]).unwrap();
    let pos = lazulite::greater(&a, 0.0).unwrap();
    assert_eq!(
        index(&a, &idx![&pos]).unwrap().to_vec::<f32>().unwrap(),
        vec![3.0, 5.0, 7.0]
    );
    let nz = nonzero(&a).unwrap();
    assert_eq!(nz[0].to_vec::<i64>().unwrap(), vec![0, 0, 1, 1, 1]);
    assert_eq!(nz[1].to_vec::<i64>().unwrap(), vec![0, 1, 0, 1, 2]);
    assert_eq!(argwhere(&pos).unwrap().shape(), &[3, 2]);
    assert_eq!(
        argwhere(&pos).unwrap().to_vec::<i64>().unwrap(),
        vec![0, 0, 1, 0, 1, 2]
    );
    // x[x < 0] = 0 and a masked write of several values.
    let clipped = index_put(&a, &idx![&lazulite::less(&a, 0.0).unwrap()], 0.0).unwrap();
    assert_eq!(
        clipped.to_vec::<f32>().unwrap(),
        vec![3.0, 0.0, 0.0, 5.0, 0.0, 7.0]
    );
    let vals = Array::from_slice(&[10.0f32, 20.0, 30.0], &[3]).unwrap();
    let w = index_put(&a, &idx![&pos], &vals).unwrap();
    assert_eq!(
        w.to_vec::<f32>().unwrap(),
        vec![10.0, -1.0, 0.0, 20.0, -2.0, 30.0]
    );
    let empty = index(&a, &idx![&lazulite::greater(&a, 100.0).unwrap()]).unwrap();
    assert_eq!(empty.shape(), &[0]);
    let u = Array::from_slice(&[2.0f32, f32::NAN, 1.0, 2.0, f32::NAN, -0.0, 0.0], &[7]).unwrap();
    let uv = unique(&u).unwrap().to_vec::<f32>().unwrap();
    assert_eq!(&uv[..3], [0.0, 1.0, 2.0]);
    assert!(uv[3].is_nan() && uv.len() == 4);
    assert_eq!(
        unique(&Array::from_slice(&[3i32, 1, 3], &[3]).unwrap())
            .unwrap()
            .to_vec::<i32>()
            .unwrap(),
        vec![1, 3]
    );
    assert_eq!(
        unique(&Array::from_slice::<i32>(&[], &[0]).unwrap())
            .unwrap()
            .shape(),
        &[0]
    );
    assert_eq!(nonzero(&Array::scalar(0i32)).unwrap()[0].shape(), &[0]);
}

#[test]
fn take_and_along_axis_match_numpy_by_hand() {
    let a = reshape(&arange(0.0, 6.0, 1.0, DType::Int32).unwrap(), &[2, 3]).unwrap();
    let i = Array::from_slice(&[[2i32, 0], [1, 1]].concat(), &[2, 2]).unwrap();
    // np.take(a, i, axis=1) -> shape (2, 2, 2)
    let t = take(&a, &i, Some(1)).unwrap();
    assert_eq!(t.shape(), &[2, 2, 2]);
    assert_eq!(t.to_vec::<i32>().unwrap(), vec![2, 0, 1, 1, 5, 3, 4, 4]);
    assert_eq!(
        take(&a, &Array::scalar(4i32), None)
            .unwrap()
            .item::<i32>()
            .unwrap(),
        4
    );
    assert_eq!(
        take(&a, &Array::scalar(1i32), Some(0))
            .unwrap()
            .to_vec::<i32>()
            .unwrap(),
        vec![3, 4, 5]
    );
    // take_along_axis with argsort sorts.
    let m = Array::from_slice(&[3.0f32, 1.0, 2.0, 0.0, 9.0, 5.0], &[2, 3]).unwrap();
    let order = lazulite::argsort(&m, Some(1)).unwrap();
    let sorted = take_along_axis(&m, &order, Some(1)).unwrap();
    assert_eq!(
        sorted.to_vec::<f32>().unwrap(),
        vec![1.0, 2.0, 3.0, 0.0, 5.0, 9.0]
    );
    // Broadcasting indices over the other axis; axis None flattens.
    let col = Array::from_slice(&[2i32], &[1, 1]).unwrap();
    assert_eq!(
        take_along_axis(&a, &col, Some(1))
            .unwrap()
            .to_vec::<i32>()
            .unwrap(),
        vec![2, 5]
    );
    let flat = Array::from_slice(&[5i32, 0], &[2]).unwrap();
    assert_eq!(
        take_along_axis(&a, &flat, None)
            .unwrap()
            .to_vec::<i32>()
            .unwrap(),
        vec![5, 0]
    );
    let p = put_along_axis(&a, &col, &Array::scalar(-1i32), Some(1)).unwrap();
    assert_eq!(p.to_vec::<i32>().unwrap(), vec![0, 1, -1, 3, 4, -1]);
    assert!(take_along_axis(&a, &flat, Some(1)).is_err());
}

#[test]
fn mask_reads_under_vmap_give_a_clear_error() {
    let xs = array(&uniform(5, 6, -1.0, 1.0), &[2, 3]);
    let f = vmap(
        |p: &[Array]| Ok(vec![index(&p[0], &idx![&lazulite::greater(&p[0], 0.0)?])?]),
        vec![Some(0)],
        vec![Some(0)],
    );
    let e = f(std::slice::from_ref(&xs)).unwrap_err();
    assert!(e.message().contains("vmap"), "{}", e.message());
    let g = vmap(
        |p: &[Array]| Ok(vec![unique(&p[0])?]),
        vec![Some(0)],
        vec![Some(0)],
    );
    assert!(g(&[xs])
        .unwrap_err()
        .message()
        .contains("Cannot evaluate an array inside a vmapped function"));
}

/// The guide's examples, translated.
#[test]
fn guide_examples() {
    let arr = arange(0.0, 10.0, 1.0, DType::Int32).unwrap();
    assert_eq!(index(&arr, &idx![3]).unwrap().item::<i32>().unwrap(), 3);
    assert_eq!(index(&arr, &idx![3]).unwrap().shape(), &[] as &[usize]);
    assert_eq!(index(&arr, &idx![-2]).unwrap().item::<i32>().unwrap(), 8);
    assert_eq!(
        index(&arr, &idx![2..8;2]).unwrap().to_vec::<i32>().unwrap(),
        vec![2, 4, 6]
    );
    let cube = reshape(&arange(0.0, 8.0, 1.0, DType::Int32).unwrap(), &[2, 2, 2]).unwrap();
    assert_eq!(
        index(&cube, &idx![.., .., 0])
            .unwrap()
            .to_vec::<i32>()
            .unwrap(),
        vec![0, 2, 4, 6]
    );
    assert_eq!(
        index(&cube, &idx![..., 0])
            .unwrap()
            .to_vec::<i32>()
            .unwrap(),
        vec![0, 2, 4, 6]
    );
    let arr8 = arange(0.0, 8.0, 1.0, DType::Int32).unwrap();
    assert_eq!(
        index(&arr8, &idx![Index::NewAxis]).unwrap().shape(),
        &[1, 8]
    );
    let picks = Array::from_slice(&[5i32, 7], &[2]).unwrap();
    let r = index(&arr, &idx![&picks]).unwrap();
    assert_eq!(
        (r.dtype(), r.to_vec::<i32>().unwrap()),
        (DType::Int32, vec![5, 7])
    );
    let a = Array::from_slice(&[1i32, 2, 3], &[3]).unwrap();
    assert_eq!(
        index_put(&a, &idx![2], 0).unwrap().to_vec::<i32>().unwrap(),
        vec![1, 2, 0]
    );
    // grad of fun(x, idx) { x[idx] = 2.0; x.sum() } is [1, 0, 1].
    let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let i = Array::from_slice(&[1i32], &[1]).unwrap();
    let (_, g) = lazulite::value_and_grad_argnums(
        |p| {
            Ok(vec![
                index_put(&p[0], &idx![&p[1]], 2.0)?.sum(lazulite::Axes::All, false)?
            ])
        },
        &[x, i],
        &[0],
    )
    .unwrap();
    let dfdx = &g[0];
    assert_eq!(dfdx.to_vec::<f32>().unwrap(), vec![1.0, 0.0, 1.0]);
}

#[test]
fn basic_indexing_is_a_view() {
    let a = reshape(&arange(0.0, 24.0, 1.0, DType::Float32).unwrap(), &[2, 3, 4]).unwrap();
    let v = index(&a, &idx![1, ..;-1, Index::NewAxis, 1..;2]).unwrap();
    assert_eq!(v.shape(), &[3, 1, 2]);
    // The view's first element (a[1, 2, 1]) lies inside a's buffer: no copy was made.
    let (base, view) = (a.raw_data().unwrap(), v.raw_data().unwrap());
    let first = (12 + 8 + 1) * std::mem::size_of::<f32>();
    assert_eq!(
        view.ptr() as usize,
        base.ptr() as usize + first,
        "no new buffer"
    );
    assert_eq!(
        v.to_vec::<f32>().unwrap(),
        vec![21.0, 23.0, 17.0, 19.0, 13.0, 15.0]
    );
}

#[test]
fn gather_reads_through_any_index_layout_and_dtype() {
    let a = Array::from_slice(&[10.0f32, 11., 12., 13., 14.], &[5]).unwrap();
    // Strided with a negative step, negative values: the one-index fast path.
    let i = Array::from_slice(&[-1i64, 9, 0, 9, -5, 9], &[6]).unwrap();
    let strided = index(&i, &idx![Index::slice(Some(-2), None, Some(-2))]).unwrap();
    assert_eq!(
        take(&a, &strided, None).unwrap().to_vec::<f32>().unwrap(),
        vec![10., 10., 14.]
    );
    // A broadcast (stride 0) index, unsigned dtypes.
    let two = lazulite::broadcast_to(&Array::scalar(2u8), &[3]).unwrap();
    assert_eq!(
        take(&a, &two, None).unwrap().to_vec::<f32>().unwrap(),
        vec![12.; 3]
    );
    let big = Array::from_slice(&[u64::MAX], &[1]).unwrap();
    let e = take(&a, &big, None).unwrap().eval().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Index);
    assert!(
        e.message().contains(&u64::MAX.to_string()),
        "{}",
        e.message()
    );
    let low = Array::from_slice(&[0i8, -6, 4], &[3]).unwrap();
    let e = take(&a, &low, None).unwrap().eval().unwrap_err();
    assert!(
        e.message().contains("Index -6 is out of bounds"),
        "{}",
        e.message()
    );
    // Two index arrays and rows of several elements: the offsets path.
    let m = reshape(&arange(0.0, 12.0, 1.0, DType::Int32).unwrap(), &[2, 3, 2]).unwrap();
    let r = Array::from_slice(&[1i32, -2], &[2]).unwrap();
    let c = Array::from_slice(&[-1i16, 0], &[2]).unwrap();
    assert_eq!(
        index(&m, &idx![&r, &c]).unwrap().to_vec::<i32>().unwrap(),
        vec![10, 11, 0, 1]
    );
}

#[test]
fn empty_ellipsis_between_advanced_indices_moves_them_first() {
    // NumPy: a[None, mask, ..., 0] on a (1, 1) array has shape (0, 1): the ellipsis
    // separates the advanced indices even though it expands to no axis.
    let a = Array::from_slice(&[5i32], &[1, 1]).unwrap();
    let mask = Array::from_slice(&[false], &[1]).unwrap();
    let r = index(&a, &idx![Index::NewAxis, &mask, Index::Ellipsis, 0]).unwrap();
    assert_eq!(r.shape(), &[0, 1]);
    let b = reshape(&arange(0.0, 6.0, 1.0, DType::Int32).unwrap(), &[1, 2, 3]).unwrap();
    let i = Array::from_slice(&[1i32, 0], &[2]).unwrap();
    let r = index(&b, &idx![.., &i, Index::Ellipsis, 2]).unwrap();
    assert_eq!(r.shape(), &[2, 1]);
    assert_eq!(r.to_vec::<i32>().unwrap(), vec![5, 2]);
    let w = index_put(&b, &idx![.., &i, Index::Ellipsis, 2], &r).unwrap();
    assert_eq!(w.to_vec::<i32>().unwrap(), b.to_vec::<i32>().unwrap());
}

#[test]
fn dynamic_slice_and_update() {
    use lazulite::{dynamic_slice, dynamic_slice_update};
    let a = reshape(&arange(0.0, 12.0, 1.0, DType::Float32).unwrap(), &[3, 4]).unwrap();
    let start = Array::from_slice(&[1i32, 2], &[2]).unwrap();
    let s = dynamic_slice(&a, &start, &[0, -1], &[2, 2]).unwrap();
    assert_eq!(s.to_vec::<f32>().unwrap(), vec![6., 7., 10., 11.]);
    let u = dynamic_slice_update(
        &a,
        &lazulite::zeros(&[2, 2], DType::Float32).unwrap(),
        &start,
        &[0, 1],
    )
    .unwrap();
    assert_eq!(
        u.to_vec::<f32>().unwrap(),
        vec![0., 1., 2., 3., 4., 5., 0., 0., 8., 9., 0., 0.]
    );
    let past = Array::from_slice(&[3i32], &[1]).unwrap();
    let e = dynamic_slice(&a, &past, &[1], &[3, 2])
        .unwrap()
        .eval()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Index);
    // A negative start counts from the end (as a[-2:] in NumPy); one reaching before the
    // start of the axis is out of bounds, not wrapped around.
    let from_end = Array::from_slice(&[-2i32], &[1]).unwrap();
    let s = dynamic_slice(&a, &from_end, &[1], &[3, 2]).unwrap();
    let numpy_style = index(&a, &idx![.., -2..]).unwrap();
    assert_eq!(
        s.to_vec::<f32>().unwrap(),
        numpy_style.to_vec::<f32>().unwrap()
    );
    for start in [-5i32, -1] {
        let start = Array::from_slice(&[start], &[1]).unwrap();
        for window in [
            dynamic_slice(&a, &start, &[1], &[3, 2]).unwrap(),
            dynamic_slice_update(
                &a,
                &lazulite::zeros(&[3, 2], DType::Float32).unwrap(),
                &start,
                &[1],
            )
            .unwrap(),
        ] {
            assert_eq!(window.eval().unwrap_err().kind(), ErrorKind::Index);
        }
    }
    for bad in [
        dynamic_slice(&a, &start, &[0], &[2, 2]).err(),
        dynamic_slice(&a, &start, &[0, 1], &[2]).err(),
        dynamic_slice(&a, &start, &[0, 1], &[4, 2]).err(),
        dynamic_slice(
            &a,
            &Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap(),
            &[0, 1],
            &[1, 1],
        )
        .err(),
        dynamic_slice(&a, &start, &[0, 2], &[1, 1]).err(),
        dynamic_slice_update(
            &a,
            &lazulite::zeros(&[1, 2, 2], DType::Float32).unwrap(),
            &start,
            &[0, 1],
        )
        .err(),
    ] {
        assert!(bad.is_some());
    }
    // The start positions follow the order of the axes given.
    let swapped = Array::from_slice(&[2i32, 1], &[2]).unwrap();
    let s = dynamic_slice(&a, &swapped, &[1, 0], &[2, 2]).unwrap();
    assert_eq!(s.to_vec::<f32>().unwrap(), vec![6., 7., 10., 11.]);
    // An update with fewer dimensions spans the leading axes, as in MLX.
    let column = Array::from_slice(&[1i32], &[1]).unwrap();
    let zeros = lazulite::zeros(&[2], DType::Float32).unwrap();
    let u = dynamic_slice_update(&a, &zeros, &column, &[1]).unwrap();
    assert_eq!(
        u.to_vec::<f32>().unwrap(),
        vec![0., 0., 0., 3., 4., 0., 0., 7., 8., 0., 0., 11.]
    );
}

/// Every entry point, with index arrays computed lazily (so the kernel finds them out of
/// range at eval) and static ones (an error when recorded): an `IndexError`, and neither
/// the input nor another reference to it nor an unevaluated input changes.
#[test]
fn every_entry_point_rejects_out_of_bounds_and_leaves_input_intact() {
    use lazulite::{add, dynamic_slice, dynamic_slice_update};
    let x = reshape(&arange(0.0, 6.0, 1.0, DType::Float32).unwrap(), &[2, 3]).unwrap();
    let before = x.to_vec::<f32>().unwrap();
    let alias = x.clone();
    // Not evaluated yet: a scatter must not write into its buffer either.
    let pending = add(&x, 1.0).unwrap();
    let base = Array::from_slice(&[0i32, 1], &[2]).unwrap();
    for (shift, what) in [(2i32, "past the end"), (-5, "before -size")] {
        // [2, 3] or [-5, -4]: one index out of range for an axis of 3.
        let bad = add(&base, shift).unwrap();
        let bad_rows = reshape(&bad, &[1, 2]).unwrap();
        let start = add(Array::from_slice(&[0i32], &[1]).unwrap(), shift * 2).unwrap();
        for a in [&x, &pending] {
            let lazy: Vec<(&str, Result<Array>)> = vec![
                ("getitem array", index(a, &idx![.., &bad])),
                ("getitem two arrays", index(a, &idx![&base, &bad])),
                ("getitem array then int", index(a, &idx![&bad, 0])),
                ("setitem", index_put(a, &idx![.., &bad], 9.0)),
                ("at add", at(a, &idx![.., &bad]).add(1.0)),
                ("at subtract", at(a, &idx![.., &bad]).subtract(1.0)),
                ("at multiply", at(a, &idx![.., &bad]).multiply(2.0)),
                ("at divide", at(a, &idx![.., &bad]).divide(2.0)),
                ("at maximum", at(a, &idx![.., &bad]).maximum(1.0)),
                ("at minimum", at(a, &idx![.., &bad]).minimum(1.0)),
                ("take axis", take(a, &bad, Some(1))),
                (
                    "take flat",
                    take(a, &add(&bad, 3 * shift.signum()).unwrap(), None),
                ),
                ("take_along_axis", take_along_axis(a, &bad_rows, Some(1))),
                (
                    "put_along_axis",
                    put_along_axis(a, &bad_rows, &Array::scalar(0.0f32), Some(1)),
                ),
                ("slice", dynamic_slice(a, &start, &[1], &[2, 2])),
                (
                    "slice_update",
                    dynamic_slice_update(
                        a,
                        &lazulite::zeros(&[1, 2], DType::Float32).unwrap(),
                        &start,
                        &[1],
                    ),
                ),
            ];
            for (name, r) in lazy {
                let r = r.unwrap_or_else(|e| panic!("{name} ({what}) recorded: {}", e.message()));
                let e = r.eval().expect_err(name);
                assert_eq!(
                    e.kind(),
                    ErrorKind::Index,
                    "{name} ({what}): {}",
                    e.message()
                );
                assert!(
                    e.message().contains("out of bounds"),
                    "{name}: {}",
                    e.message()
                );
            }
        }
    }
    let statics: Vec<(&str, Result<Array>)> = vec![
        ("getitem int", index(&x, &idx![0, 3])),
        ("getitem negative int", index(&x, &idx![-3])),
        ("setitem int", index_put(&x, &idx![2], 0.0)),
        ("at add int", at(&x, &idx![.., -4]).add(1.0)),
        ("at subtract int", at(&x, &idx![.., 3]).subtract(1.0)),
        ("at multiply int", at(&x, &idx![5]).multiply(1.0)),
        ("at divide int", at(&x, &idx![-3]).divide(1.0)),
        ("at maximum int", at(&x, &idx![0, 3]).maximum(1.0)),
        ("at minimum int", at(&x, &idx![0, -4]).minimum(1.0)),
        (
            "getitem mask",
            index(&x, &idx![&Array::from_slice(&[true; 3], &[3]).unwrap()]),
        ),
        (
            "setitem mask",
            index_put(
                &x,
                &idx![&Array::from_slice(&[true; 3], &[3]).unwrap()],
                0.0,
            ),
        ),
        (
            "at add mask",
            at(&x, &idx![.., &Array::from_slice(&[true; 2], &[2]).unwrap()]).add(1.0),
        ),
        ("too many indices", index(&x, &idx![0, 0, 0])),
    ];
    for (name, r) in statics {
        let e = r.expect_err(name);
        assert_eq!(e.kind(), ErrorKind::Index, "{name}: {}", e.message());
    }
    assert_eq!(x.to_vec::<f32>().unwrap(), before);
    assert_eq!(alias.to_vec::<f32>().unwrap(), before);
    assert_eq!(
        pending.to_vec::<f32>().unwrap(),
        before.iter().map(|v| v + 1.0).collect::<Vec<_>>()
    );
}

/// The gather kernel's fast path (one contiguous index per element, split across
/// threads when large) against a loop, for every index dtype, negative indices, large
/// outputs and an out-of-range index at the end of a large index array.
#[test]
fn large_contiguous_gather_matches_a_loop_and_checks_every_index() {
    let n = 100_000usize;
    let data: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let a = Array::from_slice(&data, &[n]).unwrap();
    let picks: Vec<i64> = (0..n as i64)
        .map(|k| (k * 7919) % n as i64 - n as i64 / 2)
        .collect();
    let expected: Vec<f32> = picks
        .iter()
        .map(|&k| data[if k < 0 { k + n as i64 } else { k } as usize])
        .collect();
    for dtype in [DType::Int32, DType::Int64, DType::Int16] {
        let small: Vec<i64> = picks.iter().map(|&k| k.rem_euclid(30_000)).collect();
        let (idx, want) = if dtype == DType::Int16 {
            let want = small.iter().map(|&k| data[k as usize]).collect::<Vec<_>>();
            (Array::from_slice(&small, &[n]).unwrap(), want)
        } else {
            (Array::from_slice(&picks, &[n]).unwrap(), expected.clone())
        };
        let got = take(&a, &idx.astype(dtype).unwrap(), Some(0)).unwrap();
        assert_eq!(got.to_vec::<f32>().unwrap(), want, "{dtype:?}");
    }
    let unsigned: Vec<u32> = (0..n as u32).rev().collect();
    let got = take(&a, &Array::from_slice(&unsigned, &[n]).unwrap(), Some(0)).unwrap();
    assert_eq!(
        got.to_vec::<f32>().unwrap(),
        data.iter().rev().copied().collect::<Vec<_>>()
    );
    for bad in [n as i64, -(n as i64) - 1] {
        let mut last_bad = picks.clone();
        *last_bad.last_mut().unwrap() = bad;
        let e = take(&a, &Array::from_slice(&last_bad, &[n]).unwrap(), Some(0))
            .unwrap()
            .eval()
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Index);
        assert!(
            e.message()
                .contains(&format!("Index {bad} is out of bounds")),
            "{}",
            e.message()
        );
    }
    // A u64 index too large for i64 is out of range, not a wrapped negative one.
    let huge = Array::from_slice(&[u64::MAX], &[1]).unwrap();
    assert_eq!(
        take(&a, &huge, Some(0)).unwrap().eval().unwrap_err().kind(),
        ErrorKind::Index
    );
    assert_eq!(a.to_vec::<f32>().unwrap(), data);
}

/// `unique_all` against a sort-and-count reference: values, first index, inverse,
/// counts; padding, truncation, fill values, NaNs (distinct, as MLX), empty and 0-d
/// inputs, errors, vmap (with a size) and gradients.
#[test]
fn unique_all_matches_a_reference() {
    use lazulite::unique_all;
    let values = [3i32, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9];
    let a = Array::from_slice(&values, &[3, 5]).unwrap();
    let mut distinct = values.to_vec();
    distinct.sort();
    distinct.dedup();
    let first: Vec<u32> = distinct
        .iter()
        .map(|d| values.iter().position(|v| v == d).unwrap() as u32)
        .collect();
    let inverse: Vec<u32> = values
        .iter()
        .map(|v| distinct.iter().position(|d| d == v).unwrap() as u32)
        .collect();
    let counts: Vec<i32> = distinct
        .iter()
        .map(|d| values.iter().filter(|v| *v == d).count() as i32)
        .collect();
    let u = unique_all(&a, None, None).unwrap();
    assert_eq!(u.values.to_vec::<i32>().unwrap(), distinct);
    assert_eq!(u.index.dtype(), DType::UInt32);
    assert_eq!(u.index.to_vec::<u32>().unwrap(), first);
    assert_eq!(u.inverse.shape(), &[3, 5]);
    assert_eq!(u.inverse.to_vec::<u32>().unwrap(), inverse);
    assert_eq!(u.counts.dtype(), DType::Int32);
    assert_eq!(u.counts.to_vec::<i32>().unwrap(), counts);
    // Padding: the fill value (default: the smallest), index of the first unique
    // element's first occurrence, count 0.
    let k = distinct.len();
    let padded = unique_all(&a, Some(k + 2), None).unwrap();
    let mut want = distinct.clone();
    want.extend([distinct[0]; 2]);
    assert_eq!(padded.values.to_vec::<i32>().unwrap(), want);
    let mut want_first = first.clone();
    want_first.extend([first[0]; 2]);
    assert_eq!(padded.index.to_vec::<u32>().unwrap(), want_first);
    let mut want_counts = counts.clone();
    want_counts.extend([0; 2]);
    assert_eq!(padded.counts.to_vec::<i32>().unwrap(), want_counts);
    let filled = unique_all(&a, Some(k + 1), Some(&Array::scalar(-7.9f32))).unwrap();
    assert_eq!(*filled.values.to_vec::<i32>().unwrap().last().unwrap(), -7);
    // Truncation keeps the smallest; inverse clamps to the last entry.
    let cut = unique_all(&a, Some(3), None).unwrap();
    assert_eq!(cut.values.to_vec::<i32>().unwrap(), distinct[..3]);
    assert_eq!(cut.counts.to_vec::<i32>().unwrap(), counts[..3]);
    assert_eq!(
        cut.inverse.to_vec::<u32>().unwrap(),
        inverse.iter().map(|&i| i.min(2)).collect::<Vec<_>>()
    );
    let none = unique_all(&a, Some(0), None).unwrap();
    assert_eq!(none.values.shape(), &[0]);
    assert_eq!(none.inverse.to_vec::<u32>().unwrap(), vec![0; 15]);
    // NaNs are distinct; -0.0 and 0.0 are one value.
    let f = Array::from_slice(&[f32::NAN, 1.0, -0.0, f32::NAN, 0.0, 1.0], &[6]).unwrap();
    let uf = unique_all(&f, None, None).unwrap();
    let vals = uf.values.to_vec::<f32>().unwrap();
    assert_eq!(vals.len(), 4);
    assert_eq!(&vals[..2], [0.0, 1.0]);
    assert!(vals[2].is_nan() && vals[3].is_nan());
    assert_eq!(uf.counts.to_vec::<i32>().unwrap(), [2, 2, 1, 1]);
    assert_eq!(uf.index.to_vec::<u32>().unwrap(), [2, 1, 0, 3]);
    // Bool, 0-d, empty.
    let b = Array::from_slice(&[true, false, true], &[3]).unwrap();
    assert_eq!(
        unique_all(&b, None, None)
            .unwrap()
            .values
            .to_vec::<bool>()
            .unwrap(),
        [false, true]
    );
    let scalar = unique_all(&Array::scalar(5i32), Some(2), None).unwrap();
    assert_eq!(scalar.values.to_vec::<i32>().unwrap(), [5, 5]);
    assert_eq!(scalar.inverse.shape(), &[] as &[usize]);
    assert_eq!(scalar.counts.to_vec::<i32>().unwrap(), [1, 0]);
    let empty = Array::from_slice::<f32>(&[], &[0, 2]).unwrap();
    let ue = unique_all(&empty, None, None).unwrap();
    assert_eq!(
        (ue.values.shape(), ue.inverse.shape()),
        (&[0usize][..], &[0usize, 2][..])
    );
    let uz = unique_all(&empty, Some(2), Some(&Array::scalar(1.5f32))).unwrap();
    assert_eq!(uz.values.to_vec::<f32>().unwrap(), [1.5, 1.5]);
    assert_eq!(uz.counts.to_vec::<i32>().unwrap(), [0, 0]);
    // Errors.
    let e = unique_all(&empty, Some(2), None).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Value);
    assert!(
        e.message().contains("fill value is required"),
        "{}",
        e.message()
    );
    let two = Array::from_slice(&[1i32, 2], &[2]).unwrap();
    let e = unique_all(&a, Some(3), Some(&two)).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Value);
    assert_eq!(a.to_vec::<i32>().unwrap(), values);
    // With a size nothing is evaluated, so vmap works; without one it reports it.
    let rows = Array::from_slice(&[1i32, 1, 2, 3, 3, 3], &[2, 3]).unwrap();
    let sized = vmap(
        |p: &[Array]| Ok(vec![unique_all(&p[0], Some(3), None)?.values]),
        vec![Some(0)],
        vec![Some(0)],
    );
    let got = sized(std::slice::from_ref(&rows)).unwrap();
    assert_eq!(got[0].to_vec::<i32>().unwrap(), [1, 2, 1, 3, 3, 3]);
    let without_size = vmap(
        |p: &[Array]| Ok(vec![unique_all(&p[0], None, None)?.values]),
        vec![Some(0)],
        vec![Some(0)],
    );
    let e = without_size(&[rows]).unwrap_err();
    assert!(e.message().contains("vmap"), "{}", e.message());
    // The values' derivative reaches each value's first occurrence.
    let x = Array::from_slice(&[1.0f32, 2.0, 1.0], &[3]).unwrap();
    let g = lazulite::grad(|x: &Array| {
        lazulite::sum(
            &unique_all(x, Some(3), None)?.values,
            lazulite::Axes::All,
            false,
        )
    });
    assert_eq!(g(&x).unwrap().to_vec::<f32>().unwrap(), [2.0, 1.0, 0.0]);
}
