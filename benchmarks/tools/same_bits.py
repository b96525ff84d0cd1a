"""Do two builds give the same bits? Save every op's CUDA outputs under one build, compare.

    PYTHONPATH=WHEEL_A_DIR python benchmarks/tools/same_bits.py save a.pt
    PYTHONPATH=WHEEL_B_DIR python benchmarks/tools/same_bits.py save b.pt
    python benchmarks/tools/same_bits.py compare a.pt b.pt   # exit 1 if any output differs

For an A/B of a kernel change that must not change results: inputs come from a
seeded generator, so both runs see the same values. Shapes cover the forward's
plans (power-of-two rows that fill a block, rows with threads past the row, the
two-pass and scalar kernels, one row and more rows than SMs) and silu_and_mul's
vectorised and misaligned paths. A script, not a test: it needs a GPU.
"""

from __future__ import annotations

import argparse
import sys

import torch

NORM_DTYPES = ("bfloat16", "float16", "float32")
NORM_HIDDEN = (64, 1000, 2048, 4096, 4100, 8192, 12288, 16384)
NORM_ROWS = (1, 7, 200, 3000)
SILU_DTYPES = ("bfloat16", "float16", "float32", "float64")
SILU_D = (8, 100, 1024, 1032, 2048, 8192)
SILU_ROWS = (1, 5, 300, 70000)
MAX_SILU_ELEMENTS = 1 << 27


def outputs() -> dict[str, torch.Tensor]:
    import fusedops

    out: dict[str, torch.Tensor] = {}
    g = torch.Generator(device="cuda").manual_seed(0)

    def randn(*shape: int, dtype: torch.dtype) -> torch.Tensor:
        return torch.randn(*shape, device="cuda", dtype=dtype, generator=g)

    for name in NORM_DTYPES:
        dt = getattr(torch, name)
        for hidden in NORM_HIDDEN:
            for rows in NORM_ROWS:
                x, r, w = (
                    randn(rows, hidden, dtype=dt),
                    randn(rows, hidden, dtype=dt),
                    randn(hidden, dtype=dt),
                )
                out[f"rms_norm {name} {rows}x{hidden}"] = fusedops.rms_norm(x, w, 1e-6).cpu()
                o, ro = fusedops.fused_add_rms_norm(x, r, w, 1e-6)
                out[f"fused_add_rms_norm {name} {rows}x{hidden}"] = torch.cat([o.cpu(), ro.cpu()])
    for name in SILU_DTYPES:
        dt = getattr(torch, name)
        for d in SILU_D:
            for rows in SILU_ROWS:
                if rows * d > MAX_SILU_ELEMENTS:
                    continue
                x = randn(rows, 2 * d, dtype=dt)
                out[f"silu_and_mul {name} {rows}x{d}"] = fusedops.silu_and_mul(x).cpu()
                # One element into its storage: off 16-byte alignment, the scalar path.
                xm = randn(rows * 2 * d + 1, dtype=dt)[1:].view(rows, 2 * d)
                out[f"silu_and_mul misaligned {name} {rows}x{d}"] = fusedops.silu_and_mul(xm).cpu()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    save = sub.add_parser("save", help="run every op under the installed build, write outputs")
    save.add_argument("out")
    compare = sub.add_parser("compare", help="compare two saved files bit for bit")
    compare.add_argument("a")
    compare.add_argument("b")
    args = parser.parse_args(argv)
    if args.cmd == "save":
        if not torch.cuda.is_available():
            parser.error("save needs a CUDA GPU")
        result = outputs()
        torch.save(result, args.out)
        print(f"saved {len(result)} outputs to {args.out}")
        return 0
    a, b = torch.load(args.a), torch.load(args.b)
    if a.keys() != b.keys():
        print(f"different output sets: {sorted(a.keys() ^ b.keys())[:10]}")
        return 1
    differ = [k for k in a if not torch.equal(a[k], b[k])]
    print(
        f"{len(a)} outputs compared, {len(differ)} differ" + (f": {differ[:10]}" if differ else "")
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
