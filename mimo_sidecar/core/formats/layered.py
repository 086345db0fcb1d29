"""Immutable sets and maps that grow by layers, for the state a kept prefix carries across its cut.

A request converted from a kept prefix (`request/build_memo`) carries, from the messages before the
cut, every call ID they issued and the rank of every call's first result. Copying those into the
next pass and again into the next cut's state cost a build after one step of a 5,000-step turn more
than its whole conversion of that step. Here each cut adds one small layer instead, and a layer
that grows to the size of the one below it is merged with it (as a log-structured merge does), so
that the layers stay few (about log2 of the size) and each ID is copied O(log n) times over the
session's life, not once per request.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


class LayeredSet:
    """A frozen set of strings in layers, newest last."""

    __slots__ = ("_layers",)

    def __init__(self, layers: tuple[frozenset[str], ...] = ()) -> None:
        self._layers = layers

    def __contains__(self, item: object) -> bool:
        return any(item in layer for layer in self._layers)

    def __len__(self) -> int:
        return sum(map(len, self._layers))

    def plus(self, added: Iterable[str]) -> LayeredSet:
        """This set with `added` (the caller's own set, copied; not yet in this set)."""
        top = frozenset(added)
        if not top:
            return self
        layers = list(self._layers)
        while layers and len(layers[-1]) <= 2 * len(top):
            top = layers.pop() | top
        layers.append(top)
        return LayeredSet(tuple(layers))


class LayeredRank:
    """A frozen map of call ID -> rank in layers; a key is in one layer only."""

    __slots__ = ("_layers", "_size")

    def __init__(self, layers: tuple[Mapping[str, int], ...] = (), size: int = 0) -> None:
        self._layers = layers
        self._size = size

    def __contains__(self, key: object) -> bool:
        return any(key in layer for layer in self._layers)

    def __getitem__(self, key: str) -> int:
        for layer in reversed(self._layers):
            if key in layer:
                return layer[key]
        raise KeyError(key)

    def __len__(self) -> int:
        return self._size

    def plus(self, added: Mapping[str, int]) -> LayeredRank:
        """This map with `added` (keys not yet in it; copied)."""
        if not added:
            return self
        layers = list(self._layers)
        top: dict[str, int] = dict(added)
        while layers and len(layers[-1]) <= 2 * len(top):
            top = {**layers.pop(), **top}
        layers.append(top)
        return LayeredRank(tuple(layers), self._size + len(added))


class LayeredMap:
    """A frozen map of message ID -> token count in layers, a newer layer's value winning, with the
    sum of the values it maps (`total`): a kept prefix's shares of a request's size, which a request
    after one step adds to without copying them (`request/build_memo`)."""

    __slots__ = ("_layers", "total")

    def __init__(self, layers: tuple[dict[str, int], ...] = (), total: int = 0) -> None:
        self._layers = layers
        self.total = total

    def get(self, key: str, default: int = 0) -> int:
        for layer in reversed(self._layers):
            if key in layer:
                return layer[key]
        return default

    def plus(self, added: Mapping[str, int]) -> LayeredMap:
        """This map with `added` (copied), whose values replace those of keys already in it."""
        if not added:
            return self
        total = self.total + sum(value - self.get(key) for key, value in added.items())
        layers = list(self._layers)
        top: dict[str, int] = dict(added)
        while layers and len(layers[-1]) <= 2 * len(top):
            top = {**layers.pop(), **top}
        layers.append(top)
        return LayeredMap(tuple(layers), total)

    def as_dict(self) -> dict[str, int]:
        """Every key with its value, in the order the keys were first added."""
        merged: dict[str, int] = {}
        for layer in self._layers:
            merged.update(layer)
        return merged
