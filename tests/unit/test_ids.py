"""core.session.ids: MiMo v2 ID minting, D10 monotonicity, timestamps (behavior.md#ids)."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mimo_sidecar.core.session.ids import BASE62, V1_CYCLE_MS, IdMinter, has_prefix, is_v2, timestamp_of
from mimo_sidecar.core.session.ordering import is_mimo_v2_message_id

T0 = 1_700_000_000_000


def zero_bytes(n: int) -> bytes:
    return bytes(n)


def counting_bytes():
    state = {"next": 0}

    def produce(n: int) -> bytes:
        out = bytes((state["next"] + i) % 256 for i in range(n))
        state["next"] += n
        return out

    return produce


def test_first_id_of_a_millisecond_has_counter_1():
    minter = IdMinter(zero_bytes)
    assert minter.ascending("msg", T0) == "msg_g0018bcfe56800001" + "0" * 9


def test_next_millisecond_resets_the_counter():
    minter = IdMinter(zero_bytes)
    minter.ascending("msg", T0)
    assert minter.ascending("msg", T0 + 1).startswith("msg_g0018bcfe56801001")


def test_counter_is_shared_by_all_prefixes():
    minter = IdMinter(zero_bytes)
    assert minter.ascending("msg", T0).startswith("msg_g0018bcfe56800001")
    assert minter.ascending("prt", T0).startswith("prt_g0018bcfe56800002")
    assert minter.ascending("msg", T0).startswith("msg_g0018bcfe56800003")


def test_random_suffix_is_each_byte_mod_62():
    minter = IdMinter(lambda n: bytes([0, 61, 62, 123, 124, 255, 10, 36, 200][:n]))
    suffix = minter.ascending("msg", T0)[-9:]
    assert suffix == "".join(BASE62[b % 62] for b in [0, 61, 62, 123, 124, 255, 10, 36, 200])
    assert suffix == "0z0z07AaE"


def test_payload_is_26_characters_and_matches_the_v2_message_format():
    minted = IdMinter().ascending("msg", T0)
    assert len(minted.split("_", 1)[1]) == 26
    assert is_mimo_v2_message_id(minted)
    assert is_v2(minted)


def test_ascending_ids_sort_in_minting_order():
    minter = IdMinter(counting_bytes())
    minted = [minter.ascending("msg", T0 + i // 3) for i in range(30)]
    assert minted == sorted(minted)


def test_d10_clock_regression_still_increases():
    minter = IdMinter(zero_bytes)
    first = minter.ascending("msg", T0)
    second = minter.ascending("msg", T0 - 5000)  # the clock went backwards 5 s
    assert second > first
    assert int(second[5:21], 16) == int(first[5:21], 16) + 1


def test_d10_more_than_4095_ids_per_millisecond():
    minter = IdMinter(zero_bytes)
    minted = [minter.ascending("msg", T0) for _ in range(5000)]
    ns = [int(m[5:21], 16) for m in minted]
    assert ns == list(range(T0 * 4096 + 1, T0 * 4096 + 5001))
    # The next millisecond would compute T0+1 ms, counter 1, which is below the last n.
    following = minter.ascending("msg", T0 + 1)
    assert int(following[5:21], 16) == ns[-1] + 1


@given(st.lists(st.integers(min_value=0, max_value=2**40), min_size=1, max_size=60))
def test_n_strictly_increases_whatever_the_clock_does(clock):
    minter = IdMinter(zero_bytes)
    minted = [minter.ascending("msg", t) for t in clock]
    assert minted == sorted(minted)
    assert len(set(minted)) == len(minted)


def test_descending_is_bitwise_not_and_sorts_newest_first():
    minter = IdMinter(zero_bytes)
    older = minter.descending("ses", T0)
    newer = minter.descending("ses", T0 + 1)
    n = T0 * 4096 + 1
    assert older == "ses_-" + format(~n & (2**64 - 1), "016x") + "0" * 9
    assert newer < older
    assert older < "ses_0"  # '-' sorts before every v1 hex payload


def test_v2_ascending_sorts_after_v1():
    assert IdMinter().ascending("msg", T0) > "msg_ffffffffffff" + "z" * 14


def test_timestamp_of_v2():
    minter = IdMinter()
    assert timestamp_of(minter.ascending("msg", T0)) == T0
    assert timestamp_of(minter.ascending("msg", T0)) == T0  # counter 2, same ms
    assert timestamp_of(minter.descending("ses", T0 + 7)) == T0 + 7
    assert timestamp_of("msg_g0018bcfe56801001abcdefghi") == T0 + 1


def _v1(ts: int, counter: int = 1) -> str:
    return "msg_" + format((ts * 4096 + counter) & (2**48 - 1), "012x") + "A" * 14


def test_26th_v1_wrap_is_the_documented_instant():
    wrap = 26 * V1_CYCLE_MS
    assert dt.datetime.fromtimestamp(wrap / 1000, dt.UTC).isoformat() == "2026-08-14T11:19:55.136000+00:00"


def test_timestamp_of_v1_recovers_the_latest_cycle_not_after_now():
    created = 26 * V1_CYCLE_MS - 8 * 86_400_000  # 2026-08-06, before the wrap
    after_wrap = 26 * V1_CYCLE_MS + 1000
    assert timestamp_of(_v1(created), now_ms=created + 60_000) == created
    assert timestamp_of(_v1(created), now_ms=after_wrap + 5) == created
    assert timestamp_of(_v1(after_wrap), now_ms=after_wrap + 5) == after_wrap
    # The behavior.md#id-v1: the newer ID sorts first as a string.
    assert _v1(after_wrap) < _v1(created)


def test_timestamp_of_v1_needs_now():
    with pytest.raises(ValueError):
        timestamp_of(_v1(T0))


@pytest.mark.parametrize(
    "bad", ["msg", "msg_", "msg_short", "msg_" + "x" * 26, "msg_h0018bcfe56800001abcdefghi"]
)
def test_timestamp_of_rejects_non_ids(bad):
    with pytest.raises(ValueError):
        timestamp_of(bad, now_ms=T0)


def test_prefix_checks():
    assert has_prefix("msg_anything", "msg")
    assert not has_prefix("prt_anything", "msg")
    with pytest.raises(ValueError):
        IdMinter().ascending("", T0)
    with pytest.raises(ValueError):
        IdMinter().ascending("a_b", T0)
