"""Prints the signature line real MLX documents for each function of a list."""
import mlx.core as mx
names="""zeros ones full empty zeros_like ones_like arange linspace eye identity tri tril triu meshgrid diag diagonal trace abs sign sqrt rsqrt square reciprocal exp expm1 log log1p log2 log10 sin sigmoid erf erfinv floor ceil round degrees isnan isposinf nan_to_num logical_not bitwise_invert real imag conjugate stop_gradient add subtract multiply divide floor_divide remainder divmod power maximum minimum arctan2 logaddexp equal less logical_and bitwise_and left_shift isclose allclose array_equal where clip sum prod max min mean var std logsumexp all any argmax argmin median count_nonzero cumsum cumprod cummax cummin logcumsumexp reshape flatten unflatten transpose permute_dims swapaxes moveaxis expand_dims squeeze broadcast_to broadcast_arrays atleast_1d concatenate stack split unstack pad tile repeat roll flip as_strided view contiguous matmul addmm inner outer tensordot kron einsum sort argsort partition argpartition topk searchsorted softmax diff eval async_eval get_active_memory get_peak_memory reset_peak_memory get_cache_memory set_cache_limit set_memory_limit clear_cache finfo iinfo issubdtype can_cast result_type""".split()
print("array.__init__ ::", mx.array.__init__.__doc__.strip().splitlines()[0])
missing=[]
for n in names:
    f=getattr(mx,n,None)
    if f is None: missing.append(n); print(f"{n} :: MISSING"); continue
    d=(f.__doc__ or '').strip().splitlines()
    sig=d[0] if d else '(no doc)'
    if n in ('finfo','iinfo'):
        sig=f.__init__.__doc__.strip().splitlines()[0] if f.__init__.__doc__ else sig
    print(f"{sig}")
print("MISSING:",missing)
print("--- mx.metal ---")
print([x for x in dir(mx.metal) if not x.startswith('_')])
for n in ['get_active_memory','get_peak_memory','reset_peak_memory','get_cache_memory','set_cache_limit','set_memory_limit','clear_cache','is_available','device_info']:
    f=getattr(mx.metal,n,None); print('mx.metal.'+n, '::', (f.__doc__ or '').strip().splitlines()[0] if f else 'MISSING')
print("--- mx.cuda ---", [x for x in dir(mx.cuda) if not x.startswith('_')])
print("mx.metal.is_available():", mx.metal.is_available(), "mx.cuda.is_available():", mx.cuda.is_available())
print("mx.get_memory_limit ::", mx.get_memory_limit.__doc__.strip().splitlines()[0])
