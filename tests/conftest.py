"""Suite-wide: the Hypothesis profiles of tests/fuzz.py, and the `fuzz` mark `make fuzz` selects."""

from __future__ import annotations

import pytest
from hypothesis import settings

from tests import fuzz

# Tests with their own `max_examples` take it from `fuzz.examples`; this profile covers the rest.
settings.register_profile("fuzz", max_examples=fuzz.HYPOTHESIS_DEFAULT * fuzz.LONG_FACTOR)
if fuzz.LONG:
    settings.load_profile("fuzz")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
            item.add_marker(pytest.mark.fuzz)
