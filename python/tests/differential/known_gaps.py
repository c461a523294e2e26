"""Known gaps, not yet fixed: cases where lazulite differs from MLX 0.32.4 and should
not. `test_known_gaps_are_still_open` fails as soon as every case of an entry agrees with
MLX, so an entry must be removed when its fix lands, and an entry
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
    # Values.
]
