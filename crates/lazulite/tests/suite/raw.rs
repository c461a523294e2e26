//! Raw memory access for zero-copy exchange, and empty arrays of any shape.

use lazulite::{Array, DType};

#[test]
fn empty_arrays_of_any_shape_are_contiguous() {
    let a = Array::from_slice::<f32>(&[], &[2, 0]).unwrap();
    assert_eq!(
        a.astype(DType::Int32).unwrap().to_vec::<i32>().unwrap(),
        Vec::<i32>::new()
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

/// Memory owned elsewhere: reads at any strides (negative and zero too), never written
/// (not even by an op that could reuse a lone input in place), released with the last
/// array.
#[test]
fn external_memory_is_read_in_place_and_never_written() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    /// Holds the floats and says when it is dropped.
    struct Owner {
        _data: Box<[f32]>,
        released: Arc<AtomicBool>,
    }
    impl Drop for Owner {
        fn drop(&mut self) {
            self.released.store(true, Ordering::SeqCst);
        }
    }
    let data: Box<[f32]> = (0..6).map(|v| v as f32).collect();
    let ptr = std::ptr::NonNull::new(data.as_ptr() as *mut u8).unwrap();
    let released = Arc::new(AtomicBool::new(false));
    let owner = Box::new(Owner {
        _data: data,
        released: released.clone(),
    });
    // SAFETY: 6 floats owned by `owner`, which the array keeps alive.
    let a = unsafe { Array::from_external(ptr, &[2, 3], &[3, 1], DType::Float32, owner) }.unwrap();
    let expected: Vec<f32> = (0..6).map(|v| (v as f32).exp()).collect();
    let close = |got: Vec<f32>| {
        got.iter()
            .zip(&expected)
            .all(|(g, e)| (g - e).abs() <= 1e-6 * e.abs())
    };
    assert!(close(a.exp().unwrap().to_vec::<f32>().unwrap()));
    // The only handle goes into `exp`: a writable buffer would be reused for the result.
    let b = a.exp().unwrap();
    drop(a);
    assert!(close(b.to_vec::<f32>().unwrap()));
    // Had `exp` written its result into the external buffer, `b` would still hold it.
    assert!(
        released.load(Ordering::SeqCst),
        "released with the last array"
    );

    let data: Box<[i16]> = (0..6).collect();
    let base = std::ptr::NonNull::new(data.as_ptr() as *mut u8).unwrap();
    // SAFETY: element (0, 0) of the reversed view is the last of the 6 elements.
    let last = unsafe { std::ptr::NonNull::new_unchecked(base.as_ptr().add(10)) };
    let reversed =
        unsafe { Array::from_external(last, &[2, 3], &[-3, -1], DType::Int16, Box::new(data)) }
            .unwrap();
    assert_eq!(reversed.to_vec::<i16>().unwrap(), vec![5, 4, 3, 2, 1, 0]);
    let data: Box<[i16]> = vec![7, 8].into_boxed_slice();
    let ptr = std::ptr::NonNull::new(data.as_ptr() as *mut u8).unwrap();
    // SAFETY: stride 0 along the first axis reads the same 2 elements.
    let broadcast =
        unsafe { Array::from_external(ptr, &[3, 2], &[0, 1], DType::Int16, Box::new(data)) }
            .unwrap();
    assert_eq!(broadcast.to_vec::<i16>().unwrap(), vec![7, 8, 7, 8, 7, 8]);
}
