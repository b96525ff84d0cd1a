"""The one grammar for CUDA arch lists: '7.5 8.0 9.0 12.0+PTX' (';' also separates).

Used for the matrix data, TORCH_CUDA_ARCH_LIST, BUILD_INFO and the gate's
SASS/PTX check, so they can never disagree on what a list means.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"^(\d+)\.(\d+)(\+PTX)?$")
# The first CUDA release that can target archs newer than CUDA 12.0 knows.
FIRST_CUDA_FOR_ARCH = {(10, 0): (12, 8), (10, 3): (12, 9), (11, 0): (13, 0), (12, 0): (12, 8)}
# CUDA 13 dropped sm_50 .. sm_72.
CUDA13_MIN_ARCH = (7, 5)


class ArchListError(ValueError):
    """An arch list that does not parse or that its CUDA cannot build."""


@dataclass(frozen=True, order=True)
class Arch:
    major: int
    minor: int
    ptx: bool = False  # also embed PTX for this arch (JIT on newer GPUs)

    @property
    def sass(self) -> str:
        return f"sm_{self.major}{self.minor}"

    @property
    def compute(self) -> str:
        return f"compute_{self.major}{self.minor}"

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}{'+PTX' if self.ptx else ''}"


@dataclass(frozen=True)
class ArchList:
    archs: tuple[Arch, ...]

    @classmethod
    def parse(cls, text: str | list[str] | tuple[str, ...]) -> ArchList:
        tokens = text.replace(";", " ").split() if isinstance(text, str) else list(text)
        if not tokens:
            raise ArchListError("empty arch list: expected e.g. '7.5 8.0 9.0+PTX'")
        archs = []
        for token in tokens:
            m = _TOKEN.match(token)
            if not m:
                raise ArchListError(f"arch {token!r}: expected a form like 8.0 or 9.0+PTX")
            archs.append(Arch(int(m.group(1)), int(m.group(2)), bool(m.group(3))))
        keys = [(a.major, a.minor) for a in archs]
        if keys != sorted(set(keys)):
            raise ArchListError(f"arch list {text!r}: must be ascending without duplicates")
        return cls(tuple(archs))

    def check_cuda(self, cuda: tuple[int, int]) -> None:
        """Raise ArchListError when CUDA `cuda` cannot compile one of these archs."""
        for arch in self.archs:
            key = (arch.major, arch.minor)
            if cuda >= (13, 0) and key < CUDA13_MIN_ARCH:
                raise ArchListError(
                    f"CUDA {cuda[0]}.{cuda[1]} cannot target {arch.sass} (needs >= 7.5)"
                )
            need = FIRST_CUDA_FOR_ARCH.get(key, (0, 0))
            if cuda < need:
                raise ArchListError(
                    f"{arch.sass} needs CUDA >= {need[0]}.{need[1]}, not {cuda[0]}.{cuda[1]}"
                )

    @property
    def sass(self) -> list[str]:
        return [a.sass for a in self.archs]

    @property
    def ptx(self) -> list[str]:
        return [a.compute for a in self.archs if a.ptx]

    def as_list(self) -> list[str]:
        return [str(a) for a in self.archs]

    def __str__(self) -> str:
        return " ".join(self.as_list())
