"""Known gaps, not yet fixed: cases where lazulite differs from MLX 0.32.4 and should
not. The test marks each entry xfail(strict=True): it fails as soon as every case of the
entry agrees with MLX, so an entry must be removed when its fix lands, and an entry
cannot hide a case that is not listed. Same fields as the allow-list, with the reason.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Gap:
    fn: str
    labels: tuple
    kinds: tuple
    reason: str


GAPS = [
]
