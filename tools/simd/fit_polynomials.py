"""Fits the polynomial coefficients of the f32 SIMD math kernels
(crates/lazulite/src/backend/cpu/simd/math.rs).

Each polynomial approximates the part of a function left after its exact leading terms,
fitted for near-minimax *relative* error of the whole function by Lawson's iteratively
reweighted least squares on a dense grid, then rounded to f32. Prints the coefficients
(highest degree first, for Horner) and the f64 max relative error with the f32 constants.

Run: python tools/simd/fit_polynomials.py
"""
import math

import numpy as np

erf = np.vectorize(math.erf)
erfc = np.vectorize(math.erfc)


def lawson(basis, target, weight, iterations):
    u = np.full(len(target), 1.0 / len(target))
    for _ in range(iterations):
        w = np.sqrt(u) * weight
        c, *_ = np.linalg.lstsq(basis * w[:, None], target * w, rcond=None)
        u *= np.abs(weight * (basis @ c - target))
        u /= u.sum()
    return c


def fit(name, x, var, target, weight, degree, iterations=150):
    """min over c of max |weight * (sum c_k var^k - target)|, coefficients as f32.

    Coefficients are rounded to f32 one at a time from the lowest degree, refitting the
    higher ones after each rounding so that they absorb the rounding error."""
    basis = np.vander(var, degree + 1, increasing=True)
    fixed = []
    for k in range(degree + 1):
        rest = target - basis[:, :k] @ np.array(fixed) if fixed else target
        c = lawson(basis[:, k:], rest, weight, iterations)
        fixed.append(float(np.float32(c[0])))
    c32 = np.array(fixed)
    err32 = np.max(np.abs(weight * (basis @ c32 - target)))
    coeffs = ", ".join(f"{v:.9e}" for v in c32.astype(np.float32)[::-1])
    print(f"{name} (deg {degree}, rel err {err32:.2e} = {err32 / 2**-24:.3f} ulp): [{coeffs}]")


def grid(lo, hi, n=20001):
    x = np.linspace(lo, hi, n)
    return x[x != 0]


# exp(r) = 1 + r + r^2 P(r) and expm1(r) = r + r^2 P(r) on |r| <= ln2/2; weighted for
# expm1 (the stricter of the two).
r = grid(-math.log(2) / 2, math.log(2) / 2)
fit("EXPM1", r, r, (np.expm1(r) - r) / r**2, r**2 / np.abs(np.expm1(r)), 5)

# log(1 + f) = f - f^2/2 + f^3 P(f) on sqrt(1/2) - 1 <= f <= sqrt(2) - 1.
f = grid(math.sqrt(0.5) - 1, math.sqrt(2) - 1)
fit("LOG", f, f, (np.log1p(f) - f + f * f / 2) / f**3, np.abs(f**3 / np.log1p(f)), 7)

# sin(r) = r + r^3 P(r^2), cos(r) = 1 - r^2/2 + r^4 P(r^2), tan(r) = r + r^3 P(r^2)
# on |r| <= pi/4.
r = grid(1e-4, math.pi / 4)
fit("SIN", r, r * r, (np.sin(r) - r) / r**3, r**3 / np.sin(r), 3)
fit("COS", r, r * r, (np.cos(r) - 1 + r * r / 2) / r**4, r**4 / np.cos(r), 3)
fit("TAN", r, r * r, (np.tan(r) - r) / r**3, r**3 / np.tan(r), 6)

# tanh(x) = x + x^3 P(x^2) on |x| <= 0.625; sinh(x) = x + x^3 P(x^2) on |x| <= 1.
x = grid(1e-4, 0.625)
fit("TANH", x, x * x, (np.tanh(x) - x) / x**3, x**3 / np.tanh(x), 5)
x = grid(1e-4, 1.0)
fit("SINH", x, x * x, (np.sinh(x) - x) / x**3, x**3 / np.sinh(x), 4)

# atan(t) = t + t^3 P(t^2) on 0 <= t <= 1.
t = grid(1e-4, 1.0)
fit("ATAN", t, t * t, (np.arctan(t) - t) / t**3, t**3 / np.arctan(t), 9)

# asin(s) = s + s^3 P(s^2) on 0 <= s <= 1/2.
s = grid(1e-4, 0.5)
fit("ASIN", s, s * s, (np.arcsin(s) - s) / s**3, s**3 / np.arcsin(s), 4)

# erf(a) = a + a P(a^2) on 0 <= a <= 1 (P(0) = 2/sqrt(pi) - 1).
a = grid(1e-4, 1.0)
fit("ERF", a, a * a, erf(a) / a - 1, a / erf(a), 6)

# erf(a) = 1 - exp(-a^2) P(1/a) on 1 <= a <= 4; the error that matters is absolute on erf.
a = grid(1.0, 4.0)

fit("ERFC", a, 1 / a, erfc(a) * np.exp(a * a), np.exp(-a * a), 8)


# erfinv: polynomials evaluated in f64 lanes, so the coefficients stay f64.
def erfinv_reference(y):
    """erfinv in float64: Newton steps on erf, on erfc above 0.5 (accurate residual near 1)."""
    w = -math.log((1 - y) * (1 + y))
    x = math.copysign(math.sqrt(max(w - math.log(w) - math.log(math.pi), 1e-300)), y) if w > 2 else 0.886 * y
    for _ in range(60):
        if abs(y) > 0.5:
            step = (math.erfc(abs(x)) - (1 - abs(y))) / (-2 / math.sqrt(math.pi) * math.exp(-x * x))
            x = math.copysign(abs(x) - step, y)
        else:
            x -= (math.erf(x) - y) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
    return x


def fit64(name, var, target, degree, iterations=200):
    basis = np.vander(var, degree + 1, increasing=True)
    c = lawson(basis, target, np.ones_like(target), iterations)
    err = np.max(np.abs(basis @ c - target))
    print(f"{name} (deg {degree}, rel err {err:.2e}): [{', '.join(repr(float(v)) for v in c[::-1])}]")


erfinv_v = np.vectorize(erfinv_reference)
# erfinv(y) = y P(w - 2.5) for w = -log(1 - y^2) <= 5 (fitted a little past 5).
y = np.concatenate([np.linspace(1e-6, 0.9, 20001), 1 - np.geomspace(1e-1, 1 - math.sqrt(1 - math.exp(-5.2)), 20001)])
w = -np.log1p(-y * y)
y, w = y[w <= 5.2], w[w <= 5.2]
fit64("ERFINV_CENTRAL", w - 2.5, erfinv_v(y) / y, 10)
# erfinv(y) = y Q(sqrt(w) - 3) for 5 <= w <= 16 (|y| up to 1 - 2^-24; fitted from 4.9).
t = np.geomspace(2.0**-25, 1 - math.sqrt(1 - math.exp(-4.9)), 40001)
y = 1 - t
w = -np.log(t * (2 - t))
fit64("ERFINV_TAIL", np.sqrt(w) - 3, erfinv_v(y) / y, 10)
