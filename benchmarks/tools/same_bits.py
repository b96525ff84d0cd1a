"""Do two builds give the same bits? Hash every op's CUDA outputs under one build, compare.

    PYTHONPATH=WHEEL_A_DIR python benchmarks/tools/same_bits.py save a.json
    PYTHONPATH=WHEEL_B_DIR python benchmarks/tools/same_bits.py save b.json
    python benchmarks/tools/same_bits.py compare a.json b.json   # exit 1 if any output differs

For an A/B of a kernel change that must not change results. Inputs come from a
seeded generator, so both runs see the same values; each output is stored as
its dtype, shape and a SHA-256 of its raw bytes (so -0.0 and +0.0, or two NaN
payloads, count as different), with the build, torch and GPU that made it.
`compare` refuses two files from the same build (a PYTHONPATH slip would pass
trivially) or from different torch versions or GPUs (different inputs or
hardware, not a different build).

Every op runs forward and backward (the backward ops called directly, with
seeded gradients). Shapes cover the forward's plans: float32 rows of 1, 2 and 4 vectors a thread
that fill a block (512-16384) and rows with threads past the row (1000, 4100,
12288), rows too long for the single-pass kernel (20480: the two-pass kernel
for float32 and the 16-bit fused add), rows that are not whole 16-byte vectors
(1022, 4100 for 16-bit: the scalar kernel), one row, a few, and more rows than
any GPU has SMs; and silu_and_mul's vectorised, short-row and misaligned paths.
A script, not a test: it needs a GPU.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys

import torch

NORM_DTYPES = ("bfloat16", "float16", "float32")
NORM_HIDDEN = (64, 512, 1000, 1022, 1024, 2048, 4096, 4100, 8192, 12288, 16384, 20480)
NORM_ROWS = (1, 7, 300)
SILU_DTYPES = ("bfloat16", "float16", "float32", "float64")
SILU_D = (8, 100, 1024, 1032, 2048, 8192)
SILU_ROWS = (1, 5, 300, 70000)
MAX_SILU_ELEMENTS = 1 << 24
SILU_EDGES = (
    -1e4,
    -104.0,
    -100.0,
    -89.0,
    -88.0,
    -87.5,
    -87.0,
    -86.0,
    -20.0,
    0.0,
    -0.0,
    3.0,
    90.0,
    float("inf"),
    float("-inf"),
    float("nan"),
)


def digest(t: torch.Tensor) -> str:
    raw = t.detach().contiguous().cpu().view(torch.uint8)
    return f"{t.dtype} {tuple(t.shape)} {hashlib.sha256(raw.numpy().tobytes()).hexdigest()}"


def outputs() -> dict[str, str]:
    import fusedops

    ops = torch.ops.fusedops
    out: dict[str, str] = {}
    g = torch.Generator(device="cuda").manual_seed(0)

    def randn(*shape: int, dtype: torch.dtype) -> torch.Tensor:
        return torch.randn(*shape, device="cuda", dtype=dtype, generator=g)

    for name in NORM_DTYPES:
        dt = getattr(torch, name)
        for hidden in NORM_HIDDEN:
            for rows in NORM_ROWS:
                x, r = randn(rows, hidden, dtype=dt), randn(rows, hidden, dtype=dt)
                w = randn(hidden, dtype=dt)
                out[f"rms_norm {name} {rows}x{hidden}"] = digest(fusedops.rms_norm(x, w, 1e-6))
                o, ro = fusedops.fused_add_rms_norm(x, r, w, 1e-6)
                out[f"fused_add_rms_norm {name} {rows}x{hidden}"] = digest(o)
                out[f"fused_add_rms_norm residual {name} {rows}x{hidden}"] = digest(ro)
                go, gr = randn(rows, hidden, dtype=dt), randn(rows, hidden, dtype=dt)
                gx, gw = ops.rms_norm_backward(go, x, w, 1e-6)
                out[f"rms_norm_backward x {name} {rows}x{hidden}"] = digest(gx)
                out[f"rms_norm_backward weight {name} {rows}x{hidden}"] = digest(gw)
                gs, gw = ops.fused_add_rms_norm_backward(go, gr, ro, w, 1e-6)
                out[f"fused_add_rms_norm_backward sum {name} {rows}x{hidden}"] = digest(gs)
                out[f"fused_add_rms_norm_backward weight {name} {rows}x{hidden}"] = digest(gw)
    for name in SILU_DTYPES:
        dt = getattr(torch, name)
        for d in SILU_D:
            for rows in SILU_ROWS:
                if rows * d > MAX_SILU_ELEMENTS:
                    continue
                x = randn(rows, 2 * d, dtype=dt)
                out[f"silu_and_mul {name} {rows}x{d}"] = digest(fusedops.silu_and_mul(x))
                go = randn(rows, d, dtype=dt)
                out[f"silu_and_mul_backward {name} {rows}x{d}"] = digest(
                    ops.silu_and_mul_backward(go, x)
                )
                # One element into its storage: off 16-byte alignment, the scalar path.
                xm = randn(rows * 2 * d + 1, dtype=dt)[1:].view(rows, 2 * d)
                out[f"silu_and_mul misaligned {name} {rows}x{d}"] = digest(
                    fusedops.silu_and_mul(xm)
                )
        # Gates where 1 + exp(-a) leaves the normal range (a below about -87),
        # infinities and NaN, at every position of a 16-byte vector.
        edge = torch.tensor(SILU_EDGES, device="cuda").to(dt)
        # 128 rows make a small launch, 65536 rows a large one.
        for rows in (128, 65536):
            x = torch.stack([edge.roll(k) for k in range(16)]).repeat(rows // 16, 2)
            go = randn(rows, 16, dtype=dt)
            out[f"silu_and_mul edges {name} {rows}x16"] = digest(fusedops.silu_and_mul(x))
            out[f"silu_and_mul_backward edges {name} {rows}x16"] = digest(
                ops.silu_and_mul_backward(go, x)
            )
    return out


def identity() -> dict[str, str]:
    import fusedops

    info = getattr(fusedops, "BUILD_INFO", {})
    return {
        "fusedops": f"{fusedops.__version__} git {info.get('git_sha', '?')} at {fusedops.__file__}",
        "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name(0),
    }


def compare(a: dict, b: dict) -> int:
    for key in ("fusedops", "torch", "gpu"):
        print(f"{key:9} A: {a['made_by'][key]}\n{'':9} B: {b['made_by'][key]}")
    if a["made_by"]["fusedops"] == b["made_by"]["fusedops"]:
        print("refused: both files come from the same build")
        return 2
    for key in ("torch", "gpu"):
        if a["made_by"][key] != b["made_by"][key]:
            print(f"refused: different {key}; only the fusedops build may differ")
            return 2
    ha, hb = a["outputs"], b["outputs"]
    if ha.keys() != hb.keys():
        print(f"different output sets: {sorted(ha.keys() ^ hb.keys())[:10]}")
        return 1
    differ = [k for k in ha if ha[k] != hb[k]]
    print(
        f"{len(ha)} outputs compared, {len(differ)} differ" + (f": {differ[:10]}" if differ else "")
    )
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    save = sub.add_parser("save", help="run every op under the importable build, write hashes")
    save.add_argument("out")
    cmp = sub.add_parser("compare", help="compare two saved files")
    cmp.add_argument("a")
    cmp.add_argument("b")
    args = parser.parse_args(argv)
    if args.cmd == "save":
        if not torch.cuda.is_available():
            parser.error("save needs a CUDA GPU")
        result = {"made_by": identity(), "outputs": outputs()}
        with open(args.out, "w") as f:
            json.dump(result, f, indent=0)
        print(f"saved {len(result['outputs'])} output hashes to {args.out}")
        return 0
    loaded = []
    for path in (args.a, args.b):
        try:
            with open(path) as f:
                loaded.append(json.load(f))
        except (OSError, ValueError) as e:
            parser.error(f"cannot read {path}: {e}")
    return compare(*loaded)


if __name__ == "__main__":
    sys.exit(main())
