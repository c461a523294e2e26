"""Prints real MLX's binary promotion table and where it differs from NumPy's."""
import mlx.core as mx, json
names=['bool','uint8','uint16','uint32','uint64','int8','int16','int32','int64','float16','bfloat16','float32','float64','complex64']
D={n:getattr(mx,'bool_' if n=='bool' else n) for n in names}
def nm(d): s=str(d).replace('mlx.core.',''); return s
print("has promote_types:",hasattr(mx,'promote_types'))
tab={}; mismatch=[]
for a in names:
    tab[a]={}
    for b in names:
        r=(mx.zeros((1,),D[a])+mx.zeros((1,),D[b])).dtype
        tab[a][b]=nm(r)
        try:
            rt=mx.result_type(D[a],D[b])
            if nm(rt)!=nm(r): mismatch.append((a,b,nm(rt),nm(r)))
        except Exception as e: mismatch.append((a,b,repr(e)))
json.dump(tab,open('promotion.json','w'),indent=1)
print("result_type vs add mismatches:",mismatch)
ab={'bool':'b','uint8':'u8','uint16':'u16','uint32':'u32','uint64':'u64','int8':'i8','int16':'i16','int32':'i32','int64':'i64','float16':'f16','bfloat16':'bf16','float32':'f32','float64':'f64','complex64':'c64'}
w=5
print(' '*5+''.join(ab[b].rjust(w) for b in names))
for a in names: print(ab[a].ljust(5)+''.join(ab[tab[a][b]].rjust(w) for b in names))
# numpy differences
import numpy as np
nd={}
for a in names:
  for b in names:
    na=np.dtype('bool' if a=='bool' else a) if a!='bfloat16' else None
    nb=np.dtype('bool' if b=='bool' else b) if b!='bfloat16' else None
    if na is None or nb is None: continue
    r=str(np.promote_types(na,nb))
    if r!=tab[a][b] and a<=b: nd[(a,b)]=(tab[a][b],r)
print("diffs vs numpy (mlx, numpy):")
for k,v in nd.items(): print(' ',k,v)
