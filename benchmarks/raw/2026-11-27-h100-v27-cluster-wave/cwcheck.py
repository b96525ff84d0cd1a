"""Cluster-wave experiment: rows in the band take the cluster kernel and give a batch's bits."""

import torch
from torch.profiler import ProfilerActivity, profile

import fusedops

sms = torch.cuda.get_device_properties(0).multi_processor_count
bad = 0
for dtype in (torch.bfloat16, torch.float16):
    for hidden in (18432, 20480, 24576, 32768, 20000):
        g = torch.Generator(device="cuda").manual_seed(0)
        big = 4 * sms + 3
        x = torch.randn(big, hidden, dtype=dtype, device="cuda", generator=g)
        r = torch.randn(big, hidden, dtype=dtype, device="cuda", generator=g)
        w = torch.randn(hidden, dtype=dtype, device="cuda", generator=g)
        out, res = fusedops.fused_add_rms_norm(x, r, w, 1e-6)
        for rows in (sms + 1, 2 * sms):
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                o, s = fusedops.fused_add_rms_norm(x[:rows], r[:rows], w, 1e-6)
                torch.cuda.synchronize()
            names = [
                e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
            ]
            kern = [n for n in names if "rms_norm_fwd" in n]
            same = torch.equal(o.view(torch.int16), out[:rows].view(torch.int16)) and torch.equal(
                s.view(torch.int16), res[:rows].view(torch.int16)
            )
            bad += not same
            print(
                dtype, hidden, rows, "same" if same else "DIFFER", kern[0][:90] if kern else names
            )
print("differ:", bad)
