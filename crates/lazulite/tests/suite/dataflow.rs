//! Dataflow à la Owl: the examples of Owl's lazy evaluation and dataflow guide
//! translated, which nodes run after re-assignments, and consistency with eager results.

use lazulite::{placeholder, to_dot, to_trace, Array, DType, ErrorKind, Result};

fn matrix(seed: u64, rows: usize, cols: usize) -> Array {
    let mut s = seed | 1;
    let v: Vec<f64> = (0..rows * cols)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            0.1 + 0.8 * ((s >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect();
    Array::from_slice(&v, &[rows, cols]).unwrap()
}

/// `add x x |> log |> sin |> neg |> cos |> abs |> sinh |> round |> atan`.
fn chain(x: &Array) -> Result<Array> {
    (x + x)
        .log()?
        .sin()?
        .negative()?
        .cos()?
        .abs()?
        .sinh()
        .and_then(|y| lazulite::round(&y, 0))?
        .arctan()
}

/// Documented example: "A Simple Example" — the lazy chain on a placeholder equals the eager chain.
#[test]
fn owl_lazy_chain_matches_eager() {
    let x = matrix(1, 10, 10);
    let a = placeholder(&[10, 10], DType::Float64).unwrap();
    let z = chain(&a).unwrap();
    a.assign(&x).unwrap();
    z.eval().unwrap();
    assert_eq!(
        z.to_vec::<f64>().unwrap(),
        chain(&x).unwrap().to_vec::<f64>().unwrap()
    );
}

/// Documented example: `print_trace` — the edges, and which nodes keep a value after evaluation
/// (intermediate buffers were reused: only the variables and the output are valid).
#[test]
fn owl_trace_printing() {
    let a = matrix(2, 3, 3);
    let x = placeholder(&[3, 3], DType::Float64).unwrap();
    let y = placeholder(&[3, 3], DType::Float64).unwrap();
    let z = lazulite::add(&x, &y)
        .unwrap()
        .sin()
        .unwrap()
        .abs()
        .unwrap()
        .log()
        .unwrap();
    x.assign(&a).unwrap();
    y.assign(&a).unwrap();
    z.eval().unwrap();
    let t = "shape:[3, 3] dtype:float64";
    let expected = format!(
        "[ #5 name:abs state:invalid {t} ] -> [ #6 name:log state:valid {t} ]\n\
         [ #4 name:sin state:invalid {t} ] -> [ #5 name:abs state:invalid {t} ]\n\
         [ #3 name:add state:invalid {t} ] -> [ #4 name:sin state:invalid {t} ]\n\
         [ #1 name:variable state:valid {t} ] -> [ #3 name:add state:invalid {t} ]\n\
         [ #2 name:variable state:valid {t} ] -> [ #3 name:add state:invalid {t} ]\n"
    );
    assert_eq!(to_trace(&[&z]), expected);
    // The values are right, and reading them again recomputes nothing.
    let eager = lazulite::add(&a, &a)
        .unwrap()
        .sin()
        .unwrap()
        .abs()
        .unwrap()
        .log()
        .unwrap();
    assert_eq!(z.to_vec::<f64>().unwrap(), eager.to_vec::<f64>().unwrap());
    assert_eq!(z.evaluation_count(), 1);
    let dot = to_dot(&[&z]);
    assert_eq!(dot.matches(" -> ").count(), 5);
    assert!(
        dot.contains("n3 [label=\"#3 add\\n[3, 3] float64\"];"),
        "{dot}"
    );
}

/// Incremental evaluation: after re-assigning one placeholder, only the nodes that depend
/// on it run, and a node whose buffer was reused runs again only if needed.
#[test]
fn reassignment_recomputes_only_what_depends_on_it() {
    let a = placeholder(&[4, 4], DType::Float64).unwrap();
    let b = placeholder(&[], DType::Float64).unwrap();
    let sa = a.sin().unwrap();
    let ca = sa.cos().unwrap();
    let c = lazulite::add(lazulite::multiply(&ca, &a).unwrap(), &b).unwrap();
    a.assign(matrix(3, 4, 4)).unwrap();
    b.assign(5.0).unwrap();
    c.eval().unwrap();
    let runs = || {
        [
            sa.evaluation_count(),
            ca.evaluation_count(),
            c.evaluation_count(),
        ]
    };
    assert_eq!(runs(), [1, 1, 1]);
    for value in [6.0, 7.0] {
        b.assign(value).unwrap();
        c.eval().unwrap();
        let eager = lazulite::add(
            lazulite::multiply(
                matrix(3, 4, 4).sin().unwrap().cos().unwrap(),
                matrix(3, 4, 4),
            )
            .unwrap(),
            value,
        )
        .unwrap();
        assert_eq!(c.to_vec::<f64>().unwrap(), eager.to_vec::<f64>().unwrap());
    }
    // sa and ca are held by us, so they kept their values and did not run again.
    assert_eq!(runs(), [1, 1, 3]);
    a.assign(matrix(4, 4, 4)).unwrap();
    assert_eq!(
        ca.to_vec::<f64>().unwrap(),
        matrix(4, 4, 4)
            .sin()
            .unwrap()
            .cos()
            .unwrap()
            .to_vec::<f64>()
            .unwrap()
    );
    assert_eq!(runs(), [2, 2, 3]);
}

#[test]
fn placeholder_errors() {
    let x = placeholder(&[2, 2], DType::Float32).unwrap();
    let y = x.exp().unwrap();
    let err = y.eval().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Value);
    assert!(err.message().contains("Placeholder"), "{err}");
    assert!(x.to_vec::<f32>().is_err());
    let wrong_shape = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    assert_eq!(x.assign(&wrong_shape).unwrap_err().kind(), ErrorKind::Value);
    let wrong_dtype = Array::from_slice(&[1.0f64; 4], &[2, 2]).unwrap();
    assert_eq!(x.assign(&wrong_dtype).unwrap_err().kind(), ErrorKind::Value);
    assert_eq!(y.assign(1.0).unwrap_err().kind(), ErrorKind::Value);
    x.assign(0.0).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![1.0; 4]);
}

/// Random graphs over three placeholders, random assignments and evaluations: every
/// read agrees with computing the same expression eagerly from the current values.
#[test]
fn random_assignments_stay_consistent_with_eager_evaluation() {
    let mut s: u64 = 12345;
    let mut next = |n: u64| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 33) % n
    };
    for trial in 0..20 {
        let ps: Vec<Array> = (0..3)
            .map(|_| placeholder(&[3], DType::Float64).unwrap())
            .collect();
        let mut values: Vec<Array> = (0..3)
            .map(|i| matrix(trial * 10 + i, 1, 3).reshape(&[3]).unwrap())
            .collect();
        for (p, v) in ps.iter().zip(&values) {
            p.assign(v).unwrap();
        }
        // Node k is op(k) of two earlier nodes; the same recipe is replayed eagerly.
        let mut recipe: Vec<(u64, usize, usize)> = Vec::new();
        let mut nodes: Vec<Array> = ps.clone();
        for _ in 0..12 {
            let (op, i, j) = (
                next(4),
                next(nodes.len() as u64) as usize,
                next(nodes.len() as u64) as usize,
            );
            recipe.push((op, i, j));
            nodes.push(apply(op, &nodes[i], &nodes[j]));
        }
        let outputs: Vec<Array> = nodes[nodes.len() - 4..].to_vec();
        for _ in 0..6 {
            let k = next(3) as usize;
            values[k] = matrix(next(1000), 1, 3).reshape(&[3]).unwrap();
            ps[k].assign(&values[k]).unwrap();
            let which = next(4) as usize;
            let mut eager: Vec<Array> = values.clone();
            for &(op, i, j) in &recipe {
                let v = apply(op, &eager[i], &eager[j]);
                eager.push(v);
            }
            let expected = eager[eager.len() - 4 + which].to_vec::<f64>().unwrap();
            assert_eq!(
                outputs[which].to_vec::<f64>().unwrap(),
                expected,
                "trial {trial}"
            );
        }
    }
}

fn apply(op: u64, a: &Array, b: &Array) -> Array {
    match op {
        0 => a + b,
        1 => a * b,
        2 => a.sin().unwrap(),
        _ => lazulite::maximum(a, b.cos().unwrap()).unwrap(),
    }
}

/// Documented example: `incremental` — `c = a |> sin |> cos |> abs |> log |> sum' |> mul_scalar a |>
/// scalar_add b`. After changing `b`, only the last two nodes run (plus the zero-copy
/// broadcast of `b`): the product gave its buffer to the sum's output and is recomputed,
/// while the reduced scalar kept its value.
#[test]
fn owl_incremental_example() {
    let x = matrix(5, 50, 50);
    let a = placeholder(&[50, 50], DType::Float64).unwrap();
    let b = placeholder(&[], DType::Float64).unwrap();
    let s = a
        .sin()
        .unwrap()
        .cos()
        .unwrap()
        .abs()
        .unwrap()
        .log()
        .unwrap()
        .sum(lazulite::Axes::All, false)
        .unwrap();
    let c = lazulite::add(&b, lazulite::multiply(&a, &s).unwrap()).unwrap();
    drop(s);
    a.assign(&x).unwrap();
    b.assign(5.0).unwrap();
    c.eval().unwrap();
    let counts = |c: &Array| -> Vec<u64> {
        lazulite::evaluation_counts(&[c])
            .into_iter()
            .map(|(_, n)| n)
            .collect()
    };
    let names: Vec<String> = lazulite::evaluation_counts(&[&c])
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let first = counts(&c);
    assert!(first
        .iter()
        .zip(&names)
        .all(|(&n, name)| n == u64::from(name != "variable" && name != "const")));
    for value in [6.0, 7.0] {
        b.assign(value).unwrap();
        c.eval().unwrap();
        let eager_sum: f64 = x
            .to_vec::<f64>()
            .unwrap()
            .iter()
            .map(|v| v.sin().cos().abs().ln())
            .sum();
        let got = c.to_vec::<f64>().unwrap();
        for (g, v) in got.iter().zip(x.to_vec::<f64>().unwrap()) {
            assert!((g - (value + v * eager_sum)).abs() < 1e-9 * g.abs().max(1.0));
        }
    }
    let reran: Vec<&str> = names
        .iter()
        .zip(counts(&c).iter().zip(&first))
        .filter(|(_, (now, before))| now != before)
        .map(|(n, _)| n.as_str())
        .collect();
    // `a * s` kept its value: the final add does not reuse it while `b` can change alone.
    assert_eq!(
        reran,
        vec!["broadcast", "add"],
        "{:?}",
        lazulite::evaluation_counts(&[&c])
    );
}

/// Documented example: `print_graph` — `add x y |> dot x |> sin |> abs |> sum' |> add_scalar x |> log |>
/// atan2 y |> neg |> relu` exported to DOT; rendered with Graphviz when `dot` is installed.
#[test]
fn owl_print_graph_renders() {
    let x = placeholder(&[3, 3], DType::Float64).unwrap();
    let y = placeholder(&[3, 3], DType::Float64).unwrap();
    let h = lazulite::matmul(&x, &lazulite::add(&x, &y).unwrap()).unwrap();
    let s = h
        .sin()
        .unwrap()
        .abs()
        .unwrap()
        .sum(lazulite::Axes::All, false)
        .unwrap();
    let l = lazulite::add(&x, &s).unwrap().log().unwrap();
    let z = lazulite::maximum(lazulite::arctan2(&y, &l).unwrap().negative().unwrap(), 0.0).unwrap();
    let dir = std::env::temp_dir().join(format!("lazulite-dot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("plot_lazy.dot");
    lazulite::export_to_dot(&path, &[&z]).unwrap();
    let dot = std::fs::read_to_string(&path).unwrap();
    assert!(
        dot.contains("matmul") && dot.contains("arctan2") && dot.contains("variable"),
        "{dot}"
    );
    let rendered = std::process::Command::new("dot")
        .arg("-Tsvg")
        .arg(&path)
        .output();
    if let Ok(out) = rendered {
        assert!(
            out.status.success(),
            "dot failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("<svg"));
    }
    // The values agree with eager evaluation.
    let (xv, yv) = (matrix(6, 3, 3), matrix(7, 3, 3));
    x.assign(&xv).unwrap();
    y.assign(&yv).unwrap();
    let he = lazulite::matmul(&xv, &lazulite::add(&xv, &yv).unwrap()).unwrap();
    let se = he
        .sin()
        .unwrap()
        .abs()
        .unwrap()
        .sum(lazulite::Axes::All, false)
        .unwrap();
    let le = lazulite::add(&xv, &se).unwrap().log().unwrap();
    let ze = lazulite::maximum(
        lazulite::arctan2(&yv, &le).unwrap().negative().unwrap(),
        0.0,
    )
    .unwrap();
    assert_eq!(z.to_vec::<f64>().unwrap(), ze.to_vec::<f64>().unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Transforms of functions of placeholders build dataflow graphs too: the gradient and
/// the vmapped result follow re-assignments.
#[test]
fn transforms_over_placeholders_follow_assignments() {
    let x = placeholder(&[4], DType::Float64).unwrap();
    let g = lazulite::grad(|x: &Array| x.sin()?.sum(lazulite::Axes::All, false))(&x).unwrap();
    let doubled = lazulite::vmap(
        |p| Ok(vec![lazulite::multiply(&p[0], &p[0].exp()?)?]),
        vec![Some(0)],
        vec![Some(0)],
    );
    let v = doubled(std::slice::from_ref(&x)).unwrap().remove(0);
    for seed in [8, 9] {
        let value = matrix(seed, 1, 4).reshape(&[4]).unwrap();
        x.assign(&value).unwrap();
        let expected_g: Vec<f64> = value
            .to_vec::<f64>()
            .unwrap()
            .iter()
            .map(|v| v.cos())
            .collect();
        let expected_v: Vec<f64> = value
            .to_vec::<f64>()
            .unwrap()
            .iter()
            .map(|v| v * v.exp())
            .collect();
        for (a, b) in g.to_vec::<f64>().unwrap().iter().zip(&expected_g) {
            assert!((a - b).abs() < 1e-12);
        }
        for (a, b) in v.to_vec::<f64>().unwrap().iter().zip(&expected_v) {
            assert!((a - b).abs() < 1e-12);
        }
    }
}
