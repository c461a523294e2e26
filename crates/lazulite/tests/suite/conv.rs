//! Convolutions: values against a direct NumPy loop (fixtures/conv.json, written by
//! tools/fixtures/conv.py), every dtype and input layout, and MLX's errors. The
//! derivative and batching rules are checked in the rule table (`rules.rs`) on
//! [`configurations`].

use crate::common;

use common::{array, array_from_json, assert_matches, uniform};
use lazulite::{
    conv1d, conv2d, conv3d, conv_general, conv_transpose1d, conv_transpose2d, conv_transpose3d,
    flip, ones, slice, transpose, Array, ConvGeneral, DType, ErrorKind,
};
use serde_json::Value;

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .expect("list")
        .iter()
        .map(|x| x.as_i64().expect("int"))
        .collect()
}

fn general_params(p: &Value) -> ConvGeneral {
    ConvGeneral {
        stride: ints(&p["stride"]),
        padding_lo: ints(&p["padding_lo"]),
        padding_hi: ints(&p["padding_hi"]),
        kernel_dilation: ints(&p["kernel_dilation"]),
        input_dilation: ints(&p["input_dilation"]),
        groups: p["groups"].as_i64().unwrap(),
        flip: p["flip"].as_bool().unwrap(),
    }
}

/// Runs a fixture case on the given operands.
fn run_case(case: &Value, x: &Array, w: &Array) -> lazulite::Result<Array> {
    let p = &case["params"];
    if case["kind"] == "general" {
        return conv_general(x, w, &general_params(p));
    }
    let (s, pad, d, op) = (
        ints(&p["stride"]),
        ints(&p["padding"]),
        ints(&p["dilation"]),
        ints(&p["output_padding"]),
    );
    let g = p["groups"].as_i64().unwrap();
    match x.ndim() {
        3 => conv_transpose1d(x, w, s[0], pad[0], d[0], op[0], g),
        4 => conv_transpose2d(
            x,
            w,
            [s[0], s[1]],
            [pad[0], pad[1]],
            [d[0], d[1]],
            [op[0], op[1]],
            g,
        ),
        _ => conv_transpose3d(
            x,
            w,
            [s[0], s[1], s[2]],
            [pad[0], pad[1], pad[2]],
            [d[0], d[1], d[2]],
            [op[0], op[1], op[2]],
            g,
        ),
    }
}

fn cases() -> Vec<(String, Value)> {
    let fixture = common::load_fixture("conv");
    fixture["cases"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[test]
fn values_match_the_direct_loop() {
    for (name, case) in cases() {
        let (x, w) = (array_from_json(&case["x"]), array_from_json(&case["w"]));
        let y = run_case(&case, &x, &w).unwrap();
        let tol = if x.dtype() == DType::Float64 {
            1e-12
        } else {
            1e-5
        };
        assert_matches(&y, &case["expected"], tol, tol, &name);
    }
}

#[test]
fn half_precision_inputs_round_once() {
    for (name, case) in cases() {
        for dtype in [DType::Float16, DType::BFloat16] {
            let x = array_from_json(&case["x"]).astype(dtype).unwrap();
            let w = array_from_json(&case["w"]).astype(dtype).unwrap();
            let y = run_case(&case, &x, &w).unwrap();
            assert_eq!(y.dtype(), dtype, "{name}");
            // The reference from the rounded operands, in float64.
            let exact = run_case(
                &case,
                &x.astype(DType::Float64).unwrap(),
                &w.astype(DType::Float64).unwrap(),
            )
            .unwrap();
            let eps = if dtype == DType::Float16 { 1e-3 } else { 8e-3 };
            let got = y.to_vec::<f64>().unwrap();
            for (g, e) in got.iter().zip(exact.to_vec::<f64>().unwrap()) {
                assert!(
                    (g - e).abs() <= eps * (1.0 + e.abs()),
                    "{name} {dtype}: {g} vs {e}"
                );
            }
        }
    }
}

#[test]
fn strided_operands_give_the_same_values() {
    for (name, case) in cases() {
        let (x, w) = (array_from_json(&case["x"]), array_from_json(&case["w"]));
        let nd = x.ndim() as i32;
        // Reversed twice along the spatial axes: negative strides, same values.
        let spatial: Vec<i32> = (1..nd - 1).collect();
        let xr = flip(
            &flip(&x, spatial.clone())
                .unwrap()
                .astype(x.dtype())
                .unwrap(),
            spatial,
        )
        .unwrap();
        // A transposed copy transposed back: non-contiguous strides.
        let perm: Vec<i32> = (0..nd).rev().collect();
        let wt = transpose(
            &transpose(&w, &perm)
                .unwrap()
                .astype(DType::Float64)
                .unwrap(),
            &perm,
        )
        .unwrap()
        .astype(w.dtype())
        .unwrap();
        let tol = if x.dtype() == DType::Float64 {
            1e-12
        } else {
            1e-5
        };
        assert_matches(
            &run_case(&case, &xr, &wt).unwrap(),
            &case["expected"],
            tol,
            tol,
            &name,
        );
    }
    // A sliced input (every other row and column) against its contiguous copy.
    let big = array(&uniform(3, 2 * 9 * 8 * 3, -1.0, 1.0), &[2, 9, 8, 3]);
    let view = slice(&big, &[0, 0, 1, 0], &[2, 9, 8, 3], &[1, 2, 2, 1]).unwrap();
    let copy = array(&view.to_vec::<f64>().unwrap(), view.shape());
    let w = array(&uniform(4, 4 * 2 * 2 * 3, -1.0, 1.0), &[4, 2, 2, 3]);
    let a = conv2d(&view, &w, [1, 1], [1, 1], [1, 1], 1).unwrap();
    let b = conv2d(&copy, &w, [1, 1], [1, 1], [1, 1], 1).unwrap();
    assert_eq!(a.to_vec::<f64>().unwrap(), b.to_vec::<f64>().unwrap());
    // A broadcast weight (stride 0 over C_out).
    let row = array(&uniform(5, 2 * 2 * 3, -1.0, 1.0), &[1, 2, 2, 3]);
    let wb = lazulite::broadcast_to(&row, &[4, 2, 2, 3]).unwrap();
    let wc = array(&wb.to_vec::<f64>().unwrap(), &[4, 2, 2, 3]);
    let a = conv2d(&copy, &wb, [2, 1], [0, 0], [1, 1], 1).unwrap();
    let b = conv2d(&copy, &wc, [2, 1], [0, 0], [1, 1], 1).unwrap();
    assert_eq!(a.to_vec::<f64>().unwrap(), b.to_vec::<f64>().unwrap());
}

#[test]
fn shapes_defaults_and_empty_arrays() {
    let f = DType::Float32;
    let x = ones(&[1, 5, 5, 4], f).unwrap();
    let w = ones(&[6, 3, 3, 4], f).unwrap();
    let y = conv2d(&x, &w, [1, 1], [0, 0], [1, 1], 1).unwrap();
    assert_eq!(y.shape(), &[1, 3, 3, 6]);
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![36.0; 54]);
    // conv1d's single values apply to every spatial axis of a 2-D input, as in MLX.
    assert_eq!(conv1d(&x, &w, 1, 1, 1, 1).unwrap().shape(), &[1, 5, 5, 6]);
    // Negative padding crops.
    assert_eq!(
        conv2d(&x, &w, [1, 1], [-1, -1], [1, 1], 1).unwrap().shape(),
        &[1, 1, 1, 6]
    );
    let asym = ConvGeneral {
        padding_lo: vec![-1, 0],
        padding_hi: vec![0, 1],
        ..ConvGeneral::default()
    };
    assert_eq!(conv_general(&x, &w, &asym).unwrap().shape(), &[1, 2, 4, 6]);
    // Integer weights are promoted with the input.
    let wi = ones(&[6, 3, 3, 4], DType::Int32).unwrap();
    assert_eq!(
        conv2d(&x, &wi, [1, 1], [0, 0], [1, 1], 1).unwrap().dtype(),
        f
    );
    let h = x.astype(DType::Float16).unwrap();
    assert_eq!(
        conv2d(&h, &w, [1, 1], [0, 0], [1, 1], 1).unwrap().dtype(),
        f
    );
    // Empty batch, empty output channels, empty channels (zeros), empty input with padding.
    let e = conv2d(
        &ones(&[0, 5, 5, 4], f).unwrap(),
        &w,
        [1, 1],
        [0, 0],
        [1, 1],
        1,
    )
    .unwrap();
    assert_eq!(e.shape(), &[0, 3, 3, 6]);
    assert_eq!(e.to_vec::<f32>().unwrap(), Vec::<f32>::new());
    let e = conv2d(
        &x,
        &ones(&[0, 3, 3, 4], f).unwrap(),
        [1, 1],
        [0, 0],
        [1, 1],
        1,
    )
    .unwrap();
    assert_eq!(e.shape(), &[1, 3, 3, 0]);
    e.eval().unwrap();
    let z = conv2d(
        &ones(&[1, 5, 5, 0], f).unwrap(),
        &ones(&[6, 3, 3, 0], f).unwrap(),
        [1, 1],
        [0, 0],
        [1, 1],
        1,
    )
    .unwrap();
    assert_eq!(z.to_vec::<f32>().unwrap(), vec![0.0; 54]);
    let p = conv2d(
        &ones(&[1, 0, 5, 4], f).unwrap(),
        &w,
        [1, 1],
        [2, 2],
        [1, 1],
        1,
    )
    .unwrap();
    assert_eq!(p.shape(), &[1, 2, 7, 6]);
    assert_eq!(p.to_vec::<f32>().unwrap(), vec![0.0; 84]);
    // Transposed convolutions: MLX's output sizes.
    let t = conv_transpose2d(&x, &w, [2, 2], [1, 1], [1, 1], [1, 1], 1).unwrap();
    assert_eq!(t.shape(), &[1, 10, 10, 6]);
    let t = conv_transpose2d(&x, &w, [2, 2], [0, 0], [1, 1], [2, 2], 1).unwrap();
    assert_eq!(t.shape(), &[1, 13, 13, 6]);
    let t = conv_transpose2d(&x, &w, [2, 2], [1, 1], [2, 2], [0, 0], 1).unwrap();
    assert_eq!(t.shape(), &[1, 11, 11, 6]);
    let x3 = ones(&[2, 4, 5, 6, 3], f).unwrap();
    let w3 = ones(&[2, 2, 2, 2, 3], f).unwrap();
    let y3 = conv3d(&x3, &w3, [1, 2, 3], [1, 0, 1], [1, 1, 1], 1).unwrap();
    assert_eq!(y3.shape(), &[2, 5, 2, 3, 2]);
}

#[test]
fn errors_match_mlx_and_leave_inputs_intact() {
    let f = DType::Float32;
    let x = ones(&[1, 5, 5, 4], f).unwrap();
    let w = ones(&[6, 3, 3, 4], f).unwrap();
    let c2 = |x: &Array, w: &Array, s: i64, p: i64, d: i64, g: i64| {
        conv2d(x, w, [s, s], [p, p], [d, d], g)
    };
    let cases: Vec<(lazulite::Result<Array>, &str)> = vec![
        (
            c2(&x, &ones(&[6, 3, 3, 3], f).unwrap(), 1, 0, 1, 1),
            "[conv] Expect the input channels in the input and weight array to match but got \
             shapes - input: (1,5,5,4) and weight: (6,3,3,3)",
        ),
        (
            c2(&x, &w, 1, 0, 1, 3),
            "[conv] The input channels must be divisible by the number of groups. Got input \
             with shape (1,5,5,4) and 3 groups.",
        ),
        (
            c2(&x, &ones(&[5, 3, 3, 2], f).unwrap(), 1, 0, 1, 2),
            "[conv] If groups > 1, the output channels must be divisible by the number of \
             groups. Got 5 output channels and 2 groups.",
        ),
        (
            c2(&x, &w, 1, 0, 1, 2),
            "Given groups=2 and weights of shape (6,3,3,4), expected to have 8 input channels \
             but got 4 input channels instead.",
        ),
        (
            c2(&x, &w, 0, 0, 1, 1),
            "[conv] Stride sizes must be positive. Got strides (0,0).",
        ),
        (
            c2(&x, &w, 1, 0, -1, 1),
            "[conv] Kernel dilation sizes must be positive. Got kernel dilation (-1,-1).",
        ),
        (
            c2(&x, &ones(&[6, 7, 7, 4], f).unwrap(), 1, 0, 1, 1),
            "[conv] Spatial dimensions of input after padding cannot be smaller than weight \
             spatial dimensions. Got error at axis 1 for input with shape (1,5,5,4), padding \
             low (0,0), padding high (0,0), and weight of shape (6,7,7,4).",
        ),
        (
            c2(&x, &w, 1, -3, 1, 1),
            "[conv] Spatial dimensions of input after padding cannot be smaller than weight \
             spatial dimensions. Got error at axis 1 for input with shape (1,0,0,4), padding \
             low (0,0), padding high (0,0), and weight of shape (6,3,3,4).",
        ),
        (
            c2(&ones(&[5, 5, 4], f).unwrap(), &w, 1, 0, 1, 1),
            "[conv] Invalid weight array with 4 dimensions for 1D convolution. Expected an \
             array with 3 dimensions following the format [C_out, ..., C_in].",
        ),
        (
            c2(&ones(&[5, 4], f).unwrap(), &w, 1, 0, 1, 1),
            "[conv] Only works for inputs with 1-3 spatial dimensions. The inputs must be in \
             the format [N, ..., C_in]",
        ),
        (
            c2(&ones(&[1, 5, 5, 4], DType::Int32).unwrap(), &w, 1, 0, 1, 1),
            "[conv] Invalid input array with type int32. Convolution currently only supports \
             floating point types",
        ),
        (
            conv3d(
                &ones(&[1, 4, 4, 4, 4], f).unwrap(),
                &ones(&[2, 1, 1, 1, 2], f).unwrap(),
                [1, 1, 1],
                [0, 0, 0],
                [1, 1, 1],
                2,
            ),
            "[conv] Can only handle groups != 1 in 1D or 2D convolutions.",
        ),
        (
            conv_general(
                &x,
                &w,
                &ConvGeneral {
                    stride: vec![1, 1, 1],
                    ..ConvGeneral::default()
                },
            ),
            "[conv] Invalid strides (1,1,1) for 2D convolution.",
        ),
        (
            conv_general(
                &x,
                &w,
                &ConvGeneral {
                    padding_lo: vec![1, 1, 1],
                    padding_hi: vec![1, 1],
                    ..ConvGeneral::default()
                },
            ),
            "[conv] Invalid padding (1,1,1) | (1,1) for 2D convolution.",
        ),
        (
            conv_general(
                &x,
                &w,
                &ConvGeneral {
                    input_dilation: vec![0],
                    ..ConvGeneral::default()
                },
            ),
            "[conv] Input dilation sizes must be positive. Got input dilation (0,0).",
        ),
        (
            conv_transpose2d(&x, &w, [1, 1], [5, 5], [1, 1], [0, 0], 1),
            "[conv] Spatial dimensions of input after padding cannot be smaller than weight \
             spatial dimensions. Got error at axis 1 for input with shape (1,0,0,4), padding \
             low (0,0), padding high (0,0), and weight of shape (6,3,3,4).",
        ),
        // Where MLX crashes (division by zero, invalid gemm), a ValueError.
        (
            c2(&x, &w, 1, 0, 1, 0),
            "[conv] The number of groups must be positive. Got 0 groups.",
        ),
        (
            c2(&x, &ones(&[6, 0, 3, 4], f).unwrap(), 1, 0, 1, 1),
            "[conv] Weight spatial dimensions must be positive. Got error at axis 1 for weight \
             of shape (6,0,3,4).",
        ),
        // MLX truncates a negative span and reads past the input; an error here.
        (
            conv1d(
                &ones(&[1, 5, 1], f).unwrap(),
                &ones(&[1, 6, 1], f).unwrap(),
                2,
                0,
                1,
                1,
            ),
            "[conv] Spatial dimensions of input after padding cannot be smaller than weight \
             spatial dimensions. Got error at axis 1 for input with shape (1,5,1), padding low \
             (0), padding high (0), and weight of shape (1,6,1).",
        ),
    ];
    for (result, message) in cases {
        let err = result.expect_err(message);
        assert_eq!(err.kind(), ErrorKind::Value, "{message}");
        assert_eq!(err.message(), message);
    }
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.0; 100]);
    assert_eq!(w.to_vec::<f32>().unwrap(), vec![1.0; 216]);
}

/// Random float64 operands of the given shapes.
pub(crate) fn operands(x_shape: &[usize], w_shape: &[usize], seed: u64) -> Vec<Array> {
    let size = |s: &[usize]| s.iter().product::<usize>();
    vec![
        array(&uniform(seed, size(x_shape), -1.0, 1.0), x_shape),
        array(&uniform(seed + 1, size(w_shape), -1.0, 1.0), w_shape),
    ]
}

/// Parameter sets covering every option, with operand shapes (their transform rules are
/// checked in the rule table, `rules.rs`).
pub(crate) fn configurations() -> Vec<(&'static str, Vec<usize>, Vec<usize>, ConvGeneral)> {
    let p = |stride: &[i64], lo: &[i64], hi: &[i64], kd: &[i64], id: &[i64], groups, flip| {
        ConvGeneral {
            stride: stride.to_vec(),
            padding_lo: lo.to_vec(),
            padding_hi: hi.to_vec(),
            kernel_dilation: kd.to_vec(),
            input_dilation: id.to_vec(),
            groups,
            flip,
        }
    };
    vec![
        (
            "1d plain",
            vec![2, 7, 3],
            vec![4, 3, 3],
            p(&[], &[], &[], &[], &[], 1, false),
        ),
        (
            "1d stride pad",
            vec![2, 9, 2],
            vec![3, 3, 2],
            p(&[2], &[1], &[2], &[], &[], 1, false),
        ),
        (
            "1d stride leftover",
            vec![1, 10, 2],
            vec![2, 3, 2],
            p(&[3], &[0], &[0], &[], &[], 1, false),
        ),
        (
            "1d dilations flip",
            vec![2, 6, 2],
            vec![2, 3, 2],
            p(&[1], &[2], &[1], &[2], &[2], 1, true),
        ),
        (
            "1d groups",
            vec![2, 6, 4],
            vec![6, 2, 2],
            p(&[2], &[1], &[1], &[1], &[1], 2, false),
        ),
        (
            "1d negative padding",
            vec![1, 9, 2],
            vec![2, 2, 2],
            p(&[1], &[-2], &[-1], &[], &[], 1, false),
        ),
        (
            "2d asym",
            vec![2, 5, 6, 2],
            vec![3, 3, 2, 2],
            p(&[2, 1], &[1, 0], &[0, 2], &[1, 2], &[1], 1, false),
        ),
        (
            "2d groups flip idil",
            vec![1, 4, 5, 4],
            vec![4, 2, 3, 2],
            p(&[1, 2], &[1], &[1], &[1], &[2, 1], 2, true),
        ),
        (
            "2d pointwise",
            vec![2, 3, 4, 3],
            vec![5, 1, 1, 3],
            p(&[], &[], &[], &[], &[], 1, false),
        ),
        (
            "3d",
            vec![1, 3, 4, 3, 2],
            vec![2, 2, 2, 2, 2],
            p(
                &[1, 2, 1],
                &[1, 0, 0],
                &[0, 0, 1],
                &[1, 1, 2],
                &[1],
                1,
                false,
            ),
        ),
    ]
}
