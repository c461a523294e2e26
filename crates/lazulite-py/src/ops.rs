//! The op tables: one line per function or `array` method, read by [`bind!`](crate::bind).
//! Add an op by adding its line (in MLX's signature) to the table of its family.

use crate::bind;
use crate::convert::{Arr, AxesArg, Dt, NewShape, Opd, Shape};
use lazulite as lz;
use lazulite::{Array, DType, Operand};

/// `dtype` if given, else `default`.
fn dtype_or(dtype: Option<Dt>, default: DType) -> DType {
    dtype.map_or(default, |d| d.0)
}

/// MLX's `divmod`: the floor quotient and the remainder.
fn quotient_and_remainder(a: Operand, b: Operand) -> lz::Result<Vec<Array>> {
    Ok(vec![
        lz::floor_divide(a.clone(), b.clone())?,
        lz::remainder(a, b)?,
    ])
}

/// The axes given, or all of them reversed.
fn permutation(a: &Array, axes: Option<AxesArg>) -> Vec<i32> {
    axes.map_or_else(|| (0..a.ndim() as i32).rev().collect(), |a| a.0)
}

bind! {
    functions {
        abs(a: Arr, /, *, stream) => lz::abs(&a.0);
        sign(a: Arr, /, *, stream) => lz::sign(&a.0);
        negative(a: Arr, /, *, stream) => lz::negative(&a.0);
        positive(a: Arr, /, *, stream) => lz::positive(&a.0);
        square(a: Arr, /, *, stream) => lz::square(&a.0);
        sqrt(a: Arr, /, *, stream) => lz::sqrt(&a.0);
        rsqrt(a: Arr, /, *, stream) => lz::rsqrt(&a.0);
        reciprocal(a: Arr, /, *, stream) => lz::reciprocal(&a.0);
        exp(a: Arr, /, *, stream) => lz::exp(&a.0);
        expm1(a: Arr, /, *, stream) => lz::expm1(&a.0);
        log(a: Arr, /, *, stream) => lz::log(&a.0);
        log1p(a: Arr, /, *, stream) => lz::log1p(&a.0);
        log2(a: Arr, /, *, stream) => lz::log2(&a.0);
        log10(a: Arr, /, *, stream) => lz::log10(&a.0);
        sin(a: Arr, /, *, stream) => lz::sin(&a.0);
        cos(a: Arr, /, *, stream) => lz::cos(&a.0);
        tan(a: Arr, /, *, stream) => lz::tan(&a.0);
        arcsin(a: Arr, /, *, stream) => lz::arcsin(&a.0);
        arccos(a: Arr, /, *, stream) => lz::arccos(&a.0);
        arctan(a: Arr, /, *, stream) => lz::arctan(&a.0);
        sinh(a: Arr, /, *, stream) => lz::sinh(&a.0);
        cosh(a: Arr, /, *, stream) => lz::cosh(&a.0);
        tanh(a: Arr, /, *, stream) => lz::tanh(&a.0);
        arcsinh(a: Arr, /, *, stream) => lz::arcsinh(&a.0);
        arccosh(a: Arr, /, *, stream) => lz::arccosh(&a.0);
        arctanh(a: Arr, /, *, stream) => lz::arctanh(&a.0);
        asin(a: Arr, /, *, stream) => lz::arcsin(&a.0);
        acos(a: Arr, /, *, stream) => lz::arccos(&a.0);
        atan(a: Arr, /, *, stream) => lz::arctan(&a.0);
        asinh(a: Arr, /, *, stream) => lz::arcsinh(&a.0);
        acosh(a: Arr, /, *, stream) => lz::arccosh(&a.0);
        atanh(a: Arr, /, *, stream) => lz::arctanh(&a.0);
        sigmoid(a: Arr, /, *, stream) => lz::sigmoid(&a.0);
        erf(a: Arr, /, *, stream) => lz::erf(&a.0);
        erfinv(a: Arr, /, *, stream) => lz::erfinv(&a.0);
        floor(a: Arr, /, *, stream) => lz::floor(&a.0);
        ceil(a: Arr, /, *, stream) => lz::ceil(&a.0);
        trunc(a: Arr, /, *, stream) => lz::trunc(&a.0);
        round(a: Arr, /, decimals: i32 = 0, stream) => lz::round(&a.0, decimals);
        degrees(a: Arr, /, *, stream) => lz::degrees(&a.0);
        radians(a: Arr, /, *, stream) => lz::radians(&a.0);
        isnan(a: Arr, stream) => lz::isnan(&a.0);
        isinf(a: Arr, stream) => lz::isinf(&a.0);
        isposinf(a: Arr, stream) => lz::isposinf(&a.0);
        isneginf(a: Arr, stream) => lz::isneginf(&a.0);
        isfinite(a: Arr, stream) => lz::isfinite(&a.0);
        logical_not(a: Arr, /, *, stream) => lz::logical_not(&a.0);
        bitwise_invert(a: Arr, stream) => lz::bitwise_invert(&a.0);
        real(a: Arr, /, *, stream) => lz::real(&a.0);
        imag(a: Arr, /, *, stream) => lz::imag(&a.0);
        conjugate(a: Arr, *, stream) => lz::conjugate(&a.0);
        conj(a: Arr, *, stream) => lz::conjugate(&a.0);
        stop_gradient(a: Arr, /, *, stream) => lz::stop_gradient(&a.0);

        add(a: Opd, b: Opd, stream) => lz::add(a.0, b.0);
        subtract(a: Opd, b: Opd, stream) => lz::subtract(a.0, b.0);
        multiply(a: Opd, b: Opd, stream) => lz::multiply(a.0, b.0);
        divide(a: Opd, b: Opd, stream) => lz::divide(a.0, b.0);
        floor_divide(a: Opd, b: Opd, stream) => lz::floor_divide(a.0, b.0);
        remainder(a: Opd, b: Opd, stream) => lz::remainder(a.0, b.0);
        divmod(a: Opd, b: Opd, stream) => quotient_and_remainder(a.0, b.0);
        power(a: Opd, b: Opd, /, *, stream) => lz::power(a.0, b.0);
        pow(a: Opd, b: Opd, /, *, stream) => lz::power(a.0, b.0);
        maximum(a: Opd, b: Opd, /, *, stream) => lz::maximum(a.0, b.0);
        minimum(a: Opd, b: Opd, /, *, stream) => lz::minimum(a.0, b.0);
        arctan2(a: Opd, b: Opd, /, *, stream) => lz::arctan2(a.0, b.0);
        atan2(a: Opd, b: Opd, /, *, stream) => lz::arctan2(a.0, b.0);
        logaddexp(a: Opd, b: Opd, /, *, stream) => lz::logaddexp(a.0, b.0);
        equal(a: Opd, b: Opd, stream) => lz::equal(a.0, b.0);
        not_equal(a: Opd, b: Opd, stream) => lz::not_equal(a.0, b.0);
        less(a: Opd, b: Opd, stream) => lz::less(a.0, b.0);
        less_equal(a: Opd, b: Opd, stream) => lz::less_equal(a.0, b.0);
        greater(a: Opd, b: Opd, stream) => lz::greater(a.0, b.0);
        greater_equal(a: Opd, b: Opd, stream) => lz::greater_equal(a.0, b.0);
        logical_and(a: Arr, b: Arr, /, *, stream) => lz::logical_and(&a.0, &b.0);
        logical_or(a: Arr, b: Arr, /, *, stream) => lz::logical_or(&a.0, &b.0);
        bitwise_and(a: Opd, b: Opd, stream) => lz::bitwise_and(a.0, b.0);
        bitwise_or(a: Opd, b: Opd, stream) => lz::bitwise_or(a.0, b.0);
        bitwise_xor(a: Opd, b: Opd, stream) => lz::bitwise_xor(a.0, b.0);
        left_shift(a: Opd, b: Opd, stream) => lz::left_shift(a.0, b.0);
        right_shift(a: Opd, b: Opd, stream) => lz::right_shift(a.0, b.0);
        bitwise_left_shift(a: Opd, b: Opd, stream) => lz::left_shift(a.0, b.0);
        bitwise_right_shift(a: Opd, b: Opd, stream) => lz::right_shift(a.0, b.0);

        astype(a: Arr, dtype: Dt, /, *, stream) => lz::astype(&a.0, dtype.0);
        zeros(shape: Shape, dtype: Option<Dt> = None, *, stream) => lz::zeros(&shape.0, dtype_or(dtype, DType::Float32));
        ones(shape: Shape, dtype: Option<Dt> = None, *, stream) => lz::ones(&shape.0, dtype_or(dtype, DType::Float32));
        full(shape: Shape, vals: Opd, dtype: Option<Dt> = None, *, stream) => lz::full(&shape.0, vals.0, dtype.map(|d| d.0));
        zeros_like(a: Arr, /, dtype: Option<Dt> = None, *, stream) => lz::zeros(a.0.shape(), dtype_or(dtype, a.0.dtype()));
        ones_like(a: Arr, /, dtype: Option<Dt> = None, *, stream) => lz::ones(a.0.shape(), dtype_or(dtype, a.0.dtype()));

        reshape(a: Arr, /, shape: NewShape, *, stream) => lz::reshape(&a.0, &shape.0);
        transpose(a: Arr, /, axes: Option<AxesArg> = None, *, stream) => lz::transpose(&a.0, &permutation(&a.0, axes));
        permute_dims(a: Arr, /, axes: Option<AxesArg> = None, *, stream) => lz::transpose(&a.0, &permutation(&a.0, axes));
        broadcast_to(a: Arr, /, shape: Shape, *, stream) => lz::broadcast_to(&a.0, &shape.0);

        get_active_memory() => lz::get_active_memory();
        get_peak_memory() => lz::get_peak_memory();
        reset_peak_memory() => lz::reset_peak_memory();
        get_cache_memory() => lz::get_cache_memory();
        set_cache_limit(limit: usize) => lz::set_cache_limit(limit);
        set_memory_limit(limit: usize) => lz::set_memory_limit(limit);
        clear_cache() => lz::clear_cache();
    }
    methods {
        abs[a](*, stream) => lz::abs(&a);
        square[a](*, stream) => lz::square(&a);
        sqrt[a](*, stream) => lz::sqrt(&a);
        rsqrt[a](*, stream) => lz::rsqrt(&a);
        reciprocal[a](*, stream) => lz::reciprocal(&a);
        exp[a](*, stream) => lz::exp(&a);
        log[a](*, stream) => lz::log(&a);
        log1p[a](*, stream) => lz::log1p(&a);
        log2[a](*, stream) => lz::log2(&a);
        log10[a](*, stream) => lz::log10(&a);
        sin[a](*, stream) => lz::sin(&a);
        cos[a](*, stream) => lz::cos(&a);
        conj[a](*, stream) => lz::conjugate(&a);
        round[a](decimals: i32 = 0, *, stream) => lz::round(&a, decimals);
    }
}
