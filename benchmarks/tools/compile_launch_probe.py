"""What torch.compile launches for silu_and_mul: grid, block and registers from the profiler.

    TORCH_LOGS=output_code python benchmarks/tools/compile_launch_probe.py   # on a GPU

Compiles the sweep's reference functions as gpu_sweep.py does (rows dynamic), calls them at
the sweep's rows in order, and prints each kernel's time at 128, 4096 and 65536 rows, then the
grid, block and registers of the last profiled call (65536 rows). A script, not a test.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from references import (
    allow_many_graphs,
    eager_silu_and_mul,
    manual_silu_and_mul_backward,
)

CASES = (
    ("fwd", torch.float32, 16384),
    ("bwd", torch.bfloat16, 16384),
    ("bwd", torch.float32, 2048),
    ("fwd", torch.float16, 4096),
)
ROWS = (1, 16, 128, 1024, 4096, 16384, 65536)


def main() -> None:
    torch._dynamo.config.automatic_dynamic_shapes = False
    allow_many_graphs()
    for kind, dtype, hidden in CASES:
        fn = torch.compile(eager_silu_and_mul if kind == "fwd" else manual_silu_and_mul_backward)
        prof = None
        for rows in ROWS:
            x = torch.randn(rows, 2 * hidden, device="cuda", dtype=dtype)
            args = (
                [x] if kind == "fwd" else [torch.randn(rows, hidden, device="cuda", dtype=dtype), x]
            )
            if rows > 1:
                for t in args:
                    torch._dynamo.mark_dynamic(t, 0)
            fn(*args)
            torch.cuda.synchronize()
            if rows in (128, 4096, 65536):
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    fn(*args)
                    torch.cuda.synchronize()
                for e in prof.events():
                    if e.device_type == torch.autograd.DeviceType.CUDA:
                        print(kind, dtype, rows, hidden, e.name[:60], f"us={e.device_time:.1f}")
            del x, args
        with tempfile.TemporaryDirectory() as tmp:
            trace = Path(tmp) / "trace.json"
            prof.export_chrome_trace(str(trace))
            events = json.loads(trace.read_text())["traceEvents"]
        for ev in events:
            if ev.get("cat") == "kernel":
                a = ev.get("args", {})
                print(
                    "  trace",
                    kind,
                    dtype,
                    hidden,
                    ev["name"][:50],
                    "grid",
                    a.get("grid"),
                    "block",
                    a.get("block"),
                    "regs",
                    a.get("registers per thread"),
                )


if __name__ == "__main__":
    main()
