"""The allow-list: cases where lazulite deliberately differs from MLX 0.32.4 because it
does better. Each entry names a function, the case labels it covers (shell-style
patterns on the part of the case id after the "/"), the kinds of difference it allows
(see compare.py) and why. Nothing that is merely missing or wrong belongs here: that
goes to known_gaps.py. docs/differences.md describes these behaviours.

Cases where MLX itself crashes (a signal kills the process: SIGFPE on an integer
division by zero, SIGSEGV on a negative index past the start) are not listed: the
harness records them as "MLX crashes" whatever lazulite does.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Allowed:
    fn: str
    labels: tuple
    kinds: tuple
    why: str


BOUNDS = "MLX does not check indices: it reads or writes memory outside the array; lazulite raises IndexError"

ALLOWED = [
]
