"""Deterministic work counts for the tests that guard against blow-ups (no wall clock).

A test that compares ``time.perf_counter()`` against a limit fails on a loaded machine and
passes on a fast one whatever the code does. These helpers count work instead:

* :func:`count_calls` counts the Python and builtin function calls made while a callable runs
  (``sys.setprofile``'s ``call`` and ``c_call`` events). The count is the same on every
  machine and at every load; a loop that visits ``n`` things makes at least ``n`` calls.
  :class:`WorkLimitExceeded` stops the callable once it has made more than ``limit`` calls,
  so a runaway walk fails the test at once instead of running for hours.
* :func:`counting` wraps one function so that each of its calls adds what its arguments or
  result say (elements gathered, bytes decoded) to a tally, and stops the run at a budget.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Callable


class WorkLimitExceeded(BaseException):
    """Raised inside the counted code when it passes its work limit.

    A BaseException, like KeyboardInterrupt, so that no ``except Exception`` of the code under
    test can swallow it and carry on.
    """


@dataclass
class Counted:
    """What :func:`count_calls` saw: the calls made, and the result or the exception raised."""

    calls: int
    result: Any = None
    error: BaseException | None = None


def count_calls(fn: Callable[..., Any], *args: Any, limit: int | None = None, **kwargs: Any) -> Counted:
    """Run ``fn(*args, **kwargs)`` and count the function calls it makes.

    An exception of ``fn`` is returned in ``error`` (not raised), except
    :class:`WorkLimitExceeded`, raised when more than ``limit`` calls have been made.
    """
    calls = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event == "call" or event == "c_call":
            calls += 1
            if limit is not None and calls > limit:
                sys.setprofile(None)
                raise WorkLimitExceeded(f"more than {limit:,} function calls")

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        result = fn(*args, **kwargs)
    except WorkLimitExceeded:
        raise
    except Exception as exc:  # noqa: BLE001 - handed back to the test, which checks it
        return Counted(calls, error=exc)
    finally:
        sys.setprofile(previous)
    return Counted(calls, result=result)


@dataclass
class Tally:
    """Running total of one counted quantity; :func:`counting` adds to it."""

    budget: int | None = None
    total: int = 0
    calls: list[int] = field(default_factory=list)

    def add(self, n: int) -> None:
        self.total += n
        self.calls.append(n)
        if self.budget is not None and self.total > self.budget:
            raise WorkLimitExceeded(f"{self.total:,} counted, budget {self.budget:,}")


def counting(fn: Callable[..., Any], tally: Tally, *, before: Callable[..., int] | None = None,
             after: Callable[[Any], int] | None = None) -> Callable[..., Any]:
    """``fn`` with each call adding ``before(*args, **kwargs)`` (checked before the call runs, so
    a budget stops a huge request before it allocates) or ``after(result)`` to ``tally``."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if before is not None:
            tally.add(before(*args, **kwargs))
        result = fn(*args, **kwargs)
        if after is not None:
            tally.add(after(result))
        return result

    return wrapper
