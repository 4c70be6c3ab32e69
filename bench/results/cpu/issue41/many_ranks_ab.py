import numpy as np, time, gsearch, json, sys
rng=np.random.default_rng(1)
out={}
for n in (10**4, 10**5, 10**6, 2**24):
  for dt in (np.float32, np.int32):
    a=(rng.random(n)*1e6).astype(dt)
    for m in (3, 5, 8, 16, 32, 100):
      ks=np.linspace(0,n-1,m).astype(np.int64)
      best=1e9
      reps = 30 if n <= 10**5 else (10 if n <= 10**6 else 4)
      for _ in range(reps):
        t0=time.perf_counter(); gsearch.select(a,ks); best=min(best,time.perf_counter()-t0)
      out[f"{n} {dt.__name__} {m}"]=best*1e3
json.dump(out, open(sys.argv[1],'w'))
