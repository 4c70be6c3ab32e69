# merge_asof against pandas at 10^7 x 10^6, ungrouped, backward (run from the repository root:
# python3 bench/results/cpu/issue44/merge_asof_frame.py)
import sys, time, numpy as np, pandas as pd
sys.path.insert(0, 'python')
import gsearch
rng=np.random.default_rng(1)
n,m=10**7,10**6
L=pd.DataFrame({'t':np.sort(rng.integers(0,10**12,n)),'x':rng.random(n)})
R=pd.DataFrame({'t':np.sort(rng.integers(0,10**12,m)),'v':rng.random(m)})
def best(f,k=3):
    ts=[]
    for _ in range(k):
        t=time.perf_counter(); f(); ts.append(time.perf_counter()-t)
    return round(min(ts)*1e3,1)
for _ in range(2):
    print('gsearch', best(lambda: gsearch.merge_asof(L,R,on='t')), 'pandas', best(lambda: pd.merge_asof(L,R,on='t')))
