# The open slots after the many-rank select's first pass (core/many_select.hpp) for numpy's 100 q
# (199 distinct ranks) of 2^22 float32, with the first bins uniform over a 16,384 sample's extent (as
# built) and with a table on the top 12 bits giving each prefix 2^k bins by its sample share (a
# design for both backends, not built): python3 many_first_bins.py (numpy only).
import numpy as np
rng=np.random.default_rng(1)
def radix_bits(a):
    u=a.view(np.uint32).astype(np.uint64)
    neg=(u>>31)==1
    return np.where(neg, (~u)&0xffffffff, u|0x80000000).astype(np.uint64)
n=1<<22
for name,a in [("normal",rng.standard_normal(n).astype(np.float32)),("uniform",rng.random(n).astype(np.float32)),("lognormal",rng.lognormal(0,3,n).astype(np.float32))]:
    u=radix_bits(a); us=np.sort(u)
    q=np.linspace(0,1,100); lo=np.floor(q*(n-1)).astype(np.int64); hi=np.minimum(lo+1,n-1)
    ranks=np.unique(np.concatenate([lo,hi]))
    samp=u[np.linspace(0,n-1,16384).astype(np.int64)]
    # current: uniform bins over the sample extent, 16382 middle bins
    f,t=samp.min(),samp.max(); w=int(t-f); sh=0
    while (w>>sh) > 16381: sh+=1
    b=np.where(u<f,0,np.minimum(((u-f)>>np.uint64(sh))+1,16383))
    def total(bins):
        sb=bins[np.argsort(u,kind='stable')]
        rb=np.unique(sb[ranks]); return np.isin(bins,rb).sum()/n
    # equi-depth-ish: 12-bit prefixes, each gets 2^k bins ~ its sample share of 16384 (floor pow2), empty prefixes 1 bin
    P=12; pre=(samp>>np.uint64(32-P)).astype(np.int64); c=np.bincount(pre,minlength=1<<P)
    budget=16384-(c==0).sum()
    d=c/len(samp)*budget; k=np.where(d>=1,np.floor(np.log2(np.maximum(d,1))),0).astype(np.int64)
    first=np.concatenate([[0],np.cumsum(1<<k)[:-1]])
    pu=(u>>np.uint64(32-P)).astype(np.int64); shift=(32-P)-k[pu]
    off=((u-(pu.astype(np.uint64)<<np.uint64(32-P)))>>shift.astype(np.uint64)).astype(np.int64)
    b2=first[pu]+off
    print(name, f"ranks {len(ranks)}: open after pass 1, uniform-over-extent {100*total(b):.1f}%, 12-bit equi-depth map {100*total(b2):.1f}% (bins used {int((1<<k).sum())})")
