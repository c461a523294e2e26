//! The op tables: one line per function or `array` method, read by [`bind!`](crate::bind).
//! Add an op by adding its line (in MLX's signature) to the table of its family.

use crate::bind;
use crate::convert::{paired, Arr, AxesArg, Dt, NewShape, Opd, Shape};
use lazulite as lz;
use lazulite::{Array, DType, Operand};

/// `dtype` if given, else `default`.
fn dtype_or(dtype: Option<Dt>, default: DType) -> DType {
    dtype.map_or(default, |d| d.0)
}

/// MLX's `divmod`: the floor quotient and the remainder.
fn quotient_and_remainder(a: Operand, b: Operand) -> lz::Result<Vec<Array>> {
    let (q, r) = lz::divmod(a, b)?;
    Ok(vec![q, r])
}

/// The axes given, or all of them reversed.
fn permutation(a: &Array, axes: Option<AxesArg>) -> Vec<i32> {
    axes.map_or_else(|| (0..a.ndim() as i32).rev().collect(), |a| a.0)
}

bind! {
    functions {
        /// Elementwise identity (``+a``).
        ///
        /// Args:
        ///     a (array): Input array.
        ///
        /// Returns:
        ///     array: ``+a``, the same values as ``a``.
        positive(a: Arr, /, *, stream) => lz::positive(&a.0);
        /// Elementwise inverse sine (alias of ``arcsin``).
        ///
        /// Args:
        ///     a (array): Input array.
        ///
        /// Returns:
        ///     array: The inverse sine of ``a``.
        asin(a: Arr, /, *, stream) => lz::arcsin(&a.0);
        /// Elementwise inverse cosine (alias of ``arccos``).
        ///
        /// Args:
        ///     a (array): Input array.
        ///
        /// Returns:
        ///     array: The inverse cosine of ``a``.
        acos(a: Arr, /, *, stream) => lz::arccos(&a.0);
        /// Elementwise inverse tangent (alias of ``arctan``).
        ///
        /// Args:
        ///     a (array): Input array.
        ///
        /// Returns:
        ///     array: The inverse tangent of ``a``.
        atan(a: Arr, /, *, stream) => lz::arctan(&a.0);
        /// Elementwise inverse hyperbolic sine (alias of ``arcsinh``).
        ///
        /// Args:
        ///     a (array): Input array.
        ///
        /// Returns:
        ///     array: The inverse hyperbolic sine of ``a``.
        asinh(a: Arr, /, *, stream) => lz::arcsinh(&a.0);
        /// Elementwise inverse hyperbolic cosine (alias of ``arccosh``).
        ///
        /// Args:
        ///     a (array): Input array.
        ///
        /// Returns:
        ///     array: The inverse hyperbolic cosine of ``a``.
        acosh(a: Arr, /, *, stream) => lz::arccosh(&a.0);
        /// Elementwise inverse hyperbolic tangent (alias of ``arctanh``).
        ///
        /// Args:
        ///     a (array): Input array.
        ///
        /// Returns:
        ///     array: The inverse hyperbolic tangent of ``a``.
        atanh(a: Arr, /, *, stream) => lz::arctanh(&a.0);
        /// Round elementwise to the given number of decimals (halves to even).
        ///
        /// Args:
        ///     a (array): Input array.
        ///     decimals (int): Number of decimal places. Default: ``0``.
        ///
        /// Returns:
        ///     array: ``a`` rounded.
        round(a: Arr, /, decimals: i32 = 0, stream) => lz::round(&a.0, decimals);
        /// Elementwise conversion from radians to degrees.
        ///
        /// Args:
        ///     a (array): Input array.
        ///
        /// Returns:
        ///     array: The conversion from radians to degrees of ``a``.
        degrees(a: Arr, /, *, stream) => lz::degrees(&a.0);
        /// Elementwise conversion from degrees to radians.
        ///
        /// Args:
        ///     a (array): Input array.
        ///
        /// Returns:
        ///     array: The conversion from degrees to radians of ``a``.
        radians(a: Arr, /, *, stream) => lz::radians(&a.0);
        /// Elementwise test of whether ``a`` is NaN.
        ///
        /// Args:
        ///     a (array): Input array.
        ///
        /// Returns:
        ///     array: A boolean array.
        isnan(a: Arr, stream) => lz::isnan(&a.0);
        /// Elementwise test of whether ``a`` is infinite (either sign).
        ///
        /// Args:
        ///     a (array): Input array.
        ///
        /// Returns:
        ///     array: A boolean array.
        isinf(a: Arr, stream) => lz::isinf(&a.0);
        /// Elementwise test of whether ``a`` is plus infinity.
        ///
        /// Args:
        ///     a (array): Input array.
        ///
        /// Returns:
        ///     array: A boolean array.
        isposinf(a: Arr, stream) => lz::isposinf(&a.0);
        /// Elementwise test of whether ``a`` is minus infinity.
        ///
        /// Args:
        ///     a (array): Input array.
        ///
        /// Returns:
        ///     array: A boolean array.
        isneginf(a: Arr, stream) => lz::isneginf(&a.0);
        /// Elementwise test of whether ``a`` is finite (neither infinite nor NaN).
        ///
        /// Args:
        ///     a (array): Input array.
        ///
        /// Returns:
        ///     array: A boolean array.
        isfinite(a: Arr, stream) => lz::isfinite(&a.0);
        /// Elementwise bitwise inversion (``~a``).
        ///
        /// Args:
        ///     a (array): Input array.
        ///
        /// Returns:
        ///     array: ``~a``.
        bitwise_invert(a: Arr, stream) => lz::bitwise_invert(&a.0);
        /// Elementwise complex conjugate.
        ///
        /// Args:
        ///     a (array): Input array.
        ///
        /// Returns:
        ///     array: The complex conjugate of ``a``.
        conjugate(a: Arr, *, stream) => lz::conjugate(&a.0);
        /// Elementwise complex conjugate (alias of ``conjugate``).
        ///
        /// Args:
        ///     a (array): Input array.
        ///
        /// Returns:
        ///     array: The complex conjugate of ``a``.
        conj(a: Arr, *, stream) => lz::conjugate(&a.0);

        /// Elementwise floor quotient and remainder of ``a`` and ``b``.
        ///
        /// Args:
        ///     a (array or scalar): Input array or scalar.
        ///     b (array or scalar): Second input array or scalar.
        ///
        /// Returns:
        ///     list(array): ``[a // b, a % b]``.
        divmod(a: Opd, b: Opd, stream) => paired(a, b, quotient_and_remainder);
        /// Elementwise ``a`` to the power ``b``, with broadcasting.
        ///
        /// Args:
        ///     a (array or scalar): Input array or scalar.
        ///     b (array or scalar): Second input array or scalar.
        ///
        /// Returns:
        ///     array: ``a ** b``.
        power(a: Opd, b: Opd, /, *, stream) => paired(a, b, lz::power);
        /// Elementwise ``a`` to the power ``b`` (alias of ``power``), with broadcasting.
        ///
        /// Args:
        ///     a (array or scalar): Input array or scalar.
        ///     b (array or scalar): Second input array or scalar.
        ///
        /// Returns:
        ///     array: ``a ** b``.
        pow(a: Opd, b: Opd, /, *, stream) => paired(a, b, lz::power);
        /// Elementwise maximum of ``a`` and ``b``, with broadcasting; NaN propagates.
        ///
        /// Args:
        ///     a (array or scalar): Input array or scalar.
        ///     b (array or scalar): Second input array or scalar.
        ///
        /// Returns:
        ///     array: ``max(a, b)``.
        maximum(a: Opd, b: Opd, /, *, stream) => paired(a, b, lz::maximum);
        /// Elementwise minimum of ``a`` and ``b``, with broadcasting; NaN propagates.
        ///
        /// Args:
        ///     a (array or scalar): Input array or scalar.
        ///     b (array or scalar): Second input array or scalar.
        ///
        /// Returns:
        ///     array: ``min(a, b)``.
        minimum(a: Opd, b: Opd, /, *, stream) => paired(a, b, lz::minimum);
        /// Elementwise inverse tangent of ``a / b``, with the signs of both picking the quadrant, with broadcasting.
        ///
        /// Args:
        ///     a (array or scalar): Input array or scalar.
        ///     b (array or scalar): Second input array or scalar.
        ///
        /// Returns:
        ///     array: ``atan2(a, b)``.
        arctan2(a: Opd, b: Opd, /, *, stream) => paired(a, b, lz::arctan2);
        /// Elementwise inverse tangent of ``a / b`` (alias of ``arctan2``), with broadcasting.
        ///
        /// Args:
        ///     a (array or scalar): Input array or scalar.
        ///     b (array or scalar): Second input array or scalar.
        ///
        /// Returns:
        ///     array: ``atan2(a, b)``.
        atan2(a: Opd, b: Opd, /, *, stream) => paired(a, b, lz::arctan2);
        /// Elementwise ``log(exp(a) + exp(b))``, computed without overflow, with broadcasting.
        ///
        /// Args:
        ///     a (array or scalar): Input array or scalar.
        ///     b (array or scalar): Second input array or scalar.
        ///
        /// Returns:
        ///     array: ``log(exp(a) + exp(b))``.
        logaddexp(a: Opd, b: Opd, /, *, stream) => paired(a, b, lz::logaddexp);
        /// Elementwise logical and of ``a`` and ``b``, with broadcasting.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     b (array): Second input array.
        ///
        /// Returns:
        ///     array: ``a and b``.
        logical_and(a: Arr, b: Arr, /, *, stream) => lz::logical_and(&a.0, &b.0);
        /// Elementwise logical or of ``a`` and ``b``, with broadcasting.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     b (array): Second input array.
        ///
        /// Returns:
        ///     array: ``a or b``.
        logical_or(a: Arr, b: Arr, /, *, stream) => lz::logical_or(&a.0, &b.0);
        /// Elementwise ``a`` shifted left by ``b`` bits (alias of ``left_shift``), with broadcasting.
        ///
        /// Args:
        ///     a (array or scalar): Input array or scalar.
        ///     b (array or scalar): Second input array or scalar.
        ///
        /// Returns:
        ///     array: ``a << b``.
        bitwise_left_shift(a: Opd, b: Opd, stream) => paired(a, b, lz::left_shift);
        /// Elementwise ``a`` shifted right by ``b`` bits (alias of ``right_shift``), with broadcasting.
        ///
        /// Args:
        ///     a (array or scalar): Input array or scalar.
        ///     b (array or scalar): Second input array or scalar.
        ///
        /// Returns:
        ///     array: ``a >> b``.
        bitwise_right_shift(a: Opd, b: Opd, stream) => paired(a, b, lz::right_shift);

        /// Cast an array to another element type.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     dtype (Dtype): Element type to convert to.
        ///
        /// Returns:
        ///     array: ``a`` converted to ``dtype``.
        astype(a: Arr, dtype: Dt, /, *, stream) => lz::astype(&a.0, dtype.0);
        /// Make an array filled with zeros.
        ///
        /// Args:
        ///     shape (int or list(int)): Shape of the output (an int or a sequence of ints).
        ///     dtype (Dtype, optional): Element type. Default: ``float32``.
        ///
        /// Returns:
        ///     array: The zeros.
        zeros(shape: Shape, dtype: Option<Dt> = None, *, stream) => lz::zeros(&shape.0, dtype_or(dtype, DType::Float32));
        /// Make an array filled with ones.
        ///
        /// Args:
        ///     shape (int or list(int)): Shape of the output (an int or a sequence of ints).
        ///     dtype (Dtype, optional): Element type. Default: ``float32``.
        ///
        /// Returns:
        ///     array: The ones.
        ones(shape: Shape, dtype: Option<Dt> = None, *, stream) => lz::ones(&shape.0, dtype_or(dtype, DType::Float32));
        /// Make an array of the given shape filled with ``vals`` (broadcast to ``shape``).
        ///
        /// Args:
        ///     shape (int or list(int)): Shape of the output.
        ///     vals (array or scalar): Fill value(s), a scalar or an array broadcastable to ``shape``.
        ///     dtype (Dtype, optional): Element type; by default that of ``vals``.
        ///
        /// Returns:
        ///     array: The filled array.
        full(shape: Shape, vals: Opd, dtype: Option<Dt> = None, *, stream) => lz::full(&shape.0, vals.0, dtype.map(|d| d.0));
        /// Make an array of zeros with the shape (and by default the type) of ``a``.
        ///
        /// Args:
        ///     a (array): Array whose shape to use.
        ///     dtype (Dtype, optional): Element type; by default that of ``a``.
        ///
        /// Returns:
        ///     array: The zeros.
        zeros_like(a: Arr, /, dtype: Option<Dt> = None, *, stream) => lz::full_like(&a.0, 0, Some(dtype_or(dtype, a.0.dtype())));
        /// Make an array of ones with the shape (and by default the type) of ``a``.
        ///
        /// Args:
        ///     a (array): Array whose shape to use.
        ///     dtype (Dtype, optional): Element type; by default that of ``a``.
        ///
        /// Returns:
        ///     array: The ones.
        ones_like(a: Arr, /, dtype: Option<Dt> = None, *, stream) => lz::full_like(&a.0, 1, Some(dtype_or(dtype, a.0.dtype())));

        /// Give an array a new shape with the same number of elements.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     shape (list(int)): New shape; one entry may be ``-1`` to be inferred.
        ///
        /// Returns:
        ///     array: The reshaped array (a view when possible).
        reshape(a: Arr, /, shape: NewShape, *, stream) => lz::reshape(&a.0, &shape.0);
        /// Permute the axes of an array.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axes (int or list(int), optional): The new order of the axes; by default they are reversed.
        ///
        /// Returns:
        ///     array: The transposed view.
        transpose(a: Arr, /, axes: Option<AxesArg> = None, *, stream) => lz::transpose(&a.0, &permutation(&a.0, axes));
        /// Permute the axes of an array (alias of ``transpose``).
        ///
        /// Args:
        ///     a (array): Input array.
        ///     axes (int or list(int), optional): The new order of the axes; by default they are reversed.
        ///
        /// Returns:
        ///     array: The transposed view.
        permute_dims(a: Arr, /, axes: Option<AxesArg> = None, *, stream) => lz::transpose(&a.0, &permutation(&a.0, axes));
        /// Broadcast an array to a shape.
        ///
        /// Args:
        ///     a (array): Input array.
        ///     shape (int or list(int)): The target shape.
        ///
        /// Returns:
        ///     array: A view of ``a`` with shape ``shape``.
        broadcast_to(a: Arr, /, shape: Shape, *, stream) => lz::broadcast_to(&a.0, &shape.0);

        /// Bytes currently held by live arrays.
        ///
        /// Returns:
        ///     int: The number of bytes.
        get_active_memory() => lz::get_active_memory();
        /// Largest number of bytes held by arrays since start or the last ``reset_peak_memory``.
        ///
        /// Returns:
        ///     int: The number of bytes.
        get_peak_memory() => lz::get_peak_memory();
        /// Reset the peak memory counter to the current active memory.
        reset_peak_memory() => lz::reset_peak_memory();
        /// Bytes held by the buffer cache (freed buffers kept for reuse).
        ///
        /// Returns:
        ///     int: The number of bytes.
        get_cache_memory() => lz::get_cache_memory();
        /// Set the largest number of bytes the buffer cache may hold.
        ///
        /// Args:
        ///     limit (int): The new limit in bytes.
        ///
        /// Returns:
        ///     int: The previous limit.
        set_cache_limit(limit: usize) => lz::set_cache_limit(limit);
        /// Set the memory limit, in bytes.
        ///
        /// Args:
        ///     limit (int): The new limit in bytes.
        ///
        /// Returns:
        ///     int: The previous limit.
        set_memory_limit(limit: usize) => lz::set_memory_limit(limit);
        /// Get the current memory limit in bytes (no limit: the largest ``size_t``).
        ///
        /// Returns:
        ///     int: The memory limit in bytes.
        get_memory_limit() => lz::get_memory_limit();
        /// Set the wired size limit.
        ///
        /// The wired limit is what a Metal GPU keeps resident on macOS; lazulite's buffers
        /// are ordinary memory, so, as MLX without Metal, the limit is ignored.
        ///
        /// Args:
        ///     limit (int): The wired limit in bytes.
        ///
        /// Returns:
        ///     int: The previous wired limit in bytes: always ``0``.
        set_wired_limit(limit: usize) => lz::set_wired_limit(limit);
        /// Free the buffers held by the buffer cache.
        clear_cache() => lz::clear_cache();
    }
    methods {
        /// See :func:`abs`.
        abs[a](*, stream) => lz::abs(&a);
        /// See :func:`square`.
        square[a](*, stream) => lz::square(&a);
        /// See :func:`sqrt`.
        sqrt[a](*, stream) => lz::sqrt(&a);
        /// See :func:`rsqrt`.
        rsqrt[a](*, stream) => lz::rsqrt(&a);
        /// See :func:`reciprocal`.
        reciprocal[a](*, stream) => lz::reciprocal(&a);
        /// See :func:`exp`.
        exp[a](*, stream) => lz::exp(&a);
        /// See :func:`log`.
        log[a](*, stream) => lz::log(&a);
        /// See :func:`log1p`.
        log1p[a](*, stream) => lz::log1p(&a);
        /// See :func:`log2`.
        log2[a](*, stream) => lz::log2(&a);
        /// See :func:`log10`.
        log10[a](*, stream) => lz::log10(&a);
        /// See :func:`sin`.
        sin[a](*, stream) => lz::sin(&a);
        /// See :func:`cos`.
        cos[a](*, stream) => lz::cos(&a);
        /// See :func:`conj`.
        conj[a](*, stream) => lz::conjugate(&a);
        /// See :func:`round`.
        round[a](decimals: i32 = 0, *, stream) => lz::round(&a, decimals);
    }
}
