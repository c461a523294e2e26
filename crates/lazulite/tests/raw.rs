//! Raw memory access for zero-copy exchange, and empty arrays of any shape.

use lazulite::{Array, DType};

#[test]
fn empty_arrays_of_any_shape_are_contiguous() {
    let a = Array::from_slice::<f32>(&[], &[2, 0]).unwrap();
    assert_eq!(
        a.astype(DType::Int32).unwrap().to_vec::<i32>().unwrap(),
        vec![]
    );
    let raw = a.raw_data().unwrap();
    assert!(raw.is_contiguous());
    assert_eq!(raw.shape(), &[2, 0]);
}

#[test]
fn raw_data_of_views_keeps_strides_and_contiguous_copies() {
    let a = Array::from_slice(&[0i32, 1, 2, 3, 4, 5], &[2, 3]).unwrap();
    let reversed = lazulite::slice(&a, &[0, -1], &[2, -4], &[1, -1]).unwrap();
    let raw = reversed.raw_data().unwrap();
    assert_eq!(raw.byte_strides(), &[12, -4]);
    // SAFETY: the first element of the view is inside the buffer.
    assert_eq!(unsafe { *(raw.ptr() as *const i32) }, 2);
    let contiguous = reversed.raw_data_contiguous().unwrap();
    assert_eq!(contiguous.byte_strides(), &[12, 4]);
    // SAFETY: 6 contiguous i32 values.
    let values = unsafe { std::slice::from_raw_parts(contiguous.ptr() as *const i32, 6) };
    assert_eq!(values, &[2, 1, 0, 5, 4, 3]);
}

#[test]
fn raw_data_keeps_memory_alive_and_from_bytes_checks_sizes() {
    let raw = Array::from_slice(&[7u8, 8], &[2])
        .unwrap()
        .raw_data()
        .unwrap();
    // SAFETY: the array is dropped but `raw` holds its memory.
    assert_eq!(unsafe { *raw.ptr().add(1) }, 8);
    let bools = Array::from_bytes(&[0, 2, 1], &[3], DType::Bool).unwrap();
    assert_eq!(bools.to_vec::<bool>().unwrap(), vec![false, true, true]);
    let err = Array::from_bytes(&[0, 1], &[3], DType::Bool).unwrap_err();
    assert_eq!(err.kind(), lazulite::ErrorKind::Value);
}
