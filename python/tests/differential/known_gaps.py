"""Known gaps, not yet fixed: cases where lazulite differs from MLX 0.32.4 and should
not. The test marks each entry xfail(strict=True): it fails as soon as every case of the
entry agrees with MLX, so an entry must be removed when its fix lands, and an entry
covers only the cases and kinds of difference it names. Same fields as the allow-list,
with the reason; `group` sorts them for the report.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Gap:
    fn: str
    labels: tuple
    kinds: tuple
    reason: str

    @property
    def group(self):
        return self.reason.split(":")[0].split(" (")[0]


MISSING = "missing function"

GAPS = [
    # Missing functions.
    Gap("qqmm", ("*",), ("missing",), MISSING + " (MLX's CPU build raises NYI for it)"),
    Gap("gather_qqmm", ("*",), ("missing",), MISSING + " (MLX's CPU build raises NYI for it)"),
    Gap("snippet.nn_QQLinear", ("*",), ("exception-class",),
        MISSING + ": nn.QQLinear (MLX's CPU build raises NYI for its product)"),
    # Values.
]
