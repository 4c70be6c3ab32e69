import torch, gsearch, time
n, m, g = 100_000_000, 10_000_000, 1000
gen = torch.Generator(device="cuda").manual_seed(1)
lk = torch.sort(torch.randint(0, 10**12, (n,), device="cuda", generator=gen)).values
rk = torch.sort(torch.randint(0, 10**12, (m,), device="cuda", generator=gen)).values
lb = torch.randint(0, g, (n,), device="cuda", generator=gen)
rb = torch.randint(0, g, (m,), device="cuda", generator=gen)
for d in ("backward", "nearest"):
    for i in range(2):
        torch.cuda.synchronize(); t = time.perf_counter()
        idx = gsearch.asof_indices(lk, rk, left_by=lb, right_by=rb, direction=d)
        torch.cuda.synchronize(); print(d, "ms", (time.perf_counter() - t) * 1e3, flush=True)
