"""Prints how real MLX's print options change printed arrays."""
import mlx.core as mx
print(repr(mx.arange(6))); print(repr(mx.arange(7)))
print(repr(mx.arange(14).reshape(2,7))); print(repr(mx.arange(14).reshape(7,2)))
print(repr(mx.zeros((7,0))))
print("get_printoptions():", repr(mx.get_printoptions()))
help(mx.set_printoptions); help(mx.printoptions); help(mx.get_printoptions)
print(mx.PrintOptions.__doc__); print([a for a in dir(mx.PrintOptions) if not a.startswith('_')])
x=mx.array([1/3, 2.0, 123456.789, 1e-8], dtype=mx.float32)
for p in [0,1,2,3,4,8,10,12,-1]:
    try:
        mx.set_printoptions(precision=p); print(f"precision={p}:", repr(x), '|', repr(mx.array(1/3,dtype=mx.float64)), '|', repr(mx.array([1.5+1/3j])))
    except Exception as e: print(p, type(e).__name__, e)
mx.set_printoptions(precision=None) if False else None
try: mx.set_printoptions(); print("set_printoptions() ok:", repr(mx.get_printoptions()), repr(x))
except Exception as e: print("set_printoptions()", type(e).__name__, e)
try:
    with mx.printoptions(precision=2): print("ctx:", repr(x))
    print("after ctx:", repr(x))
except Exception as e: print("ctx", type(e).__name__, e)
for kw in ['threshold','edgeitems','linewidth','suppress']:
    try: mx.set_printoptions(**{kw:1}); print(kw,'accepted')
    except Exception as e: print(kw, type(e).__name__, e)
