"""Writes docs/mlx-reference.md from the outputs of the other probes in this folder. Run,
in this folder, with a Python that has mlx:

    for p in promotion weak_scalars signatures printing print_options; do python $p.py > $p.out; done
    for p in exceptions semantics more_semantics; do python run_isolated.py $p.py > $p.out; done
    python write_reference_page.py
"""
import re
P=open('promotion.out').read().split('diffs vs numpy')[0]
mat=P.split('\n',2)[2].rstrip()  # skip first 2 lines
W=open('weak_scalars.out').read()
wtab='\n'.join(W.splitlines()[:15]); wextra='\n'.join(W.splitlines()[15:])
E=open('signatures.out').read()
Esig=E.split('--- mx.metal ---')[0]
Emetal='--- mx.metal ---'+E.split('--- mx.metal ---')[1]
C=open('printing.out').read()
# compact printing: collapse identical repr/str
blocks=[]
for b in C.strip().split('### ')[1:]:
    lab,rest=b.split('\n',1)
    r=rest.split('repr:\n',1)[1].split('\nstr:\n')[0]
    s=rest.split('\nstr:\n',1)[1].strip()
    assert r.strip()==s, lab
    if lab.startswith('11x11x11'): continue
    r=r.strip()
    blocks.append(f"# {lab}: {r}" if '\n' not in r else f"# {lab}\n{r}")
Cc='\n'.join(blocks)
C2=open('print_options.out').read()
C2prec='\n'.join(l for l in C2.splitlines() if l.startswith('precision=') or l.startswith('ctx') or l.startswith('after ctx'))
C2sum=C2.split('get_printoptions()')[0].strip()
D=open('exceptions.out').read()
F=open('semantics.out').read()
G=open('more_semantics.out').read()
out=f"""# MLX reference facts (mlx 0.32.4, Linux CPU, Python 3.11)

Install: `python3 -m venv /tmp/mlxenv && /tmp/mlxenv/bin/pip install mlx-cpu mlx numpy` worked as-is
-> `mlx-0.32.4 mlx-cpu-0.32.4 numpy-2.4.6`. `mx.default_device()` = `Device(cpu, 0)`;
`mx.metal.is_available()` = False, `mx.cuda.is_available()` = False.
Probes: `tools/mlx_reference/probes/*.py` (`run_isolated.py` runs each probe line in its own process, since some crash MLX).

Dtype names: `str(mx.float32)` == `repr(mx.float32)` == `'mlx.core.float32'`; bool dtype is `mx.bool_` but prints
`mlx.core.bool`. `type(mx.float32)` is `mlx.core.Dtype` (only public attr: `.size`). There is NO `mx.complex128`
and NO `mx.promote_types` (use `mx.result_type(*arrays_and_dtypes)`; it agrees 100% with binary-op results).
Categories are `enum DtypeCategory`: `repr(mx.floating)` = `'DtypeCategory.floating'`.
`mx.float32 == 'float32'` -> False; `mx.float32 == numpy.float32` -> False.

## 0. Biggest divergences from NumPy (details below)
1. No bounds checks on integer indexing: `mx.arange(5)[10]` returns garbage, `mx.arange(5)[-6]` segfaults, `x[10]=1` is silently
   ignored, OOB array-index gather returns garbage (observed 0). Negative array indices do wrap.
2. Float beats int at any width: int32+float32->float32, int64+float16->float16; uint64+signed int->float32;
   float16+bfloat16->float32; complex64+float64->complex64 (no complex128).
3. Weak Python int scalar that doesn't fit the array dtype raises `ValueError: Converting 300 to uint8 would result in overflow.`
   (also -1 into unsigned, comparisons); Python ints >= 2**63 -> `RuntimeError: std::bad_cast`. Yet `mx.array(300, mx.uint8)` wraps to 44.
4. Python float scalars / numpy float64 arrays become float32 (`mx.array(np.array([1.5])).dtype` = float32; `mx.array(1e300)` = inf).
   Python ints become int32, or int64 if they don't fit int32 (`mx.array(2**31)` -> int64).
5. Integer `power` with negative exponent returns 0 for every base (even 1 and -1); no error.
6. Integer division by zero: `floor_divide` -> 0, `remainder` -> the dividend; no error. `int32 INT_MIN // -1` kills the process (SIGFPE).
7. sum/prod of bool/int8/int16 -> int32, of uint8/uint16 -> uint32 (NumPy: int64/uint64); cumsum keeps int8/uint8 and wraps (bool -> int32).
8. float16 reductions accumulate in float16: `mx.mean(mx.ones((70000,), mx.float16))` -> inf.
9. argmax/argmin/argsort/argpartition/searchsorted return **uint32**.
10. `sign(nan)` = 0; argmax/argmin pick the NaN; max/min/maximum/minimum propagate NaN; sort puts NaN last.
11. bool arithmetic stays bool: `True+True` -> `array(True, dtype=bool)`, `bool - bool` allowed (False); `-bool` raises; bool << 1 -> int32.
12. matmul/inner/tensordot/einsum-with-contraction reject integer dtypes (`ValueError: [matmul] Only inexact types are supported ...`); outer/kron accept them.
13. Boolean-mask indexing unsupported: `ValueError: boolean indices are not yet supported`.
14. In-place `x += 1.5` on an int32 array makes it float32 (no casting error), and aliases (`y = x; y += 1`) see the change.
15. Printing: repr == str, `dtype=` always shown, %g with 6 significant digits, integral floats print with no '.', no column alignment,
    `-nan` possible; any axis > 6 is summarised to 3 + `...` + 3; `set_printoptions` only takes `precision`.
Also: `mx.empty` returns zeros; `max/min/argmax/logsumexp/median` of empty -> ValueError, but `mean([])` -> -nan, `var(ddof>=n)` -> inf;
`mx.abs(complex)` -> float32; `x == "a"` -> False but `x + "a"` -> ValueError; `mx.concatenate([a], axis=99)` doesn't validate.

## a. Binary promotion (`(zeros(A)+zeros(B)).dtype` == `mx.result_type(A,B)`); JSON: promotion.json

Abbrev: b=bool u=uint i=int f=float bf16=bfloat16 c64=complex64. Symmetric.
```
{mat}
```
Differences vs NumPy (mlx, numpy):
- (u64, any signed int) -> **float32** (numpy float64)
- f16 with i16/i32/i64/u16/u32/u64 -> **float16** (numpy f32/f64); f32 with i32/i64/u32/u64 -> **float32** (numpy f64).
  Rule: any float dtype wins over any int dtype (float keeps its own width).
- f16 + bf16 -> float32.
- c64 with f64/i32/i64/u32/u64 -> **complex64** (no complex128 exists).
- int kind combos are numpy-like (u8+i8=i16, u32+i32=i64) except u64+signed.

## b. Weak Python scalars (JSON: weak_scalars.json)

Python bool/int/float/complex scalars are "weak": they adopt the array's dtype within the same kind; int scalar
with bool array -> int32; float scalar with bool/int array -> float32; complex scalar -> complex64. Order does not matter.
```
{wtab}
```
Notable results (`label -> repr` or `ExceptionType: message`):
```
{wextra}
```
- Int scalar that does not fit the int array dtype -> `ValueError: Converting N to <dtype> would result in overflow.`
  (incl. negative into unsigned: `uint8 + (-1)`, `uint8 * -1`, comparisons `int8 == 1000`, `mx.where`, `mx.maximum`).
  But results wrap silently: `uint8([1]) - 2` -> 255, `uint8([1])+255` -> 0.
- Python int outside int64 range (>= 2**63) -> `RuntimeError: std::bad_cast` (also for uint64 arrays and `mx.array(2**63)`).
- Float scalars never raise: `float16([1]) + 1e6` -> inf.
- 0-d mx arrays are NOT weak: `int8([1]) + mx.array(1)` -> int32.
- `numpy.float64(1) + mx.array` -> numpy ndarray (numpy wins on left); `mx.array + numpy.float64(1)` -> mlx, weak (float16 stays float16); `mx.array + numpy.int64(1)` weak too.
- bool array arithmetic stays bool: `array(True)+True` -> `array(True, dtype=bool)`, `bool - bool` -> bool (False), `bool // bool`, `bool % bool`, `bool ** bool` -> bool; `bool / bool` -> float32; `-bool` raises.

## c. Printing

repr(a) == str(a) always. Format: `array(<data>, dtype=<name>)`; dtype always shown (even float32/int32/bool).
Numbers formatted like C++ ostream default (%g, 6 significant digits), per element independently — NO column alignment,
no padding, no trailing '.', floats that are integral print without decimal point (`1`, `-0`), `nan` may print as `-nan`
(sign bit, e.g. sqrt(-1), 0/0, mean([])). Exponents `1e-08`, `1e+10`. Complex: `1+2j`, `0+0j`, `-0-1j`, `nan+infj`.
Rows separated by `,\\n` + (7 + depth) spaces; NO blank lines between 3-D blocks; no line wrapping.
Summarisation is per-axis: an axis with size > 6 prints first 3, `...`, last 3 (so arange(7) is summarised,
arange(6) is not); there is no total-size threshold. Empty arrays with a leading 0 dim print `array([], dtype=...)`
regardless of rank ((0,), (0,3), (0,0)); shape (2,0) prints `[[],\\n       []]`.
```
{Cc}
```
Summarisation thresholds (in order: arange(6), arange(7), arange(14).reshape(2,7), .reshape(7,2), zeros((7,0))):
```
{C2sum}
```
### Print options
Only `precision` exists: `mx.set_printoptions(precision: int = -1) -> None`, `mx.printoptions(precision: int = -1)` (context
manager, restores on exit), `mx.get_printoptions() -> mx.PrintOptions` (attr `.precision`, default -1).
Any other kwarg (threshold, edgeitems, linewidth, suppress) -> TypeError (nanobind "incompatible function arguments").
precision >= 0 switches floats (and complex parts) to fixed notation with exactly that many decimals (no scientific, even
for 1e10 -> `10000000000.000`); ints/bools unaffected; -1 = default %g. Columns: repr(x) for x = [1/3, 2, 123456.789, 1e-8]
float32 | repr(mx.array(1/3, float64)) | repr(mx.array([1.5+1/3j])) (value 1.5-0.333j); ctx = `with mx.printoptions(precision=2)`:
```
{C2prec}
precision=3: array([1, 2], dtype=int32) | array([True], dtype=bool) | array([1.500], dtype=float16) | array(1.000, dtype=float32) | array([0.000, 10000000000.000], dtype=float32)
```
Other: `format(mx.array(1.5), '.2f')` -> `1.50`; `f'{{mx.array(1.5)}}'` -> `1.5` (0-d formats as Python scalar);
`round(mx.array(2.5))` -> `TypeError: type array doesn't define __round__ method`.
More formats: `[1e6]`->`1e+06`, `[999999.]`->`999999`, `[1234567.]`->`1.23457e+06`, `[100000.]`->`100000`,
float64 `[1/3, 2**53]` -> `array([0.333333, 9.0072e+15], dtype=float64)`; finfo repr uses same format.

## d. Exceptions (label, then `-> Type: message`; OK = no error)
Note "CRASH (signal 11)" = segfault of the Python process; "signal 8" = SIGFPE.
```
{D}```
Key points: no bounds checking for integer indexing — `arange(5)[10]` returns garbage, `arange(5)[-6]` segfaults,
`x[10]=1` silently ignored; gather with OOB array index returns garbage (observed 0); negative array indices wrap
(`x[mx.array([-1])]` works). Boolean mask indexing unsupported. Invalid dtype args -> nanobind TypeError (strings/python
types are not accepted as dtypes anywhere). Axis errors are IndexError, shape errors ValueError.
`mx.concatenate([single], axis=2)` does not validate axis. matmul/inner/tensordot/einsum(with contraction) reject integer dtypes.

## e. Signatures (first line of `__doc__`, same as `help()`)
All requested names exist in 0.32.4 (count_nonzero, unstack, flip, searchsorted, diff, can_cast, result_type included).
`mx.empty` exists but its docstring is the `zeros` docstring (and it returns zeros). finfo/iinfo are classes.
```
{Esig}```
Memory functions are top-level (`mx.get_active_memory` ...); also under `mx.metal.*` with identical signatures:
```
{Emetal}```

## f. Semantics spot-checks (`>>> expression` then output)
```
{F}```
### More spot-checks
```
{G}```
Extra: `mx.array([1],mx.int8) << 1` -> `array([2], dtype=int8)`; `mx.array([True]) << 1` -> int32; `1 << mx.array(..)` -> TypeError
(no `__rlshift__`). `x[mx.array([1,1])] = mx.array([7,8])` -> last write wins (8). Fancy 2-D index `mx.array([1,2,3])[mx.array([[0,1],[2,0]])]`
-> shape (2,2). `mx.eye(0).shape` = (0,0).
"""
open('../../../docs/mlx-reference.md','w').write(out)
