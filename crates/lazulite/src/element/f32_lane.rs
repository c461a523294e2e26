//! The 16-bit float formats computed through f32, with conversions written in integer and
//! float operations only, so that a loop over them becomes vector code.
//!
//! Why not `half`'s own per-value conversions: they branch on the value's class (and reach
//! F16C only when the whole build targets it), so every elementwise kernel on float16 or
//! bfloat16 ran one value at a time: a float16 product of 65,536 values took 309 µs, a
//! float32 one 13. Results are the same bit for bit: round to nearest even, NaNs quiet
//! with their payload kept, as `half` gives them.

use half::{bf16, f16};

/// A float type whose arithmetic runs in f32: f32 itself, float16 and bfloat16.
pub(crate) trait F32Lane: Copy {
    /// The exact f32 value.
    fn widen(self) -> f32;
    /// The nearest value of this type (ties to even).
    fn narrow(v: f32) -> Self;
}

impl F32Lane for f32 {
    #[inline(always)]
    fn widen(self) -> f32 {
        self
    }

    #[inline(always)]
    fn narrow(v: f32) -> f32 {
        v
    }
}

impl F32Lane for f16 {
    #[inline(always)]
    fn widen(self) -> f32 {
        f16_to_f32(self.to_bits())
    }

    #[inline(always)]
    fn narrow(v: f32) -> f16 {
        f16::from_bits(f32_to_f16(v))
    }
}

impl F32Lane for bf16 {
    #[inline(always)]
    fn widen(self) -> f32 {
        let bits = self.to_bits();
        let quiet = if bits & 0x7fff > 0x7f80 { 0x40 } else { 0 };
        f32::from_bits(u32::from(bits | quiet) << 16)
    }

    #[inline(always)]
    fn narrow(v: f32) -> bf16 {
        let x = v.to_bits();
        // Adding 0x7fff, plus one when the kept part is odd, carries into the kept part
        // exactly when the dropped part is over half, or half and the kept part odd.
        let nearest = x.wrapping_add(0x7fff + ((x >> 16) & 1)) >> 16;
        let quiet_nan = (x >> 16) | 0x40;
        let is_nan = x & 0x7fff_ffff > 0x7f80_0000;
        bf16::from_bits(if is_nan { quiet_nan } else { nearest } as u16)
    }
}

/// The float16 with bits `h` as f32: the exponent is rebiased; infinities and NaNs get the
/// f32 maximum exponent (NaNs quiet); subnormals are normalised by one float subtraction.
#[inline(always)]
pub(crate) fn f16_to_f32(h: u16) -> f32 {
    const SHIFTED_EXPONENT: u32 = 0x7c00 << 13;
    let h = u32::from(h);
    let magnitude = (h & 0x7fff) << 13;
    let exponent = magnitude & SHIFTED_EXPONENT;
    let rebiased = magnitude + ((127 - 15) << 23);
    let bits = if exponent == SHIFTED_EXPONENT {
        let special = rebiased + ((128 - 16) << 23);
        if special & 0x7f_ffff != 0 {
            special | 0x40_0000
        } else {
            special
        }
    } else if exponent == 0 {
        // 2^-14 * mantissa / 1024: built as (1 + mantissa / 1024) * 2^-14 minus 2^-14.
        (f32::from_bits(rebiased + (1 << 23)) - f32::from_bits(113 << 23)).to_bits()
    } else {
        rebiased
    };
    f32::from_bits(bits | ((h & 0x8000) << 16))
}

/// The bits of the float16 nearest `v` (ties to even).
#[inline(always)]
pub(crate) fn f32_to_f16(v: f32) -> u16 {
    // 2^16: from here on the result is infinite (or NaN).
    const OVERFLOW: u32 = (127 + 16) << 23;
    // 2^-14, the smallest normal float16.
    const SMALLEST_NORMAL: u32 = (127 - 14) << 23;
    // 0.5: adding it puts a subnormal's ten bits at the bottom of the mantissa, rounded by
    // the addition itself.
    const SUBNORMAL_SHIFT: u32 = 126 << 23;
    let x = v.to_bits();
    let sign = (x >> 16) & 0x8000;
    let a = x & 0x7fff_ffff;
    let special = if a > 0x7f80_0000 {
        0x7e00 | ((a >> 13) & 0x3ff)
    } else {
        0x7c00
    };
    let subnormal = (f32::from_bits(a) + f32::from_bits(SUBNORMAL_SHIFT))
        .to_bits()
        .wrapping_sub(SUBNORMAL_SHIFT);
    // Rebias the exponent and add just under half of the dropped part, plus one when the
    // kept part is odd: the carry rounds to nearest even (and overflows into infinity).
    let normal = a
        .wrapping_add(((15u32).wrapping_sub(127) << 23).wrapping_add(0xfff))
        .wrapping_add((a >> 13) & 1)
        >> 13;
    let magnitude = if a >= OVERFLOW {
        special
    } else if a < SMALLEST_NORMAL {
        subnormal
    } else {
        normal
    };
    (sign | magnitude) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_round_to_even() {
        assert_eq!(bf16::narrow(1.0 + 1.0 / 256.0).widen(), 1.0);
        assert_eq!(bf16::narrow(1.0 + 3.0 / 256.0).widen(), 1.0 + 1.0 / 64.0);
        assert_eq!(f16::narrow(1.0 + 1.0 / 2048.0).widen(), 1.0);
        assert_eq!(f16::narrow(65520.0).widen(), f32::INFINITY);
    }

    #[test]
    fn half_floats_widen_as_the_half_crate_does() {
        for h in 0..=u16::MAX {
            let (f, b) = (f16::from_bits(h), bf16::from_bits(h));
            assert_eq!(
                f.widen().to_bits(),
                f.to_f32().to_bits(),
                "float16 {h:#06x}"
            );
            assert_eq!(
                b.widen().to_bits(),
                b.to_f32().to_bits(),
                "bfloat16 {h:#06x}"
            );
        }
    }

    /// f32 bit patterns around every rounding boundary of both formats (each high part with
    /// low parts at and next to ties), and a spread of the rest.
    fn patterns() -> impl Iterator<Item = u32> {
        const LOW: [u32; 10] = [
            0, 1, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x7fff, 0x8000, 0x8001, 0xffff,
        ];
        let boundaries = (0..=u32::from(u16::MAX))
            .flat_map(|high| LOW.iter().map(move |&low| (high << 16) | low))
            .flat_map(|x| [x, x ^ 0x2000, x ^ 0x6000]);
        boundaries.chain((0..1u32 << 22).map(|i| i.wrapping_mul(0x9e37_79b9) ^ (i >> 7)))
    }

    #[test]
    fn half_floats_narrow_as_the_half_crate_does() {
        for x in patterns() {
            let v = f32::from_bits(x);
            assert_eq!(
                f16::narrow(v).to_bits(),
                f16::from_f32(v).to_bits(),
                "float16 from {x:#010x}"
            );
            assert_eq!(
                bf16::narrow(v).to_bits(),
                bf16::from_f32(v).to_bits(),
                "bfloat16 from {x:#010x}"
            );
        }
    }
}
