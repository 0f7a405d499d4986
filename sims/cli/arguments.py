"""Types of the command line's numeric options: refused at parse time, naming the range.

Each factory returns an ``argparse`` ``type=`` function. A refused value raises
``argparse.ArgumentTypeError``, which argparse reports as
``pruneleak demo: error: argument --images: must be an integer in [1, inf). Got 0 instead.``
with exit status 2, before any work starts. Only what is the command line's own business
is checked here (a number at all, finite, its sign, an integer); the library's
configurations stay the source of truth for their ranges (a pruning rate in [0, 1], a
candidate count that fits the data set).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def _interval(low, high, low_open: bool, high_open: bool) -> str:
    left = "(" if low is None or low_open else "["
    right = ")" if high is None or high_open else "]"
    return f"{left}{'-inf' if low is None else low}, {'inf' if high is None else high}{right}"


def integer(low: int | None = None, high: int | None = None) -> Callable[[str], int]:
    """An integer in ``[low, high]`` (``None``: unbounded); ``1e4`` is read as 10000.

    >>> integer(low=1)("1e4")
    10000
    >>> integer(low=1)("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be an integer in [1, inf). Got 0 instead.
    """
    interval = _interval(low, high, False, False)

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            try:
                number = float(text)
            except ValueError:
                number = math.nan
            if not number.is_integer():
                raise argparse.ArgumentTypeError(
                    f"must be an integer in {interval}. Got {text!r} instead."
                ) from None
            value = int(number)
        if (low is not None and value < low) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(
                f"must be an integer in {interval}. Got {text} instead."
            )
        return value

    return parse


def real(
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> Callable[[str], float]:
    """A finite float in the interval from ``low`` to ``high`` (closed unless ``*_open``).

    NaN and infinities are refused whatever the bounds.

    >>> real(low=0, low_open=True)("1e-3")
    0.001
    >>> real(low=0)("nan")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a finite number in [0, inf). Got nan instead.
    """
    interval = _interval(low, high, low_open, high_open)

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"must be a finite number in {interval}. Got {text!r} instead."
            ) from None
        too_low = low is not None and (value < low or (low_open and value == low))
        too_high = high is not None and (value > high or (high_open and value == high))
        if not math.isfinite(value) or too_low or too_high:
            raise argparse.ArgumentTypeError(
                f"must be a finite number in {interval}. Got {text} instead."
            )
        return value

    return parse


#: A count of at least one (images, rounds, samples, iterations).
positive_int = integer(low=1)
#: A count that may be zero, or a seed.
nonnegative_int = integer(low=0)
#: Any finite number: the library checks its range.
finite_float = real()
#: A finite number >= 0 (a noise level).
nonnegative_float = real(low=0)
#: A finite number > 0 (a scale, a learning rate).
positive_float = real(low=0, low_open=True)
