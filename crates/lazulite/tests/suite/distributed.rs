//! `lazulite::distributed` in whatever group this process belongs to: a group of one
//! under `cargo test`, and 2 or 4 processes when the test command runs this binary under
//! `mpirun` (filtered to `distributed::`, one test thread, so every process runs the
//! same collectives in the same order). Expected values are computed here from every
//! rank's input, which each process can make.

use lazulite::distributed::{self, Group};
use lazulite::{grad, slice, sum, vmap, Array, Axes, Complex, DType, ErrorKind};

fn world() -> Group {
    distributed::init(false, "any").unwrap()
}

/// Rank `r`'s input: `n` small integers, distinct per rank.
fn values(r: usize, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| ((i * 7 + r * 3) % 11) as f64 - 5.0)
        .collect()
}

fn input(r: usize, n: usize, dtype: DType) -> Array {
    let v: Vec<f64> = values(r, n);
    Array::from_slice(&v, &[n]).unwrap().astype(dtype).unwrap()
}

#[test]
fn reductions_over_the_group_for_each_dtype_class() {
    let g = world();
    let (rank, size) = (g.rank(), g.size());
    for n in [0, 1, 7, 1024] {
        for dtype in [
            DType::Int32,
            DType::Int16,
            DType::UInt8,
            DType::Float16,
            DType::BFloat16,
            DType::Float32,
            DType::Float64,
        ] {
            let x = input(rank, n, dtype);
            let sum = distributed::all_sum(&x, Some(&g)).unwrap();
            let max = distributed::all_max(&x, Some(&g)).unwrap();
            let min = distributed::all_min(&x, Some(&g)).unwrap();
            assert_eq!((sum.dtype(), sum.shape()), (dtype, &[n][..]));
            let cast = |a: &Array| a.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap();
            // The same reductions done here, in the dtype's own arithmetic (wrapping
            // integers, rounding halves).
            let all: Vec<Array> = (0..size).map(|r| input(r, n, dtype)).collect();
            let fold = |f: fn(&Array, &Array) -> lazulite::Result<Array>| {
                all.iter()
                    .skip(1)
                    .fold(all[0].clone(), |acc, x| f(&acc, x).unwrap())
            };
            let check = |got: &Array, want: Array, what: &str| {
                assert!(cast(got) == cast(&want), "{what} of {n} {dtype} differs");
            };
            check(&sum, fold(|a, b| lazulite::add(a, b)), "sum");
            check(&max, fold(|a, b| lazulite::maximum(a, b)), "max");
            check(&min, fold(|a, b| lazulite::minimum(a, b)), "min");
        }
    }
}

#[test]
fn complex_and_bool_reductions() {
    let g = world();
    let (rank, size) = (g.rank(), g.size());
    let z = Array::from_slice(
        &[
            Complex::new(rank as f32, 1.0),
            Complex::new(1.0, -(rank as f32)),
        ],
        &[2],
    )
    .unwrap();
    let sum = distributed::all_sum(&z, Some(&g))
        .unwrap()
        .to_vec::<Complex>()
        .unwrap();
    let s = (0..size).map(|r| r as f32).sum::<f32>();
    assert_eq!(
        sum,
        vec![Complex::new(s, size as f32), Complex::new(size as f32, -s)]
    );
    // Ordered by real part, then imaginary part.
    let max = distributed::all_max(&z, Some(&g))
        .unwrap()
        .to_vec::<Complex>()
        .unwrap();
    assert_eq!(
        max,
        vec![Complex::new((size - 1) as f32, 1.0), Complex::new(1.0, 0.0)]
    );
    let only_rank0 = Array::from_slice(&[rank == 0, true, false], &[3]).unwrap();
    let any = distributed::all_sum(&only_rank0, Some(&g))
        .unwrap()
        .to_vec::<bool>()
        .unwrap();
    let every = distributed::all_min(&only_rank0, Some(&g))
        .unwrap()
        .to_vec::<bool>()
        .unwrap();
    assert_eq!(any, vec![true, true, false]);
    assert_eq!(every, vec![size == 1, true, false]);
}

#[test]
fn gather_and_scatter() {
    let g = world();
    let (rank, size) = (g.rank(), g.size());
    let x = Array::from_slice(&[rank as i32, 10 + rank as i32], &[1, 2]).unwrap();
    let gathered = distributed::all_gather(&x, Some(&g)).unwrap();
    assert_eq!(gathered.shape(), &[size, 2]);
    let expected: Vec<i32> = (0..size as i32).flat_map(|r| [r, 10 + r]).collect();
    assert_eq!(gathered.to_vec::<i32>().unwrap(), expected);
    let scalar = distributed::all_gather(&Array::scalar(rank as f32), Some(&g)).unwrap();
    let expected_shape: Vec<usize> = if size == 1 { vec![] } else { vec![size] };
    assert_eq!(scalar.shape(), &expected_shape[..]);

    let rows = Array::from_slice(
        &(0..2 * size).map(|i| (i + rank) as f32).collect::<Vec<_>>(),
        &[2 * size],
    )
    .unwrap();
    let mine = distributed::sum_scatter(&rows, Some(&g)).unwrap();
    let total = |i: usize| (0..size).map(|r| (i + r) as f32).sum::<f32>();
    let want: Vec<f32> = if size == 1 {
        (0..2).map(total).collect()
    } else {
        (2 * rank..2 * rank + 2).map(total).collect()
    };
    assert_eq!(mine.to_vec::<f32>().unwrap(), want);
    if size > 1 {
        let odd = Array::from_slice(&[1.0f32; 3], &[3]).unwrap();
        let err = distributed::sum_scatter(&odd, Some(&g)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Value);
    }
}

#[test]
fn send_and_receive_around_a_ring() {
    let g = world();
    let (rank, size) = (g.rank(), g.size());
    let x = input(rank, 1 << 18, DType::Float32);
    if size == 1 {
        assert_eq!(
            distributed::send(&x, 0, Some(&g)).unwrap_err().kind(),
            ErrorKind::Value
        );
        assert_eq!(
            distributed::recv_like(&x, 0, Some(&g)).unwrap_err().kind(),
            ErrorKind::Value
        );
        return;
    }
    let sent = distributed::send(&x, ((rank + 1) % size) as i64, Some(&g)).unwrap();
    let got = distributed::recv(
        &[1 << 18],
        DType::Float32,
        ((rank + size - 1) % size) as i64,
        Some(&g),
    )
    .unwrap();
    // Every process sends first: sends must not wait for their receivers.
    lazulite::eval(&[&sent, &got]).unwrap();
    let from = (rank + size - 1) % size;
    assert_eq!(
        got.to_vec::<f32>().unwrap(),
        input(from, 1 << 18, DType::Float32)
            .to_vec::<f32>()
            .unwrap()
    );
    assert_eq!(
        distributed::send(&x, size as i64, Some(&g))
            .unwrap_err()
            .kind(),
        ErrorKind::Value
    );
}

#[test]
fn split_into_even_and_odd_ranks() {
    let g = world();
    if g.size() == 1 {
        assert!(g.split(0, None).is_err());
        return;
    }
    let (rank, size) = (g.rank(), g.size());
    let half = g.split((rank % 2) as i32, None).unwrap();
    let members: Vec<usize> = (0..size).filter(|r| r % 2 == rank % 2).collect();
    assert_eq!(half.size(), members.len());
    let total = distributed::all_sum(&Array::scalar(rank as i64), Some(&half)).unwrap();
    assert_eq!(
        total.item::<i64>().unwrap(),
        members.iter().sum::<usize>() as i64
    );
    let bad = g.split(if rank == 0 { -1 } else { 0 }, None).unwrap_err();
    assert_eq!(bad.kind(), ErrorKind::Value);
}

#[test]
fn mismatched_shapes_fail_on_every_process() {
    let g = world();
    if g.size() == 1 {
        return;
    }
    let x = Array::zeros(&[g.rank() + 1], DType::Float32).unwrap();
    let err = distributed::all_sum(&x, Some(&g))
        .unwrap()
        .eval()
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Value);
    assert!(
        err.message().contains("different shapes"),
        "{}",
        err.message()
    );
}

#[test]
fn gradients_through_gather_and_sum_against_finite_differences() {
    let g = world();
    let (rank, size) = (g.rank(), g.size());
    let w = Array::from_slice(
        &(0..3 * size).map(|i| i as f64 + 1.0).collect::<Vec<_>>(),
        &[3 * size],
    )
    .unwrap();
    let gathered = |x: &Array| sum(&(&distributed::all_gather(x, None)? * &w), Axes::All, false);
    let summed = |x: &Array| {
        sum(
            &(&distributed::all_sum(&(x * x), None)? * &slice(&w, &[0], &[3], &[1])?),
            Axes::All,
            false,
        )
    };
    let x0: Vec<f64> = values(rank, 3)
        .iter()
        .map(|v| v + 0.25 * rank as f64)
        .collect();
    for f in [
        &gathered as &dyn Fn(&Array) -> lazulite::Result<Array>,
        &summed,
    ] {
        let analytic = grad(|x: &Array| f(x))(&Array::from_slice(&x0, &[3]).unwrap())
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        // The processes take turns perturbing their input; all evaluate in step.
        let mut numeric = vec![0.0; 3];
        for turn in 0..size {
            for (i, slot) in numeric.iter_mut().enumerate() {
                for sign in [1.0, -1.0] {
                    let mut x = x0.clone();
                    if turn == rank {
                        x[i] += sign * 1e-4;
                    }
                    let v = f(&Array::from_slice(&x, &[3]).unwrap())
                        .unwrap()
                        .item::<f64>()
                        .unwrap();
                    if turn == rank {
                        *slot += sign * v / 2e-4;
                    }
                }
            }
        }
        for (a, n) in analytic.iter().zip(&numeric) {
            assert!((a - n).abs() < 1e-6, "{analytic:?} vs {numeric:?}");
        }
    }
}

#[test]
fn vmap_of_all_gather_equals_a_loop() {
    let g = world();
    let xs = input(g.rank(), 12, DType::Float32)
        .reshape(&[4, 3])
        .unwrap();
    let batched = vmap(
        |a| Ok(vec![distributed::all_gather(&a[0], None)?]),
        vec![Some(0)],
        vec![Some(0)],
    )(std::slice::from_ref(&xs))
    .unwrap();
    for i in 0..4 {
        let row = slice(&xs, &[i, 0], &[i + 1, 3], &[1, 1])
            .unwrap()
            .reshape(&[3])
            .unwrap();
        let one = distributed::all_gather(&row, None)
            .unwrap()
            .to_vec::<f32>()
            .unwrap();
        let from_batch =
            slice(&batched[0], &[i, 0], &[i + 1, 3 * g.size() as i64], &[1, 1]).unwrap();
        assert_eq!(from_batch.to_vec::<f32>().unwrap(), one);
    }
}
