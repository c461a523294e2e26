"""Prints the result dtypes real MLX gives for arrays combined with Python scalars."""
import mlx.core as mx, json
names=['bool','uint8','uint16','uint32','uint64','int8','int16','int32','int64','float16','bfloat16','float32','float64','complex64']
D={n:getattr(mx,'bool_' if n=='bool' else n) for n in names}
nm=lambda d: str(d).replace('mlx.core.','')
out={}
ops={'a+True':lambda a:a+True,'a+1':lambda a:a+1,'a+1.5':lambda a:a+1.5,'a+1j':lambda a:a+1j,'1.5+a':lambda a:1.5+a,'True+a':lambda a:True+a,'1+a':lambda a:1+a,'a*2.0':lambda a:a*2.0,'a/2':lambda a:a/2,'a//2':lambda a:a//2,'a**2':lambda a:a**2,'a**0.5':lambda a:a**0.5}
for n in names:
    out[n]={}
    for k,f in ops.items():
        try: out[n][k]=nm(f(mx.zeros((1,),D[n])).dtype)
        except Exception as e: out[n][k]=f"{type(e).__name__}: {e}"
hdr=list(ops)
print('dtype'.ljust(10)+''.join(h.rjust(11) for h in hdr))
for n in names: print(n.ljust(10)+''.join(out[n][h].replace('complex64','c64').rjust(11) for h in hdr))
extra={}
def t(label,f):
    try:
        r=f(); mx.eval(r); s=repr(r)
    except Exception as e: s=f"{type(e).__name__}: {e}"
    extra[label]=s; print(label,'->',s)
t('mx.array(True)+2',lambda: mx.array(True)+2)
t('mx.array(True)+True',lambda: mx.array(True)+True)
t('mx.array(True)+2.5',lambda: mx.array(True)+2.5)
t('mx.array([1],mx.uint8)+300',lambda: mx.array([1],mx.uint8)+300)
t('mx.array([1],mx.uint8)+255',lambda: mx.array([1],mx.uint8)+255)
t('mx.array([1],mx.uint8)+256',lambda: mx.array([1],mx.uint8)+256)
t('mx.array([1],mx.uint8)+(-1)',lambda: mx.array([1],mx.uint8)+(-1))
t('mx.array([1],mx.uint8)-2',lambda: mx.array([1],mx.uint8)-2)
t('mx.array([1],mx.int8)+200',lambda: mx.array([1],mx.int8)+200)
t('mx.array([1],mx.int8)+(-200)',lambda: mx.array([1],mx.int8)+(-200))
t('mx.array([1],mx.uint8)+2**40',lambda: mx.array([1],mx.uint8)+2**40)
t('mx.array([1],mx.int32)+2**40',lambda: mx.array([1],mx.int32)+2**40)
t('mx.array([1],mx.int32)+2**31',lambda: mx.array([1],mx.int32)+2**31)
t('mx.array([1],mx.int64)+2**63',lambda: mx.array([1],mx.int64)+2**63)
t('mx.array([1],mx.uint64)+2**63',lambda: mx.array([1],mx.uint64)+2**63)
t('mx.array([1],mx.uint64)+2**64',lambda: mx.array([1],mx.uint64)+2**64)
t('mx.array([1],mx.int32)+2**70',lambda: mx.array([1],mx.int32)+2**70)
t('mx.array([1],mx.float16)+1e6',lambda: mx.array([1],mx.float16)+1e6)
t('mx.array([1],mx.float32)+1e300',lambda: mx.array([1],mx.float32)+1e300)
t('mx.array([1],mx.int32)+1e300',lambda: mx.array([1],mx.int32)+1e300)
t('mx.array([1],mx.uint8)+1.5',lambda: mx.array([1],mx.uint8)+1.5)
t('mx.array([1],mx.uint8)*-1',lambda: mx.array([1],mx.uint8)*-1)
t('mx.add(mx.array([1],mx.uint8),300)',lambda: mx.add(mx.array([1],mx.uint8),300))
t('mx.array([1],mx.uint8)+mx.array(300)',lambda: mx.array([1],mx.uint8)+mx.array(300))
t('mx.array([1],mx.int8)==1000',lambda: mx.array([1],mx.int8)==1000)
t('mx.maximum(mx.array([1],mx.uint8),300)',lambda: mx.maximum(mx.array([1],mx.uint8),300))
t('mx.add(1,2)',lambda: mx.add(1,2))
t('mx.add(1,2.0)',lambda: mx.add(1,2.0))
t('mx.add(True,True)',lambda: mx.add(True,True))
t('mx.add(1j,1)',lambda: mx.add(1j,1))
t('mx.array([1],mx.float16)+np.float64(1)',lambda: (__import__('numpy').float64(1.0)+mx.array([1],mx.float16)))
t('mx.array([1],mx.float16)+mx.array(1.0)',lambda: mx.array([1],mx.float16)+mx.array(1.0))
t('mx.array([1],mx.int8)+mx.array(1)',lambda: mx.array([1],mx.int8)+mx.array(1))
t('mx.array([1],mx.uint8) + np.int64(1)',lambda: mx.array([1],mx.uint8)+__import__('numpy').int64(1))
json.dump({'per_dtype':out,'extra':extra},open('weak_scalars.json','w'),indent=1)
