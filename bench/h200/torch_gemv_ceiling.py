# What the H200 gives a single kernel reading a decode-sized weight, through
# CUDA: a sum over 33 MB (the bytes of a Q4_0 14336x4096 weight) and
# torch.mv of f16 weights of 33 MB and 117 MB, rotated through >= 256 MB so
# that none is served from the 50 MB L2; the 100 launches captured as one
# CUDA graph (so the host's launch cost is out of the time), CUDA events
# around its replay, median of 10.
import torch, statistics
def timed(fn, n=100, reps=10):
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    st = torch.cuda.Stream()
    st.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(st):
        for i in range(3): fn(i)
    torch.cuda.current_stream().wait_stream(st)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(n): fn(i)
    out = []
    for _ in range(reps):
        g.replay(); torch.cuda.synchronize()
        s.record(); g.replay(); e.record(); torch.cuda.synchronize()
        out.append(s.elapsed_time(e) * 1e3 / n)
    return statistics.median(out)
dev = 'cuda'
print('torch', torch.__version__, torch.cuda.get_device_name())
for label, shape, dt in [('sum 33.1 MB f32', (33030144 // 4,), torch.float32),
                         ('mv f16 [4096,4032] 33.0 MB', (4096, 4032), torch.float16),
                         ('mv f16 [14336,4096] 117 MB', (14336, 4096), torch.float16),
                         ('mv f16 [2048,2048] 8.4 MB', (2048, 2048), torch.float16),
                         ('mv f16 [11264,2048] 46 MB', (11264, 2048), torch.float16),
                         ('mv f16 [2048,5632] 23 MB', (2048, 5632), torch.float16),
                         ('sum 4 B (a launch)', (1,), torch.float32)]:
    nbytes = 1
    for d in shape: nbytes *= d
    nbytes *= torch.tensor([], dtype=dt).element_size()
    copies = min(64, max(2, -(-256 * 2**20 // nbytes)))
    ws = [torch.randn(shape, device=dev, dtype=dt) for _ in range(copies)]
    if len(shape) == 1:
        fn = lambda i: ws[i % copies].sum()
    else:
        x = torch.randn(shape[1], device=dev, dtype=dt)
        fn = lambda i: torch.mv(ws[i % copies], x)
    us = timed(fn)
    print('%-28s %8.1f us  %6.0f GB/s  %4.1f %% of 4.8 TB/s' % (label, us, nbytes / us / 1e3, nbytes / us / 1e3 / 48.0))
