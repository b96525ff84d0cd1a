import sys

import torch

import fusedops  # noqa

if sys.argv[1] == "save":
    torch.manual_seed(0)
    out = {}
    for dt in (torch.bfloat16, torch.float16, torch.float32, torch.float64):
        for rows, h in [(1024, 4096), (600, 3000), (64, 4096), (3, 40000)]:
            x = torch.randn(rows, 2 * h) * 3
            x.view(-1)[::1001] = float("nan")
            x.view(-1)[::1009] = -100
            x = x.to(dt)
            dy = torch.randn(rows, h).to(dt)
            out[(str(dt), rows, h, "f")] = torch.ops.fusedops.silu_and_mul(x)
            out[(str(dt), rows, h, "b")] = torch.ops.fusedops.silu_and_mul_backward(dy, x)
    torch.save(out, sys.argv[2])
else:
    a, b = torch.load(sys.argv[2]), torch.load(sys.argv[3])
    bad = 0
    for k in a:
        u, v = a[k], b[k]
        n = (u.view(torch.uint8) != v.view(torch.uint8)).sum().item()
        bad += n
        if n:
            print(k, n)
    print(len(a), "outputs,", bad, "bytes differ")
