"""Progress of long loops, on a terminal and off one (:func:`progress`).

A tqdm bar is of no use where stderr is not a terminal (a log file, CI, a cluster job):
with ``disable=None`` tqdm turns itself off there, and a long command printed nothing for
many minutes. :func:`progress` wraps a loop as ``tqdm`` does and picks what to show:

* stderr is a terminal: a tqdm bar, as before;
* in a Jupyter kernel: ``tqdm.auto``'s bar with ``disable=None``, as before;
* anywhere else: a :class:`ProgressLines`, which writes lines such as ::

      fig3: 3/30 jobs, 1m20s elapsed, ETA 12m00s
      fig3: 3/30 jobs, 2m20s elapsed, ETA 21m00s; job 4 running for 1m00s
      fig3: 30/30 jobs, done in 25m10s

  to stderr: one per finished item, but at most one every :data:`MIN_INTERVAL` seconds
  (a line held back is written by the heartbeat once that time has passed; a loop that
  ends within that time writes nothing), one when the last item finishes, and a
  heartbeat line (the second above) whenever :data:`HEARTBEAT` seconds pass without a
  line, however long an item runs. ``$PRUNELEAK_PROGRESS_SECONDS`` sets the heartbeat's
  period (and the least interval too when shorter than :data:`MIN_INTERVAL`).

``enabled=False`` (a command's ``--no-progress``, a library call's ``progress=False``)
shows nothing; ``True`` and ``None`` both mean "show it, as the stream allows".

The lines go straight to ``sys.stderr`` (looked up when the loop starts), where the bar
would have gone, and not through :mod:`logging`: library code leaves logging's
configuration to its caller, and the command line logs at WARNING unless ``-v``, which
would hide them. Results stay in the modules' ``logger.info`` records; these lines only
say how far a loop has come.

The heartbeat is a daemon thread per :class:`ProgressLines`, stopped by :meth:`ProgressLines.close`
(the end of the iteration, leaving a ``with`` block, or the object's collection: the
thread holds only a weak reference to it), so a loop that raises leaves none behind.

It lives in ``bounds``, the bottom layer, so that every layer may use it: the verifier's
claims (``bounds.claims``), the critics' training (``estimators``) and the simulations'
jobs, rounds and notebooks (``sims``). It needs tqdm only.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator

from tqdm.std import tqdm as std_tqdm

#: Seconds without a line after which the heartbeat writes one (a loop whose items take
#: longer still reports at least this often). ``$PRUNELEAK_PROGRESS_SECONDS`` overrides it.
HEARTBEAT = 60.0
#: Least seconds between two lines (the last item's aside), and before the first.
MIN_INTERVAL = 5.0
HEARTBEAT_ENV = "PRUNELEAK_PROGRESS_SECONDS"


def progress(
    iterable: Iterable | None = None,
    *,
    desc: str,
    total: int | None = None,
    unit: str = "it",
    initial: int = 0,
    enabled: bool | None = None,
    leave: bool = True,
    stream=None,
):
    """A progress display over ``iterable`` (or, without one, for ``update`` calls).

    Used like ``tqdm``: iterate over it, or call ``update(n)``; ``set_postfix(**values)``,
    ``set_postfix_str(text)``, ``close()`` and ``with`` work on whatever it returns: a
    tqdm bar when ``stream`` (default ``sys.stderr``) is a terminal or a Jupyter kernel's,
    else a :class:`ProgressLines` (module docstring). ``enabled=False`` returns a
    disabled tqdm, which shows nothing. ``total`` defaults to ``len(iterable)`` when it
    has one; ``initial`` counts items done by an earlier run (resume), which the ETA
    leaves out of its rate. ``leave`` is tqdm's (keep the bar once done).
    """
    stream = sys.stderr if stream is None else stream
    if total is None and iterable is not None and hasattr(iterable, "__len__"):
        total = len(iterable)
    kwargs = {"desc": desc, "total": total, "unit": unit, "initial": initial, "leave": leave}
    if enabled is False:
        return std_tqdm(iterable, disable=True, **kwargs)
    if _in_jupyter(stream):
        from tqdm.auto import tqdm as auto_tqdm  # the notebook's widget where it can

        return auto_tqdm(iterable, disable=None, **kwargs)
    if _isatty(stream):
        return std_tqdm(iterable, disable=False, file=stream, **kwargs)
    return ProgressLines(
        iterable, desc=desc, total=total, unit=unit, initial=initial, stream=stream
    )


def heartbeat_seconds() -> float:
    """:data:`HEARTBEAT`, or ``$PRUNELEAK_PROGRESS_SECONDS`` when set to a positive number."""
    text = os.environ.get(HEARTBEAT_ENV, "").strip()
    if not text:
        return HEARTBEAT
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"${HEARTBEAT_ENV} must be a positive number of seconds. Got {text!r}.")
    return value


def format_duration(seconds: float) -> str:
    """``42s``, ``1m20s``, ``2h05m``: whole seconds under an hour, minutes beyond.

    >>> format_duration(42.4), format_duration(80), format_duration(7500)
    ('42s', '1m20s', '2h05m')
    """
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def plural(unit: str) -> str:
    """``job`` -> ``jobs``, ``sparsity`` -> ``sparsities``; ``it`` and plurals stay."""
    if unit == "it" or unit.endswith("s"):
        return unit
    if unit.endswith("y") and unit[-2:-1] not in tuple("aeiou"):
        return unit[:-1] + "ies"
    return unit + "s"


class ProgressLines:
    """Progress as lines on a stream that is not a terminal (module docstring).

    ``clock`` (default ``time.monotonic``) gives the times; ``heartbeat`` (default
    :func:`heartbeat_seconds`) and ``min_interval`` (default the smaller of
    :data:`MIN_INTERVAL` and ``heartbeat``) the rate. With ``thread=False`` no heartbeat
    thread runs and :meth:`tick` is the caller's to call (the tests drive it with a fake
    clock); otherwise a daemon thread calls it every ``min_interval`` seconds.
    """

    def __init__(
        self,
        iterable: Iterable | None = None,
        *,
        desc: str,
        total: int | None = None,
        unit: str = "it",
        initial: int = 0,
        stream=None,
        clock: Callable[[], float] = time.monotonic,
        heartbeat: float | None = None,
        min_interval: float | None = None,
        thread: bool = True,
    ):
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)
        self.iterable = iterable
        self.desc, self.total, self.unit = desc, total, unit
        self.n = self.initial = initial
        self.postfix = ""
        self.stream = sys.stderr if stream is None else stream
        self.clock = clock
        self.heartbeat = heartbeat_seconds() if heartbeat is None else heartbeat
        self.min_interval = (
            min(MIN_INTERVAL, self.heartbeat) if min_interval is None else min_interval
        )
        self.closed = False
        self._lock = threading.RLock()
        self._start = self._last_item = clock()
        self._last_line: float | None = None
        self._pending = False  # items finished since the last line
        self._iterating = False
        self._exhausted = False  # the iterable ran out: done, whatever ``total`` said
        self._stop = threading.Event()
        self._thread = None
        if thread:
            self._thread = threading.Thread(
                target=_beat,
                args=(weakref.ref(self), self._stop, max(self.min_interval, 0.01)),
                name=f"progress heartbeat: {desc}",
                daemon=True,
            )
            self._thread.start()

    # -- tqdm's interface ---------------------------------------------------------------

    def __iter__(self) -> Iterator:
        if self.iterable is None:
            raise TypeError("ProgressLines was made without an iterable: call update().")
        self._iterating = True
        try:
            for item in self.iterable:
                yield item
                self.update()
            self._exhausted = True
        finally:
            self.close()

    def __len__(self) -> int:
        return self.total if self.total is not None else len(self.iterable)

    def __enter__(self) -> ProgressLines:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def update(self, n: int = 1) -> None:
        """Count ``n`` more finished items; write a line if the rate allows."""
        with self._lock:
            now = self.clock()
            self.n += n
            self._last_item = now
            self._pending = True
            if self.closed:
                return
            if self._since_line(now) >= self.min_interval or (
                self._complete() and self._shown(now)
            ):
                self._write(now)

    def set_postfix(self, ordered_dict=None, refresh: bool = True, **values) -> None:
        """Show ``name=value`` pairs in the next lines (as tqdm's ``set_postfix``)."""
        values = {**(ordered_dict or {}), **values}
        self.set_postfix_str(", ".join(f"{k}={v}" for k, v in values.items()))

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        """Show ``s`` in the next lines (as tqdm's ``set_postfix_str``)."""
        self.postfix = str(s)

    def close(self) -> None:
        """Stop the heartbeat; write the last line when an item finished since the last one."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            now = self.clock()
            if self._pending and self._shown(now):
                self._write(now, final=True)
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)  # it wakes every min_interval: never blocks for long

    # -- the rate ------------------------------------------------------------------------

    def tick(self) -> None:
        """What the heartbeat thread does every ``min_interval`` seconds: write the line
        held back by the rate limit once it may, or a heartbeat line when ``heartbeat``
        seconds have passed without one."""
        with self._lock:
            if self.closed:
                return
            now = self.clock()
            since = self._since_line(now)
            if (self._pending and since >= self.min_interval) or since >= self.heartbeat:
                self._write(now)

    def line(self, now: float | None = None, *, final: bool = False) -> str:
        """The line this object would write at time ``now`` (default: the clock's);
        ``final``: the one :meth:`close` writes, which gives no ETA."""
        now = self.clock() if now is None else now
        elapsed = now - self._start
        count = f"{self.n}/{self.total}" if self.total is not None else f"{self.n}"
        text = f"{self.desc}: {count} {plural(self.unit)}"
        if self.postfix:
            text += f" ({self.postfix})"
        if self._complete():
            return f"{text}, done in {format_duration(elapsed)}"
        if final:
            return f"{text}, stopped after {format_duration(elapsed)}"
        text += f", {format_duration(elapsed)} elapsed"
        done_here = self.n - self.initial
        if self.total is not None and done_here > 0:
            text += f", ETA {format_duration(elapsed / done_here * (self.total - self.n))}"
        running = now - self._last_item
        if not self._pending and running >= self.min_interval:
            if self._iterating:  # one item at a time: the next one is running
                text += f"; {self.unit} {self.n + 1} running for {format_duration(running)}"
            elif done_here > 0:
                text += f"; last {self.unit} finished {format_duration(running)} ago"
            else:
                text += f"; no {self.unit} finished yet"
        return text

    def _complete(self) -> bool:
        return self._exhausted or (self.total is not None and self.n >= self.total)

    def _shown(self, now: float) -> bool:
        """Whether the loop shows lines yet: one was written, or it has run for
        ``min_interval`` seconds (a quicker loop writes nothing at all)."""
        return self._last_line is not None or now - self._start >= self.min_interval

    def _since_line(self, now: float) -> float:
        return now - (self._start if self._last_line is None else self._last_line)

    def _write(self, now: float, *, final: bool = False) -> None:
        text = self.line(now, final=final)
        self._last_line, self._pending = now, False
        try:
            self.stream.write(text + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # the stream was closed under us: progress is optional
            pass


def _beat(ref: weakref.ref, stop: threading.Event, period: float) -> None:
    """The heartbeat thread: :meth:`ProgressLines.tick` every ``period`` seconds until
    ``stop`` is set or the object is gone."""
    while not stop.wait(period):
        lines = ref()
        if lines is None:
            return
        lines.tick()
        del lines


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _in_jupyter(stream) -> bool:
    """True for a Jupyter kernel's output stream (ipykernel's ``OutStream``)."""
    return type(stream).__module__.startswith("ipykernel")
