"""s49: silu_and_mul forward past 2^20 16-byte vectors, for compute-sanitizer memcheck."""

import torch

import fusedops

for dtype, rows, d in (
    (torch.bfloat16, 4096, 4096),
    (torch.float16, 3001, 5504),
    (torch.float32, 4096, 2048),
):
    x = torch.randn(rows, 2 * d, dtype=dtype, device="cuda")
    out = fusedops.silu_and_mul(x)
    ref = torch.nn.functional.silu(x[:, :d].float()) * x[:, d:].float()
    torch.testing.assert_close(out.float(), ref, rtol=2e-2, atol=1e-2)
torch.cuda.synchronize()
print("ok")
