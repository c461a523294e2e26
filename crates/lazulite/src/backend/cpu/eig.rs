//! Eigen-decomposition of general square matrices in double precision, following LAPACK's
//! `geev`: balancing by permutation and diagonal scaling (`gebal`), Householder reduction to
//! upper Hessenberg form (`gehd2`), then for a real matrix the Francis double-shift QR
//! algorithm to real Schur form (`dlahqr`), for a complex one the single-shift complex QR
//! algorithm to triangular Schur form (`zlahqr`), both with their deflation test,
//! exceptional shifts and iteration budget; eigenvectors by back-substitution on the
//! (quasi-)triangular factor (`trevc`) and the unit-norm, largest-component-real
//! normalisation. Balancing, the Hessenberg reduction and the back-substitution are
//! written once over real and complex numbers.
//!
//! MLX hands its row-major buffer to column-major LAPACK, which therefore factors `aᵀ`
//! and returns left eigenvectors of `aᵀ`, whose conjugates are the right eigenvectors of
//! `a`. The kernel does the same so that eigenvalues come out in MLX's order and
//! eigenvectors with MLX's phases, and returns the conjugates (for complex input MLX
//! 0.32.4 returns the left eigenvectors themselves, eigenvectors of `conj(a)`).

use super::cx::Cx;
use super::dense::{per_matrix, store_complex, transposed, Batch, Scalar};
use crate::backend::Tensor;
use crate::error::{Error, Result};

/// QR iterations allowed per eigenvalue; the whole matrix gets this times `max(10, n)`.
const ITERATIONS_PER_EIGENVALUE: usize = 30;
/// Every this many iterations without a deflation, an exceptional shift breaks cycles.
const EXCEPTIONAL_SHIFT_PERIOD: usize = 10;
/// Back-substitution rescales its vector when an entry grows past this.
const GROWTH_LIMIT: f64 = 1e150;

/// Why a matrix has no decomposition.
#[derive(Debug, PartialEq)]
enum Failure {
    NotFinite,
    NoConvergence,
}

/// Eigenvalues and (if asked) eigenvectors of one matrix: `vectors` is row-major `n x n`
/// with the eigenvector of `values[j]` in column `j`.
struct Eigen {
    values: Vec<Cx>,
    vectors: Vec<Cx>,
}

/// Plane rotation `(x, y) <- (c x + s y, c y - s x)` (LAPACK's `rot`).
fn rotate(x: f64, y: f64, c: f64, s: f64) -> (f64, f64) {
    (c * x + s * y, c * y - s * x)
}

/// Householder reflector `H = I - tau [1 v] [1 v]ᴴ` with `Hᴴ (alpha, x) = (beta, 0)` and
/// `beta` real (LAPACK's `larfg`): overwrites `x` with `v`, returns `(beta, tau)`.
fn reflector<T: Scalar>(alpha: T, x: &mut [T]) -> (f64, T) {
    let xnorm = x.iter().fold(0.0f64, |acc, v| acc.hypot(v.abs()));
    let alpha_re = alpha.real_part();
    if xnorm == 0.0 && alpha == T::from_real(alpha_re) {
        return (alpha_re, T::ZERO);
    }
    let beta = -alpha.abs().hypot(xnorm).copysign(alpha_re);
    let tau = (T::from_real(beta) - alpha) / T::from_real(beta);
    let inv = T::ONE / (alpha - T::from_real(beta));
    for v in x.iter_mut() {
        *v = *v * inv;
    }
    (beta, tau)
}

/// How [`balance`] transformed a matrix: `h' = D⁻¹ Pᵀ h P D`, with `P` the row and
/// column exchanges `swaps` (in the order made) and `D` the diagonal `scale`.
struct Balancing {
    swaps: Vec<(usize, usize)>,
    scale: Vec<f64>,
}

impl Balancing {
    /// Maps an eigenvector of the balanced matrix's transpose back to the original's.
    fn undo(&self, x: &mut [Cx]) {
        for (v, s) in x.iter_mut().zip(&self.scale) {
            *v = v.scale(1.0 / s);
        }
        for &(i, j) in self.swaps.iter().rev() {
            x.swap(i, j);
        }
    }
}

/// Exchanges rows `i` and `j` and columns `i` and `j` of the `n x n` matrix `h`.
fn exchange<T: Scalar>(h: &mut [T], n: usize, i: usize, j: usize) {
    if i == j {
        return;
    }
    for r in 0..n {
        h.swap(r * n + i, r * n + j);
    }
    for c in 0..n {
        h.swap(i * n + c, j * n + c);
    }
}

/// Balances `h` as LAPACK's `gebal` with `job = 'B'`: permutes rows and columns that
/// isolate an eigenvalue to the bottom (rows) and left (columns), then scales the rest by
/// powers of two to even out row and column norms (exactly, so the eigenvalues keep
/// every bit).
fn balance<T: Scalar>(h: &mut [T], n: usize) -> Balancing {
    const RADIX: f64 = 2.0;
    let mut swaps = Vec::new();
    let mut scale = vec![1.0; n];
    if n == 0 {
        return Balancing { swaps, scale };
    }
    let (mut k, mut l) = (0, n - 1);
    // Rows whose off-diagonal entries in columns 0..=l are zero go to position l.
    let mut moved = true;
    while moved {
        moved = false;
        for i in (0..=l).rev() {
            if (0..=l).all(|j| j == i || h[i * n + j] == T::ZERO) {
                exchange(h, n, i, l);
                swaps.push((i, l));
                moved = true;
                if l == 0 {
                    return Balancing { swaps, scale };
                }
                l -= 1;
            }
        }
    }
    // Columns whose off-diagonal entries in rows k..=l are zero go to position k.
    moved = true;
    while moved {
        moved = false;
        // The range is fixed when the sweep starts (a Fortran DO loop) while k advances.
        let first = k;
        for j in first..=l {
            if (k..=l).all(|i| i == j || h[i * n + j] == T::ZERO) {
                exchange(h, n, j, k);
                swaps.push((j, k));
                moved = true;
                k += 1;
            }
        }
    }
    let sfmin1 = f64::MIN_POSITIVE / f64::EPSILON;
    let sfmax1 = 1.0 / sfmin1;
    let sfmin2 = sfmin1 * RADIX;
    let sfmax2 = 1.0 / sfmin2;
    let norm = |v: &mut dyn Iterator<Item = f64>| v.fold(0.0f64, |acc, x| acc.hypot(x));
    let mut unconverged = true;
    while unconverged {
        unconverged = false;
        for i in k..=l {
            let mut c = norm(&mut (k..=l).map(|r| h[r * n + i].abs()));
            let mut r = norm(&mut (k..=l).map(|j| h[i * n + j].abs()));
            let mut ca = (0..=l).fold(0.0f64, |m, j| m.max(h[j * n + i].abs()));
            let mut ra = (k..n).fold(0.0f64, |m, j| m.max(h[i * n + j].abs()));
            if c == 0.0 || r == 0.0 {
                continue;
            }
            let s = c + r;
            let mut g = r / RADIX;
            let mut f = 1.0f64;
            while c < g && f.max(c).max(ca) < sfmax2 && r.min(g).min(ra) > sfmin2 {
                f *= RADIX;
                c *= RADIX;
                ca *= RADIX;
                r /= RADIX;
                g /= RADIX;
                ra /= RADIX;
            }
            g = c / RADIX;
            while g >= r && r.max(ra) < sfmax2 && f.min(c).min(g).min(ca) > sfmin2 {
                f /= RADIX;
                c /= RADIX;
                g /= RADIX;
                ca /= RADIX;
                r *= RADIX;
                ra *= RADIX;
            }
            if c + r >= 0.95 * s
                || (f < 1.0 && scale[i] < 1.0 && f * scale[i] <= sfmin1)
                || (f > 1.0 && scale[i] > 1.0 && scale[i] >= sfmax1 / f)
            {
                continue;
            }
            scale[i] *= f;
            unconverged = true;
            for j in 0..n {
                h[i * n + j] = h[i * n + j].scale(1.0 / f);
                h[j * n + i] = h[j * n + i].scale(f);
            }
        }
    }
    Balancing { swaps, scale }
}

/// Reduces `h` to upper Hessenberg form `Qᴴ h Q` by Householder reflections (LAPACK's
/// `gehd2`), accumulating `Q` into `q` (which starts as the identity) if given. The
/// subdiagonal comes out real. Columns that balancing isolated need no reflection (their
/// reflectors are the identity), so the whole matrix is reduced.
fn hessenberg<T: Scalar>(h: &mut [T], n: usize, mut q: Option<&mut [T]>) {
    // The last column has nothing below its subdiagonal; its reflector is only the phase
    // that makes that entry real (the identity for a real matrix).
    for k in 0..n.saturating_sub(1) {
        let mut v: Vec<T> = (k + 2..n).map(|r| h[r * n + k]).collect();
        let (beta, tau) = reflector(h[(k + 1) * n + k], &mut v);
        h[(k + 1) * n + k] = T::from_real(beta);
        for r in k + 2..n {
            h[r * n + k] = T::ZERO;
        }
        if tau == T::ZERO {
            continue;
        }
        // The reflector acts on rows/columns k+1..n with vector u = [1, v]: m H subtracts
        // tau (m u) uᴴ, Hᴴ m subtracts conj(tau) u (uᴴ m).
        let u = |j: usize| if j == k + 1 { T::ONE } else { v[j - k - 2] };
        let right = |m: &mut [T], rows: usize| {
            for r in 0..rows {
                let dot: T = (k + 1..n).map(|j| m[r * n + j] * u(j)).sum();
                for j in k + 1..n {
                    m[r * n + j] = m[r * n + j] - tau * dot * u(j).conj();
                }
            }
        };
        right(h, n);
        for c in k + 1..n {
            let dot: T = (k + 1..n).map(|j| u(j).conj() * h[j * n + c]).sum();
            for j in k + 1..n {
                h[j * n + c] = h[j * n + c] - tau.conj() * dot * u(j);
            }
        }
        if let Some(q) = q.as_deref_mut() {
            right(q, n);
        }
    }
}

/// The standardised Schur factorisation of a real 2x2 block `[[a, b], [c, d]]` (LAPACK's
/// `lanv2`): the new block (upper triangular, or with equal diagonal and `b c < 0` when
/// its eigenvalues are complex), its eigenvalues, and the rotation `(cs, sn)` that made it.
fn standardise_block(a: f64, b: f64, c: f64, d: f64) -> ([f64; 4], [Cx; 2], f64, f64) {
    const MULTIPLIER: f64 = 4.0;
    let (mut a, mut b, mut c, mut d) = (a, b, c, d);
    let (mut cs, mut sn) = (1.0, 0.0);
    if c == 0.0 {
        // Already upper triangular.
    } else if b == 0.0 {
        // Lower triangular: swapping the two rows and columns makes it upper.
        cs = 0.0;
        sn = 1.0;
        std::mem::swap(&mut a, &mut d);
        b = -c;
        c = 0.0;
    } else if a - d == 0.0 && b.signum() != c.signum() {
        // Already standard: equal diagonal, complex eigenvalues.
    } else {
        let temp = a - d;
        let p = 0.5 * temp;
        let bcmax = b.abs().max(c.abs());
        let bcmis = b.abs().min(c.abs()) * b.signum() * c.signum();
        let scale = p.abs().max(bcmax);
        let mut z = p / scale * p + bcmax / scale * bcmis;
        if z >= MULTIPLIER * f64::EPSILON {
            // Real eigenvalues: the rotation makes the block upper triangular.
            z = p + (scale.sqrt() * z.sqrt()).copysign(p);
            a = d + z;
            d -= bcmax / z * bcmis;
            let tau = c.hypot(z);
            cs = z / tau;
            sn = c / tau;
            b -= c;
            c = 0.0;
        } else {
            // Complex or nearly equal real eigenvalues: equalise the diagonal.
            let sigma = b + c;
            let tau = sigma.hypot(temp);
            cs = (0.5 * (1.0 + sigma.abs() / tau)).sqrt();
            sn = -(p / (tau * cs)) * 1f64.copysign(sigma);
            let (aa, bb) = (a * cs + b * sn, -a * sn + b * cs);
            let (cc, dd) = (c * cs + d * sn, -c * sn + d * cs);
            a = aa * cs + cc * sn;
            b = bb * cs + dd * sn;
            c = -aa * sn + cc * cs;
            d = -bb * sn + dd * cs;
            let mean = 0.5 * (a + d);
            a = mean;
            d = mean;
            if c != 0.0 {
                if b != 0.0 {
                    if b.signum() == c.signum() {
                        // Real eigenvalues after all: one more rotation triangularises.
                        let sab = b.abs().sqrt();
                        let sac = c.abs().sqrt();
                        let p = (sab * sac).copysign(c);
                        let tau = 1.0 / (b + c).abs().sqrt();
                        a = mean + p;
                        d = mean - p;
                        b -= c;
                        c = 0.0;
                        let cs1 = sab * tau;
                        let sn1 = sac * tau;
                        let t = cs * cs1 - sn * sn1;
                        sn = cs * sn1 + sn * cs1;
                        cs = t;
                    }
                } else {
                    b = -c;
                    c = 0.0;
                    let t = cs;
                    cs = -sn;
                    sn = t;
                }
            }
        }
    }
    let wi = if c == 0.0 {
        0.0
    } else {
        b.abs().sqrt() * c.abs().sqrt()
    };
    ([a, b, c, d], [Cx::new(a, wi), Cx::new(d, -wi)], cs, sn)
}

/// Reduces the upper Hessenberg `h` to real Schur form by Francis double-shift QR steps
/// (LAPACK's `lahqr` on the whole matrix), updating `q` if given. Returns the eigenvalues
/// in diagonal order (a complex pair with positive imaginary part first), or `None` when
/// `budget * max(10, n)` iterations were not enough.
fn schur(h: &mut [f64], n: usize, mut q: Option<&mut [f64]>, budget: usize) -> Option<Vec<Cx>> {
    let mut values = vec![Cx::ZERO; n];
    if n == 0 {
        return Some(values);
    }
    let ulp = f64::EPSILON;
    let smlnum = f64::MIN_POSITIVE * (n as f64 / ulp);
    let itmax = budget * n.max(10);
    let at = |r: usize, c: usize| r * n + c;
    let mut stalled = 0;
    let mut i = n - 1;
    loop {
        let mut l = 0;
        let mut deflated = false;
        for _ in 0..=itmax {
            // Find the lowest negligible subdiagonal entry in rows l+1..=i.
            let mut k = i;
            while k > l {
                let sub = h[at(k, k - 1)].abs();
                if sub <= smlnum {
                    break;
                }
                let mut tst = h[at(k - 1, k - 1)].abs() + h[at(k, k)].abs();
                if tst == 0.0 {
                    if k >= 2 {
                        tst += h[at(k - 1, k - 2)].abs();
                    }
                    if k + 1 < n {
                        tst += h[at(k + 1, k)].abs();
                    }
                }
                if sub <= ulp * tst {
                    // Ahues & Tisseur's test: negligible relative to the 2x2 around it.
                    let sup = h[at(k - 1, k)].abs();
                    let (ab, ba) = (sub.max(sup), sub.min(sup));
                    let diff = (h[at(k - 1, k - 1)] - h[at(k, k)]).abs();
                    let hkk = h[at(k, k)].abs();
                    let (aa, bb) = (hkk.max(diff), hkk.min(diff));
                    let s = aa + ab;
                    if ba * (ab / s) <= smlnum.max(ulp * (bb * (aa / s))) {
                        break;
                    }
                }
                k -= 1;
            }
            l = k;
            if l > 0 {
                h[at(l, l - 1)] = 0.0;
            }
            if l + 1 >= i {
                deflated = true;
                break;
            }
            stalled += 1;
            let (h11, h12, h21, h22) = if stalled % (2 * EXCEPTIONAL_SHIFT_PERIOD) == 0 {
                let s = h[at(i, i - 1)].abs() + h[at(i - 1, i - 2)].abs();
                let d = 0.75 * s + h[at(i, i)];
                (d, -0.4375 * s, s, d)
            } else if stalled % EXCEPTIONAL_SHIFT_PERIOD == 0 {
                let s = h[at(l + 1, l)].abs() + h[at(l + 2, l + 1)].abs();
                let d = 0.75 * s + h[at(l, l)];
                (d, -0.4375 * s, s, d)
            } else {
                (
                    h[at(i - 1, i - 1)],
                    h[at(i - 1, i)],
                    h[at(i, i - 1)],
                    h[at(i, i)],
                )
            };
            // The shifts: the eigenvalues of the trailing 2x2 (the one nearer h22, twice,
            // when they are real).
            let s = h11.abs() + h12.abs() + h21.abs() + h22.abs();
            let (rt1r, rt1i, rt2r, rt2i) = if s == 0.0 {
                (0.0, 0.0, 0.0, 0.0)
            } else {
                let (h11, h12, h21, h22) = (h11 / s, h12 / s, h21 / s, h22 / s);
                let tr = (h11 + h22) / 2.0;
                let det = (h11 - tr) * (h22 - tr) - h12 * h21;
                let rtdisc = det.abs().sqrt();
                if det >= 0.0 {
                    (tr * s, rtdisc * s, tr * s, -rtdisc * s)
                } else {
                    let (a, b) = (tr + rtdisc, tr - rtdisc);
                    let shift = if (a - h22).abs() <= (b - h22).abs() {
                        a * s
                    } else {
                        b * s
                    };
                    (shift, 0.0, shift, 0.0)
                }
            };
            // Start the bulge where two consecutive subdiagonals are small enough.
            let mut m = i - 2;
            let mut v = [0.0f64; 3];
            loop {
                let h21s = h[at(m + 1, m)];
                let s = (h[at(m, m)] - rt2r).abs() + rt2i.abs() + h21s.abs();
                let h21s = h21s / s;
                v[0] = h21s * h[at(m, m + 1)] + (h[at(m, m)] - rt1r) * ((h[at(m, m)] - rt2r) / s)
                    - rt1i * (rt2i / s);
                v[1] = h21s * (h[at(m, m)] + h[at(m + 1, m + 1)] - rt1r - rt2r);
                v[2] = h21s * h[at(m + 2, m + 1)];
                let s = v[0].abs() + v[1].abs() + v[2].abs();
                for x in v.iter_mut() {
                    *x /= s;
                }
                if m == l {
                    break;
                }
                let h00 = h[at(m, m - 1)].abs() * (v[1].abs() + v[2].abs());
                let h01 = v[0].abs()
                    * (h[at(m - 1, m - 1)].abs() + h[at(m, m)].abs() + h[at(m + 1, m + 1)].abs());
                if h00 <= ulp * h01 {
                    break;
                }
                m -= 1;
            }
            // Chase the bulge down to row i.
            for k in m..i {
                let nr = 3.min(i - k + 1);
                if k > m {
                    for (r, x) in v.iter_mut().enumerate().take(nr) {
                        *x = h[at(k + r, k - 1)];
                    }
                }
                let (beta, t1) = reflector(v[0], &mut v[1..nr]);
                if k > m {
                    h[at(k, k - 1)] = beta;
                    h[at(k + 1, k - 1)] = 0.0;
                    if k + 2 <= i {
                        h[at(k + 2, k - 1)] = 0.0;
                    }
                } else if m > l {
                    // As LAPACK: not a sign flip, which goes wrong if v[1], v[2] underflow.
                    h[at(k, k - 1)] *= 1.0 - t1;
                }
                let w = [1.0, v[1], if nr == 3 { v[2] } else { 0.0 }];
                let t = [t1, t1 * w[1], t1 * w[2]];
                for j in k..n {
                    let sum: f64 = (0..nr).map(|r| w[r] * h[at(k + r, j)]).sum();
                    for r in 0..nr {
                        h[at(k + r, j)] -= sum * t[r];
                    }
                }
                for j in 0..=(k + 3).min(i) {
                    let sum: f64 = (0..nr).map(|r| w[r] * h[at(j, k + r)]).sum();
                    for r in 0..nr {
                        h[at(j, k + r)] -= sum * t[r];
                    }
                }
                if let Some(q) = q.as_deref_mut() {
                    for j in 0..n {
                        let sum: f64 = (0..nr).map(|r| w[r] * q[at(j, k + r)]).sum();
                        for r in 0..nr {
                            q[at(j, k + r)] -= sum * t[r];
                        }
                    }
                }
            }
        }
        if !deflated {
            return None;
        }
        if l == i {
            values[i] = Cx::real(h[at(i, i)]);
        } else {
            let (block, eigenvalues, cs, sn) = standardise_block(
                h[at(i - 1, i - 1)],
                h[at(i - 1, i)],
                h[at(i, i - 1)],
                h[at(i, i)],
            );
            h[at(i - 1, i - 1)] = block[0];
            h[at(i - 1, i)] = block[1];
            h[at(i, i - 1)] = block[2];
            h[at(i, i)] = block[3];
            values[i - 1] = eigenvalues[0];
            values[i] = eigenvalues[1];
            for j in i + 1..n {
                let (x, y) = rotate(h[at(i - 1, j)], h[at(i, j)], cs, sn);
                h[at(i - 1, j)] = x;
                h[at(i, j)] = y;
            }
            for j in 0..i - 1 {
                let (x, y) = rotate(h[at(j, i - 1)], h[at(j, i)], cs, sn);
                h[at(j, i - 1)] = x;
                h[at(j, i)] = y;
            }
            if let Some(q) = q.as_deref_mut() {
                for j in 0..n {
                    let (x, y) = rotate(q[at(j, i - 1)], q[at(j, i)], cs, sn);
                    q[at(j, i - 1)] = x;
                    q[at(j, i)] = y;
                }
            }
        }
        stalled = 0;
        if l == 0 {
            return Some(values);
        }
        i = l - 1;
    }
}

/// Solves `(r - lambda) z = 0` upwards from row `top - 1` for the upper triangular `r`
/// (quasi-triangular with standardised 2x2 blocks if real), the entries from `top` on
/// already set. Near-singular pivots are raised to `smin` (as LAPACK's `trevc`), growth
/// is rescaled away.
fn back_substitute<T: Scalar>(r: &[T], n: usize, lambda: Cx, z: &mut [Cx], top: usize, smin: f64) {
    let row_sum = |row: usize, z: &[Cx], from: usize| {
        (from..n).fold(Cx::ZERO, |acc, m| acc + r[row * n + m].times(z[m]))
    };
    let floor = |d: Cx| if d.abs() < smin { Cx::real(smin) } else { d };
    let mut j = top;
    while j > 0 {
        if j >= 2 && r[(j - 1) * n + j - 2] != T::ZERO {
            // Rows j-2, j-1 form a 2x2 block: solve its shifted 2x2 system.
            let (i0, i1) = (j - 2, j - 1);
            let b0 = Cx::ZERO - row_sum(i0, z, j);
            let b1 = Cx::ZERO - row_sum(i1, z, j);
            let p = r[i0 * n + i0].to_cx() - lambda;
            let q = r[i0 * n + i1].to_cx();
            let c = r[i1 * n + i0].to_cx();
            let s = r[i1 * n + i1].to_cx() - lambda;
            let det = floor(p * s - q * c);
            z[i0] = (s * b0 - q * b1) / det;
            z[i1] = (p * b1 - c * b0) / det;
            j -= 2;
        } else {
            let i0 = j - 1;
            let rhs = Cx::ZERO - row_sum(i0, z, j);
            z[i0] = rhs / floor(r[i0 * n + i0].to_cx() - lambda);
            j -= 1;
        }
        let largest = z.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        if largest > GROWTH_LIMIT {
            for x in z.iter_mut() {
                *x = x.scale(1.0 / largest);
            }
        }
    }
}

/// Reduces the upper Hessenberg `h` (real subdiagonal) to complex Schur form, upper
/// triangular, by single-shift QR steps (LAPACK's `zlahqr` on the whole matrix), updating
/// `q` if given. Returns the diagonal, or `None` when `budget * max(10, n)` iterations
/// were not enough. Each step leaves the subdiagonal real again, which the shifts and the
/// deflation test rely on.
fn complex_schur(
    h: &mut [Cx],
    n: usize,
    mut q: Option<&mut [Cx]>,
    budget: usize,
) -> Option<Vec<Cx>> {
    let mut values = vec![Cx::ZERO; n];
    if n == 0 {
        return Some(values);
    }
    let ulp = f64::EPSILON;
    let smlnum = f64::MIN_POSITIVE * (n as f64 / ulp);
    let itmax = budget * n.max(10);
    let at = |r: usize, c: usize| r * n + c;
    let mut stalled = 0;
    let mut i = n - 1;
    loop {
        let mut l = 0;
        let mut deflated = false;
        for _ in 0..=itmax {
            // Find the lowest negligible subdiagonal entry in rows l+1..=i.
            let mut k = i;
            while k > l {
                let sub = h[at(k, k - 1)];
                if sub.abs1() <= smlnum {
                    break;
                }
                let mut tst = h[at(k - 1, k - 1)].abs1() + h[at(k, k)].abs1();
                if tst == 0.0 {
                    if k >= 2 {
                        tst += h[at(k - 1, k - 2)].re.abs();
                    }
                    if k + 1 < n {
                        tst += h[at(k + 1, k)].re.abs();
                    }
                }
                if sub.re.abs() <= ulp * tst {
                    // Ahues & Tisseur's test: negligible relative to the 2x2 around it.
                    let sup = h[at(k - 1, k)].abs1();
                    let (ab, ba) = (sub.abs1().max(sup), sub.abs1().min(sup));
                    let diff = (h[at(k - 1, k - 1)] - h[at(k, k)]).abs1();
                    let hkk = h[at(k, k)].abs1();
                    let (aa, bb) = (hkk.max(diff), hkk.min(diff));
                    let s = aa + ab;
                    if ba * (ab / s) <= smlnum.max(ulp * (bb * (aa / s))) {
                        break;
                    }
                }
                k -= 1;
            }
            l = k;
            if l > 0 {
                h[at(l, l - 1)] = Cx::ZERO;
            }
            if l >= i {
                deflated = true;
                break;
            }
            stalled += 1;
            let shift = if stalled % (2 * EXCEPTIONAL_SHIFT_PERIOD) == 0 {
                Cx::real(0.75 * h[at(i, i - 1)].re.abs()) + h[at(i, i)]
            } else if stalled % EXCEPTIONAL_SHIFT_PERIOD == 0 {
                Cx::real(0.75 * h[at(l + 1, l)].re.abs()) + h[at(l, l)]
            } else {
                wilkinson_shift(
                    h[at(i - 1, i - 1)],
                    h[at(i - 1, i)],
                    h[at(i, i - 1)],
                    h[at(i, i)],
                )
            };
            // Start the step where two consecutive subdiagonals are small enough.
            let mut m = i - 1;
            let mut v = loop {
                let (h11, h22) = (h[at(m, m)], h[at(m + 1, m + 1)]);
                let h11s = h11 - shift;
                let h21 = h[at(m + 1, m)].re;
                let s = h11s.abs1() + h21.abs();
                let v = [h11s / Cx::real(s), Cx::real(h21 / s)];
                if m == l {
                    break v;
                }
                let h10 = h[at(m, m - 1)].re;
                if h10.abs() * v[1].re.abs() <= ulp * (v[0].abs1() * (h11.abs1() + h22.abs1())) {
                    break v;
                }
                m -= 1;
            };
            // Chase the bulge down to row i.
            for k in m..i {
                if k > m {
                    v = [h[at(k, k - 1)], h[at(k + 1, k - 1)]];
                }
                let (beta, t1) = reflector(v[0], &mut v[1..]);
                if k > m {
                    h[at(k, k - 1)] = Cx::real(beta);
                    h[at(k + 1, k - 1)] = Cx::ZERO;
                }
                let v2 = v[1];
                let t2 = (t1 * v2).re;
                for j in k..n {
                    let sum = t1.conj() * h[at(k, j)] + h[at(k + 1, j)].scale(t2);
                    h[at(k, j)] = h[at(k, j)] - sum;
                    h[at(k + 1, j)] = h[at(k + 1, j)] - sum * v2;
                }
                let right = |m: &mut [Cx], rows: usize| {
                    for j in 0..rows {
                        let sum = t1 * m[at(j, k)] + m[at(j, k + 1)].scale(t2);
                        m[at(j, k)] = m[at(j, k)] - sum;
                        m[at(j, k + 1)] = m[at(j, k + 1)] - sum * v2.conj();
                    }
                };
                right(h, (k + 3).min(i + 1));
                if let Some(q) = q.as_deref_mut() {
                    right(q, n);
                }
                if k == m && m > l {
                    // The step started below l: a diagonal unitary scaling keeps h[m][m-1]
                    // real.
                    let temp = Cx::real(1.0) - t1;
                    let temp = temp / Cx::real(temp.abs());
                    h[at(m + 1, m)] = h[at(m + 1, m)] * temp.conj();
                    if m + 2 <= i {
                        h[at(m + 2, m + 1)] = h[at(m + 2, m + 1)] * temp;
                    }
                    for j in (m..=i).filter(|&j| j != m + 1) {
                        scale_row_and_column(h, n, j, temp, q.as_deref_mut());
                    }
                }
            }
            // Make h[i][i-1] real by the same kind of scaling.
            let sub = h[at(i, i - 1)];
            if sub.im != 0.0 {
                let radius = sub.abs();
                h[at(i, i - 1)] = Cx::real(radius);
                let phase = sub / Cx::real(radius);
                scale_row_and_column(h, n, i, phase.conj(), q.as_deref_mut());
            }
        }
        if !deflated {
            return None;
        }
        values[i] = h[at(i, i)];
        stalled = 0;
        if l == 0 {
            return Some(values);
        }
        i = l - 1;
    }
}

/// Scales row `j` of `h` right of the diagonal by `phase` and column `j` above it (and
/// column `j` of `q`) by its conjugate: a unitary similarity that leaves the diagonal
/// and the entries next to it alone.
fn scale_row_and_column(h: &mut [Cx], n: usize, j: usize, phase: Cx, q: Option<&mut [Cx]>) {
    for c in j + 1..n {
        h[j * n + c] = h[j * n + c] * phase;
    }
    for r in 0..j {
        h[r * n + j] = h[r * n + j] * phase.conj();
    }
    if let Some(q) = q {
        for r in 0..n {
            q[r * n + j] = q[r * n + j] * phase.conj();
        }
    }
}

/// Wilkinson's shift for the trailing 2x2 block `[[a, b], [c, d]]`: its eigenvalue nearer
/// `d`, computed as `zlahqr` does to avoid cancellation.
fn wilkinson_shift(a: Cx, b: Cx, c: Cx, d: Cx) -> Cx {
    let u = b.sqrt() * c.sqrt();
    let s = u.abs1();
    if s == 0.0 {
        return d;
    }
    let x = (a - d).scale(0.5);
    let sx = x.abs1();
    let s = s.max(sx);
    let (xs, us) = (x / Cx::real(s), u / Cx::real(s));
    let mut y = (xs * xs + us * us).sqrt().scale(s);
    if sx > 0.0 {
        let direction = x / Cx::real(sx);
        if direction.re * y.re + direction.im * y.im < 0.0 {
            y = Cx::ZERO - y;
        }
    }
    d - u * (u / (x + y))
}

/// The kinds of matrix decomposed here, by the Schur form each reduces to.
trait GeneralMatrix: Scalar {
    /// Reduces the upper Hessenberg `h` to Schur form (updating `q` if given) and returns
    /// its eigenvalues in diagonal order, or `None` when `budget` ran out.
    fn schur(h: &mut [Self], n: usize, q: Option<&mut [Self]>, budget: usize) -> Option<Vec<Cx>>;

    /// How `geev` makes the largest entry of a unit eigenvector real: `pair` for the
    /// vector of a real matrix's complex conjugate pair.
    fn largest_entry(pair: bool) -> LargestEntry;
}

impl GeneralMatrix for f64 {
    fn schur(h: &mut [f64], n: usize, q: Option<&mut [f64]>, budget: usize) -> Option<Vec<Cx>> {
        schur(h, n, q, budget)
    }

    fn largest_entry(pair: bool) -> LargestEntry {
        // dgeev leaves real eigenvectors alone and rotates a pair's vector with `dlartg`,
        // which keeps the sign of the entry's real part.
        if pair {
            LargestEntry::RealWithSign
        } else {
            LargestEntry::Unchanged
        }
    }
}

impl GeneralMatrix for Cx {
    fn schur(h: &mut [Cx], n: usize, q: Option<&mut [Cx]>, budget: usize) -> Option<Vec<Cx>> {
        complex_schur(h, n, q, budget)
    }

    fn largest_entry(_: bool) -> LargestEntry {
        LargestEntry::RealPositive
    }
}

/// What [`normalise`] does to the largest entry (the first, on ties) of a unit vector.
#[derive(Clone, Copy)]
enum LargestEntry {
    Unchanged,
    /// Real, with the sign of its real part.
    RealWithSign,
    /// Real and positive.
    RealPositive,
}

/// Unit 2-norm, then the phase rotation `largest` asks for.
fn normalise(x: &mut [Cx], largest: LargestEntry) {
    let norm = x.iter().fold(0.0f64, |acc, v| acc.hypot(v.abs()));
    if norm > 0.0 {
        for v in x.iter_mut() {
            *v = v.scale(1.0 / norm);
        }
    }
    if matches!(largest, LargestEntry::Unchanged) || x.is_empty() {
        return;
    }
    let mut k = 0;
    let mut best = -1.0;
    for (i, v) in x.iter().enumerate() {
        let m = v.re * v.re + v.im * v.im;
        if m > best {
            best = m;
            k = i;
        }
    }
    let radius = match largest {
        LargestEntry::RealPositive => best.sqrt(),
        _ => x[k].abs(),
    };
    if radius == 0.0 {
        return;
    }
    let r = match largest {
        LargestEntry::RealPositive => radius,
        _ => radius.copysign(x[k].re),
    };
    let phase = Cx::new(x[k].re / r, -x[k].im / r);
    for v in x.iter_mut() {
        *v = *v * phase;
    }
    x[k].im = 0.0;
}

/// Eigenvalues and, if `vectors`, unit eigenvectors of the row-major `n x n` matrix `a`.
fn general_eigen<T: GeneralMatrix>(
    a: &[T],
    n: usize,
    vectors: bool,
) -> std::result::Result<Eigen, Failure> {
    general_eigen_within(a, n, vectors, ITERATIONS_PER_EIGENVALUE)
}

fn general_eigen_within<T: GeneralMatrix>(
    a: &[T],
    n: usize,
    vectors: bool,
    budget: usize,
) -> std::result::Result<Eigen, Failure> {
    if a.iter().any(|x| !x.is_finite()) {
        return Err(Failure::NotFinite);
    }
    // LAPACK's view of the row-major buffer: b = aᵀ, balanced to b' = D⁻¹ Pᵀ b P D = q t qᴴ.
    let mut t = transposed(a, n, n);
    let balancing = balance(&mut t, n);
    let mut q: Vec<T> = if vectors {
        (0..n * n)
            .map(|idx| if idx % (n + 1) == 0 { T::ONE } else { T::ZERO })
            .collect()
    } else {
        Vec::new()
    };
    let mut q_ref = if vectors {
        Some(q.as_mut_slice())
    } else {
        None
    };
    hessenberg(&mut t, n, q_ref.as_deref_mut());
    let values = T::schur(&mut t, n, q_ref, budget).ok_or(Failure::NoConvergence)?;
    if !vectors {
        return Ok(Eigen {
            values,
            vectors: Vec::new(),
        });
    }
    // geev's left eigenvector u of b (uᴴ b = λ uᴴ) gives a ū = λ ū: the right eigenvector
    // of a is x = ū = P D⁻¹ q̄ y with tᵀ y = λ y. Reversing the order of the indices
    // (y = J z) turns the lower (quasi-)triangular tᵀ into the upper r = J tᵀ J.
    let r: Vec<T> = (0..n * n)
        .map(|idx| t[(n - 1 - idx % n) * n + (n - 1 - idx / n)])
        .collect();
    let smlnum = f64::MIN_POSITIVE * (n as f64 / f64::EPSILON);
    let mut out = vec![Cx::ZERO; n * n];
    let mut k = 0;
    while k < n {
        let lambda = values[k];
        // Only a real Schur form has 2x2 blocks (a conjugate pair, positive part first).
        let pair = k + 1 < n && t[(k + 1) * n + k] != T::ZERO;
        let mut z = vec![Cx::ZERO; n];
        // The block's own entries as LAPACK's left-eigenvector `trevc` sets them,
        // conjugated.
        let top = if pair {
            let (b, c) = (t[k * n + k + 1].real_part(), t[(k + 1) * n + k].real_part());
            let w = lambda.im;
            let (yk, yk1) = if b.abs() >= c.abs() {
                (Cx::real(w / b), Cx::new(0.0, -1.0))
            } else {
                (Cx::real(1.0), Cx::new(0.0, w / c))
            };
            z[n - 1 - k] = yk;
            z[n - 2 - k] = yk1;
            n - 2 - k
        } else {
            z[n - 1 - k] = Cx::real(1.0);
            n - 1 - k
        };
        let smin = (f64::EPSILON * (lambda.re.abs() + lambda.im.abs())).max(smlnum);
        back_substitute(&r, n, lambda, &mut z, top, smin);
        let mut x: Vec<Cx> = (0..n)
            .map(|i| {
                (0..n).fold(Cx::ZERO, |acc, j| {
                    acc + q[i * n + j].conj().times(z[n - 1 - j])
                })
            })
            .collect();
        balancing.undo(&mut x);
        normalise(&mut x, T::largest_entry(pair));
        for (i, v) in x.iter().enumerate() {
            out[i * n + k] = *v;
            if pair {
                out[i * n + k + 1] = v.conj();
            }
        }
        k += if pair { 2 } else { 1 };
    }
    Ok(Eigen {
        values,
        vectors: out,
    })
}

/// Eigenvalues (`[..., n]`) and, if `vectors`, unit eigenvectors (`[..., n, n]`, as
/// columns) of each matrix of `a` (`[..., n, n]`, float32, float64 or complex64), both
/// complex64. `op` names the operation in errors: input with infinities or NaNs is a
/// value error (as NumPy's `LinAlgError`), a QR iteration that does not converge a
/// runtime error.
pub fn eig(a: &Tensor, vectors: bool, op: &str) -> Result<Vec<Tensor>> {
    if a.dtype.is_complex() {
        decompose::<Cx>(a, vectors, op)
    } else {
        decompose::<f64>(a, vectors, op)
    }
}

fn decompose<T: GeneralMatrix>(a: &Tensor, vectors: bool, op: &str) -> Result<Vec<Tensor>> {
    let batch = Batch::<T>::read(a);
    let n = batch.rows;
    let parts = per_matrix(batch.count, |i| general_eigen(batch.matrix(i), n, vectors));
    let (mut ws, mut vs) = (Vec::new(), Vec::new());
    for part in parts {
        let part = part.map_err(|failure| match failure {
            Failure::NotFinite => Error::value(format!(
                "[linalg::{op}] Array must not contain infs or NaNs."
            )),
            Failure::NoConvergence => {
                Error::runtime(format!("[linalg::{op}] The QR algorithm did not converge."))
            }
        })?;
        ws.extend(part.values);
        vs.extend(part.vectors);
    }
    let mut out = vec![store_complex(&a.shape[..a.ndim() - 1], &ws)?];
    if vectors {
        out.push(store_complex(&a.shape, &vs)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn residual<T: Scalar>(a: &[T], n: usize, e: &Eigen) -> f64 {
        let mut worst = 0.0f64;
        for j in 0..n {
            for i in 0..n {
                let av = (0..n).fold(Cx::ZERO, |acc, k| {
                    acc + a[i * n + k].times(e.vectors[k * n + j])
                });
                worst = worst.max((av - e.vectors[i * n + j] * e.values[j]).abs());
            }
        }
        worst
    }

    #[test]
    fn rotation_has_conjugate_eigenvalues_and_vectors() {
        let a = [0.0, -1.0, 1.0, 0.0];
        let e = general_eigen(&a, 2, true).unwrap();
        assert_eq!(e.values, vec![Cx::new(0.0, 1.0), Cx::new(0.0, -1.0)]);
        assert!(residual(&a, 2, &e) < 1e-15);
        assert_eq!(e.vectors[1], e.vectors[0].conj());
    }

    #[test]
    fn decomposes_a_cyclic_permutation() {
        // Plain double-shift QR stalls on this matrix; exceptional shifts break the cycle.
        let a = [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0];
        let e = general_eigen(&a, 3, true).unwrap();
        assert!(residual(&a, 3, &e) < 1e-14);
        let mut prod = Cx::real(1.0);
        for v in &e.values {
            prod = prod * *v;
        }
        assert!((prod - Cx::real(1.0)).abs() < 1e-14);
    }

    #[test]
    fn stops_when_the_iteration_budget_runs_out() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0];
        let result = general_eigen_within(&a, 3, false, 0);
        assert_eq!(result.err(), Some(Failure::NoConvergence));
        assert!(general_eigen(&a, 3, false).is_ok());
    }

    #[test]
    fn rejects_non_finite_input() {
        let e = general_eigen(&[1.0, f64::NAN, 0.0, 1.0], 2, true);
        assert_eq!(e.err(), Some(Failure::NotFinite));
    }

    /// A complex matrix without structure.
    fn complex_matrix(n: usize) -> Vec<Cx> {
        (0..n * n)
            .map(|i| {
                Cx::new(
                    ((i * 7 + 3) % 11) as f64 - 5.0,
                    ((i * 5 + 1) % 13) as f64 - 6.0,
                )
            })
            .collect()
    }

    #[test]
    fn complex_schur_form_is_a_triangular_unitary_similarity() {
        let n = 5;
        let a = complex_matrix(n);
        let mut t = a.clone();
        let mut q: Vec<Cx> = (0..n * n)
            .map(|i| if i % (n + 1) == 0 { Cx::ONE } else { Cx::ZERO })
            .collect();
        hessenberg(&mut t, n, Some(&mut q));
        let values = complex_schur(&mut t, n, Some(&mut q), ITERATIONS_PER_EIGENVALUE).unwrap();
        for i in 0..n {
            assert_eq!(values[i], t[i * n + i]);
            for j in 0..i {
                assert_eq!(t[i * n + j], Cx::ZERO, "({i}, {j})");
            }
        }
        // q t qᴴ = a.
        for i in 0..n {
            for j in 0..n {
                let entry = (0..n)
                    .flat_map(|k| (0..n).map(move |l| (k, l)))
                    .fold(Cx::ZERO, |acc, (k, l)| {
                        acc + q[i * n + k] * t[k * n + l] * q[j * n + l].conj()
                    });
                assert!((entry - a[i * n + j]).abs() < 1e-13, "({i}, {j})");
            }
        }
    }

    #[test]
    fn complex_eigenvectors_have_a_positive_largest_entry() {
        let n = 6;
        let a = complex_matrix(n);
        let e = general_eigen(&a, n, true).unwrap();
        assert!(residual(&a, n, &e) < 1e-13);
        for j in 0..n {
            let column: Vec<Cx> = (0..n).map(|i| e.vectors[i * n + j]).collect();
            let largest =
                column
                    .iter()
                    .copied()
                    .fold(Cx::ZERO, |m, x| if x.abs() > m.abs() { x } else { m });
            assert!(largest.im == 0.0 && largest.re > 0.0, "{largest:?}");
        }
        let values = general_eigen(&a, n, false).unwrap().values;
        assert_eq!(values, e.values);
    }

    #[test]
    fn complex_input_fails_as_real_input() {
        let a = complex_matrix(3);
        let result = general_eigen_within(&a, 3, false, 0);
        assert_eq!(result.err(), Some(Failure::NoConvergence));
        let e = general_eigen(
            &[Cx::ONE, Cx::new(0.0, f64::INFINITY), Cx::ZERO, Cx::ONE],
            2,
            true,
        );
        assert_eq!(e.err(), Some(Failure::NotFinite));
    }
}
