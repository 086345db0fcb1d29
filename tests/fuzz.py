"""How many examples the property tests run: the default profile (`make test`, CI) and the long
profile (`make fuzz`).

    from tests.fuzz import examples

    @settings(max_examples=examples(100), deadline=None)   # 100 in `make test`, 500 in `make fuzz`
    @given(...)
    def test_x(...): ...

- Default: the count the test names. It is sized to find the regressions the test exists for in a
  suite that stays under two minutes (README.md, *Commands*); the slower properties were cut to a
  third or a half of their earlier counts, never below a quarter.
- Long (`make fuzz`, which sets `MIMO_FUZZ_EXAMPLES`): `LONG_FACTOR` times that count, so every
  property runs well above its earlier default; a test whose long run is a count of its own (the
  wire property test, the sliced parser's) passes `long=LONG_EXAMPLES`, the number `make fuzz`
  sets (`FUZZ_EXAMPLES`, 3000 unless given).
- A `@given` test without its own `max_examples` runs Hypothesis's 100 by default and
  `100 * LONG_FACTOR` in the long profile (the `fuzz` profile, loaded by tests/conftest.py).

tests/conftest.py also marks every Hypothesis test `fuzz`: `make fuzz` runs exactly those
(`pytest -m fuzz`), so a new property test joins the long run without being listed anywhere.
"""

from __future__ import annotations

import os

ENV_VAR = "MIMO_FUZZ_EXAMPLES"
LONG_EXAMPLES = int(os.environ.get(ENV_VAR, "0") or "0")
LONG = LONG_EXAMPLES > 0
LONG_FACTOR = 5
HYPOTHESIS_DEFAULT = 100  # Hypothesis's own max_examples


def examples(default: int, *, long: int | None = None) -> int:
    """`default` examples, or the long profile's count under `make fuzz` (`long`, or
    `LONG_FACTOR * default` when the test names none)."""
    if not LONG:
        return default
    return long if long is not None else default * LONG_FACTOR
