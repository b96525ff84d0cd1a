"""rms_norm's CPU gradients of one fusedops build, saved for a bit-for-bit comparison.

    python grad-bits-check.py INSTALL_DIR OUT.pt   # INSTALL_DIR: a `pip install --target`

Each case is also run at 1 and 2 threads, which must give the same bits. Compare two
OUT.pt files with torch.equal on every (grad_x, grad_weight) pair.
"""

import sys

sys.path.insert(0, sys.argv[1])
import torch

import fusedops  # from INSTALL_DIR

torch.manual_seed(1)
results = {}
for dtype in (torch.bfloat16, torch.float16, torch.float32, torch.float64):
    for shape in ((4096, 4096), (3, 7), (1000, 33), (5000, 1), (64, 70000)):
        x = torch.randn(*shape).to(dtype).requires_grad_()
        w = torch.randn(shape[1]).to(dtype).requires_grad_()
        dy = torch.randn(*shape).to(dtype)
        gx, gw = torch.autograd.grad([fusedops.rms_norm(x, w, 1e-6)], [x, w], [dy])
        for threads in (1, 2):
            torch.set_num_threads(threads)
            gx2, gw2 = torch.autograd.grad([fusedops.rms_norm(x, w, 1e-6)], [x, w], [dy])
            assert torch.equal(gw, gw2) and torch.equal(gx, gx2)
        results[(str(dtype), shape)] = (gx, gw)
torch.save(results, sys.argv[2])
