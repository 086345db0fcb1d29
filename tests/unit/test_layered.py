"""core/formats/layered: the carried call IDs and result ranks grow by layers and answer as the
plain set and dict they replace, whatever the sizes of the layers added."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from mimo_sidecar.core.formats.layered import LayeredRank, LayeredSet
from tests.fuzz import examples

batches = st.lists(st.integers(min_value=0, max_value=40), min_size=1, max_size=60)


@settings(max_examples=examples(100), deadline=None)
@given(sizes=batches)
def test_a_layered_set_answers_as_the_set_of_everything_added(sizes: list[int]) -> None:
    layered, plain, n = LayeredSet(), set(), 0
    for size in sizes:
        added = {f"call_{n + i}" for i in range(size)}
        n += size
        layered = layered.plus(added)
        plain |= added
        assert len(layered) == len(plain)
        assert all(c in layered for c in plain) and f"call_{n}" not in layered
        assert len(layered._layers) <= math.log2(max(len(plain), 1)) + 2  # few layers, not one a cut


@settings(max_examples=examples(100), deadline=None)
@given(sizes=batches)
def test_a_layered_rank_answers_as_the_dict_it_replaces(sizes: list[int]) -> None:
    layered, plain, n = LayeredRank(), {}, 0
    for size in sizes:
        added = {f"call_{n + i}": len(plain) + i for i in range(size)}
        n += size
        layered = layered.plus(added)
        plain.update(added)
        assert len(layered) == len(plain)
        assert all(k in layered and layered[k] == v for k, v in plain.items())
        assert f"call_{n}" not in layered


def test_a_kept_layer_never_changes_when_a_newer_one_is_added() -> None:
    older = LayeredSet().plus({"a", "b"})
    newer = older.plus({"c"})
    assert "c" in newer and "c" not in older and len(older) == 2
    ranks = LayeredRank().plus({"a": 0})
    more = ranks.plus({"b": 1})
    assert "b" not in ranks and more["b"] == 1 and more["a"] == 0
