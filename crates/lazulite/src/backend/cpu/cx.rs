//! Complex numbers of two `f64`, in which the factorisation kernels compute complex
//! results (and complex64 input) before rounding once to complex64.

use std::iter::Sum;
use std::ops::{Add, Div, Mul, Sub};

/// A complex number of two `f64`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Cx {
    pub re: f64,
    pub im: f64,
}

impl Cx {
    pub const ZERO: Cx = Cx { re: 0.0, im: 0.0 };

    pub fn new(re: f64, im: f64) -> Cx {
        Cx { re, im }
    }

    pub fn real(re: f64) -> Cx {
        Cx { re, im: 0.0 }
    }

    pub fn abs(self) -> f64 {
        self.re.hypot(self.im)
    }

    pub fn conj(self) -> Cx {
        Cx::new(self.re, -self.im)
    }

    pub fn scale(self, s: f64) -> Cx {
        Cx::new(self.re * s, self.im * s)
    }

    /// `|re| + |im|`, LAPACK's cheap modulus (`cabs1`) for tests and pivots.
    pub fn abs1(self) -> f64 {
        self.re.abs() + self.im.abs()
    }

    /// The principal square root (non-negative real part), as Fortran's `SQRT`.
    pub fn sqrt(self) -> Cx {
        if self.re == 0.0 && self.im == 0.0 {
            return Cx::new(0.0, self.im);
        }
        // sqrt((|z| + |re|) / 2) is the larger part; the other follows without cancellation.
        let t = ((self.abs() + self.re.abs()) / 2.0).sqrt();
        if self.re >= 0.0 {
            Cx::new(t, self.im / (2.0 * t))
        } else {
            Cx::new(self.im.abs() / (2.0 * t), t.copysign(self.im))
        }
    }
}

impl Add for Cx {
    type Output = Cx;
    fn add(self, o: Cx) -> Cx {
        Cx::new(self.re + o.re, self.im + o.im)
    }
}

impl Sum for Cx {
    fn sum<I: Iterator<Item = Cx>>(iter: I) -> Cx {
        iter.fold(Cx::ZERO, |acc, x| acc + x)
    }
}

impl Sub for Cx {
    type Output = Cx;
    fn sub(self, o: Cx) -> Cx {
        Cx::new(self.re - o.re, self.im - o.im)
    }
}

impl Mul for Cx {
    type Output = Cx;
    fn mul(self, o: Cx) -> Cx {
        Cx::new(
            self.re * o.re - self.im * o.im,
            self.re * o.im + self.im * o.re,
        )
    }
}

impl Div for Cx {
    type Output = Cx;
    /// Smith's algorithm: no overflow from squaring the divisor.
    fn div(self, o: Cx) -> Cx {
        if o.re.abs() >= o.im.abs() {
            let r = o.im / o.re;
            let d = o.re + o.im * r;
            Cx::new((self.re + self.im * r) / d, (self.im - self.re * r) / d)
        } else {
            let r = o.re / o.im;
            let d = o.re * r + o.im;
            Cx::new((self.re * r + self.im) / d, (self.im * r - self.re) / d)
        }
    }
}
