"""Positions inside a JSON value, and a copy with one of them replaced (for the bad-input properties)."""

from __future__ import annotations

import copy
from typing import Any

Path = tuple[Any, ...]


def positions(value: Any, prefix: Path = ()) -> list[Path]:
    """Every nested position of a JSON value (dict keys and list indexes), depth first."""
    out: list[Path] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        out.append((*prefix, key))
        out.extend(positions(child, (*prefix, key)))
    return out


def replaced(value: Any, path: Path, new: Any) -> Any:
    """A deep copy of `value` with the value at `path` replaced by `new`."""
    value = copy.deepcopy(value)
    holder = value
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = new
    return value
