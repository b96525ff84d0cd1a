"""Same bits for a row whatever the batch: rows[:r] of batch r against the first r of a larger one."""

import torch

import fusedops

bad = 0
for dtype in (torch.bfloat16, torch.float16):
    for hidden in (12288, 16384):
        big = 4096
        x = torch.randn(big, hidden, dtype=dtype, device="cuda")
        r = torch.randn_like(x)
        w = torch.randn(hidden, dtype=dtype, device="cuda")
        ref = fusedops.rms_norm(x, w)
        ref_o, ref_r = fusedops.fused_add_rms_norm(x, r, w)
        for rows in (1, 2, 16, 66, 100, 132, 133, 200, 256, 264, 265, 400, 512, 1024):
            a = fusedops.rms_norm(x[:rows], w)
            o, rr = fusedops.fused_add_rms_norm(x[:rows], r[:rows], w)
            ok = (
                torch.equal(a, ref[:rows])
                and torch.equal(o, ref_o[:rows])
                and torch.equal(rr, ref_r[:rows])
            )
            exp = (
                x[:rows].float()
                * torch.rsqrt(x[:rows].float().pow(2).mean(-1, keepdim=True) + 1e-6)
                * w.float()
            ).to(dtype)
            err = (a.float() - exp.float()).abs().max().item()
            if not ok or err > 0.1:
                bad += 1
                print("MISMATCH", dtype, hidden, rows, ok, err)
print("bits check done, mismatches:", bad)
