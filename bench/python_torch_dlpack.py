"""webtensor <-> PyTorch through DLPack (bench/RESULTS.md, "Python:
DLPack with PyTorch"): a CPU-backend tensor into torch.from_dlpack and
back, checked to share memory by writing on each side; bool and a WebGPU
tensor, which cannot be shared. Prints one line per check and exits 1 if
any failed.

    PYTHONPATH=python python3 bench/python_torch_dlpack.py [--webgpu]"""
import sys

import numpy as np
import torch

import webtensor as wt

failed = 0


def check(name, cond, detail=""):
    global failed
    failed += not cond
    print("%s %s%s" % ("ok  " if cond else "FAIL", name, (": " + detail) if detail else ""))


cpu = wt.Context("cpu")
print("torch", torch.__version__, "numpy", np.__version__, "webtensor", wt.__version__)
for dt, tdt in ((wt.float32, torch.float32), (wt.float16, torch.float16), (wt.int32, torch.int32)):
    t = wt.tensor(np.arange(12).reshape(3, 4), dtype=dt, context=cpu)
    pt = torch.from_dlpack(t)
    t[1, 2] = 42
    pt[0, 0] = -7   # torch's from_dlpack tensors are writable
    check("wt -> torch %s shares memory" % tdt, pt.dtype == tdt and pt[1, 2].item() == 42
          and t.numpy()[0, 0] == -7, str(pt.tolist()))
t = wt.tensor(np.arange(24, dtype=np.float32).reshape(4, 6), context=cpu)
v = t[1:, ::2]
pv = torch.from_dlpack(v)
check("wt view -> torch (offset, strides)", pv.stride() == (6, 2) and
      torch.equal(pv, torch.arange(24, dtype=torch.float32).reshape(4, 6)[1:, ::2]),
      "stride %s" % (pv.stride(),))
del t, v
check("the exported view outlives its tensor", pv.sum().item() == float(
    np.arange(24).reshape(4, 6)[1:, ::2].sum()))

src = torch.arange(10, dtype=torch.float32)
w = wt.from_dlpack(src, context=cpu)
src.mul_(2)
check("torch -> wt shares memory", w.numpy().tolist() == src.tolist())
s2 = torch.arange(20, dtype=torch.int32).reshape(4, 5).t()[1:]
w2 = wt.from_dlpack(s2, context=cpu)
check("torch strided view -> wt", np.array_equal(w2.numpy(), s2.numpy()),
      "strides %s" % (w2.strides_elements,))
back = torch.from_dlpack(wt.from_dlpack(torch.ones(3, dtype=torch.float16) * 3, context=cpu) * 2)
check("torch -> wt -> op -> torch", back.tolist() == [6.0, 6.0, 6.0])
b = torch.tensor([True, False, True])
wb = wt.from_dlpack(b, context=cpu)
check("torch bool -> wt (a copy)", wb.numpy().tolist() == [True, False, True])
pb = torch.from_dlpack(wt.tensor([True, False], context=cpu))
check("wt bool -> torch (a copy)", pb.dtype == torch.bool and pb.tolist() == [True, False])

if "--webgpu" in sys.argv:
    gpu = wt.Context("webgpu")
    g = wt.tensor([1.0, 2.0], context=gpu)
    check("a WebGPU tensor reports kDLWebGPU", g.__dlpack_device__()[0] == 15,
          str(g.__dlpack_device__()))
    try:
        torch.from_dlpack(g)
        check("torch.from_dlpack(WebGPU tensor) refused", False, "it was accepted")
    except Exception as e:  # torch may refuse the device before asking us
        check("torch.from_dlpack(WebGPU tensor) refused", True, "%s: %s" % (type(e).__name__, e))
    try:
        hg = torch.from_dlpack(g, device="cpu", copy=True)
        check("torch.from_dlpack(WebGPU tensor, device='cpu', copy=True)", hg.tolist() == [1.0, 2.0])
    except Exception as e:  # older torch: no device/copy arguments, or no kDLWebGPU
        print("info torch.from_dlpack(g, device='cpu', copy=True): %s: %s" % (type(e).__name__, e))
    cap = g.__dlpack__(dl_device=(1, 0), copy=True)

    class Cap:
        def __dlpack__(self, **kw):
            return cap

        def __dlpack_device__(self):
            return (1, 0)
    check("a WebGPU tensor's host copy -> torch", torch.from_dlpack(Cap()).tolist() == [1.0, 2.0])
sys.exit(1 if failed else 0)
