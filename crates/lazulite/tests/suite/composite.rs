//! `logical_xor`, `matrix_transpose`, `minmax`, `depends` and `get_array_buffer_size`:
//! values against NumPy's definitions, strided inputs and errors (`depends`' rules are in
//! the rule table, `rules.rs`).

use lazulite::{
    depends, get_array_buffer_size, logical_xor, matrix_transpose, max, min, minmax, Array, Axes,
    DType, ErrorKind,
};

#[test]
fn logical_xor_is_nonzero_inequality() {
    let a = Array::from_slice(&[1i32, 0, 2, 0, -3, 0], &[2, 3]).unwrap();
    let b = Array::from_slice(&[0.5f32, 0.0, f32::NAN], &[3]).unwrap();
    let out = logical_xor(&a, &b).unwrap();
    assert_eq!(out.dtype(), DType::Bool);
    // NumPy: NaN is true, 0.0 is false.
    assert_eq!(
        out.to_vec::<bool>().unwrap(),
        vec![false, false, false, true, true, true]
    );
    let t = a.t().unwrap();
    let scalar = logical_xor(&t, true).unwrap();
    assert_eq!(scalar.shape(), &[3, 2]);
    assert_eq!(
        scalar.to_vec::<bool>().unwrap(),
        vec![false, true, true, false, false, true]
    );
    let err = logical_xor(&a, Array::from_slice(&[1i32, 2], &[2]).unwrap()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Value);
}

#[test]
fn matrix_transpose_swaps_the_last_two_axes() {
    let values: Vec<i32> = (0..24).collect();
    let a = Array::from_slice(&values, &[2, 3, 4]).unwrap();
    let t = matrix_transpose(&a).unwrap();
    assert_eq!(t.shape(), &[2, 4, 3]);
    let expected: Vec<i32> = (0..2)
        .flat_map(|b| (0..4).flat_map(move |j| (0..3).map(move |i| b * 12 + i * 4 + j)))
        .collect();
    assert_eq!(t.to_vec::<i32>().unwrap(), expected);
    let err = matrix_transpose(&Array::from_slice(&[1.0f32], &[1]).unwrap()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Value);
    assert_eq!(
        err.message(),
        "[matrix_transpose] Input array must have at least 2 dimensions."
    );
}

#[test]
fn minmax_equals_min_and_max() {
    let values: Vec<f32> = (0..24).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
    let a = Array::from_slice(&values, &[2, 3, 4]).unwrap().t().unwrap();
    for (axes, keepdims) in [
        (Axes::All, false),
        (Axes::from(0), true),
        (Axes::from([0, -1]), false),
    ] {
        let (lo, hi) = minmax(&a, axes.clone(), keepdims).unwrap();
        let want_lo = min(&a, axes.clone(), keepdims).unwrap();
        let want_hi = max(&a, axes, keepdims).unwrap();
        assert_eq!(lo.shape(), want_lo.shape());
        assert_eq!(
            lo.to_vec::<f32>().unwrap(),
            want_lo.to_vec::<f32>().unwrap()
        );
        assert_eq!(
            hi.to_vec::<f32>().unwrap(),
            want_hi.to_vec::<f32>().unwrap()
        );
    }
    let empty = lazulite::zeros(&[0], DType::Float32).unwrap();
    assert_eq!(
        minmax(&empty, Axes::All, false).unwrap_err().kind(),
        ErrorKind::Value
    );
}

#[test]
fn depends_passes_inputs_through_after_its_dependencies() {
    let a = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    let b = Array::from_slice(&[3i32], &[1]).unwrap();
    let side = lazulite::add(&b, 1).unwrap();
    let out = depends(&[a.clone(), b.clone()], std::slice::from_ref(&side)).unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(out[1].dtype(), DType::Int32);
    assert_eq!(out[0].to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
    assert!(side.is_evaluated());
    let err = depends(&[], &[a]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Value);
}

#[test]
fn array_buffer_size_counts_each_buffer_once() {
    let a = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let view = lazulite::slice(&a, &[1], &[3], &[1]).unwrap();
    view.eval().unwrap();
    let h = lazulite::ones(&[5], DType::Float16).unwrap();
    h.eval().unwrap();
    assert_eq!(get_array_buffer_size(&[&a, &view, &a]).unwrap(), 12);
    assert!(get_array_buffer_size(&[&a, &h]).unwrap() >= 12 + 2);
    assert_eq!(get_array_buffer_size(&[]).unwrap(), 0);
    let lazy = lazulite::add(&a, 1.0).unwrap();
    let err = get_array_buffer_size(&[&lazy]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Value);
    assert!(!lazy.is_evaluated());
}
