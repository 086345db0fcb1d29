"""A response's lists encoded a slice at a time (`transport.jsonrpc_codec.dumps_in_pieces`), and the
slices a response after one step takes again from the previous one (`ListCache`): the bytes are
always those of one `orjson.dumps` of the whole result; over the handlers, a request/build after
each step of a long turn answers, in every format, what a sidecar that never built before answers."""

from __future__ import annotations

import itertools
import random
import subprocess
import sys
from array import array
from pathlib import Path
from typing import Any

import orjson
import pytest

from mimo_sidecar.core.formats import FORMATS
from mimo_sidecar.core.request.build_memo import BuildMemo
from mimo_sidecar.core.words import MAIN_AGENT
from mimo_sidecar.transport.jsonrpc_codec import (
    SLICE_BYTES,
    KnownLists,
    ListCache,
    dumps,
    dumps_in_pieces,
)
from tests.harness import Harness

VERSIONS = itertools.count()
KEYS = frozenset({"messages", "sources"})


def joined(pieces: tuple[Any, ...]) -> bytes:
    return b"".join(bytes(p) for p in pieces)


@pytest.mark.parametrize("n", [0, 1, 31, 32, 33, 500, 5000])
def test_a_list_in_slices_is_the_whole_lists_json(n: int) -> None:
    rng = random.Random(n)
    payload = {
        "revision": 3,
        "messages": [{"role": "tool", "text": "x" * rng.randint(0, 9000), "i": i} for i in range(n)],
        "sources": [f"msg_{i}" for i in range(n)],
        "warnings": ["w"],
        "empty": {},
    }
    pieces = dumps_in_pieces(payload, KEYS)
    assert joined(pieces) == orjson.dumps(payload)
    if n > 100:  # sliced, each slice near its target size
        sizes = [len(p) for p in pieces if len(p) > 1]
        assert len(sizes) > 2 and max(sizes[3:]) < 2 * SLICE_BYTES + 9000  # after the key and the first
    assert joined(dumps_in_pieces({}, KEYS)) == b"{}"


def test_a_slice_the_standard_library_encodes_writes_the_same_values() -> None:
    """A lone surrogate leaves orjson for that slice only: the JSON reads back as the values."""
    items: list[Any] = [{"text": "ok", "i": i} for i in range(200)]
    items[150] = {"text": "cut \udc00 here", "i": 150}
    payload = {"messages": items}
    encoded = joined(dumps_in_pieces(payload, KEYS))
    assert encoded == dumps(payload)
    assert orjson.loads(encoded.replace(b"\\udc00", b"?"))["messages"][150]["text"] == "cut ? here"


def test_random_edits_with_the_cache_encode_as_the_whole() -> None:
    """Appends, edits anywhere (a new version), truncations and a list replaced: every encode with
    the cache is the whole JSON, and the slices of an unchanged run are reused (the same bytes
    objects), so a step costs the slices it touches."""
    for seed in range(30):
        rng = random.Random(seed)
        items: list[Any] = []
        versions: list[int] = []
        cache = ListCache()
        reused_any = False
        for _ in range(120):
            op = rng.random()
            if op < 0.6 or not items:
                for _ in range(rng.randint(1, rng.choice([3, 60]))):
                    items.append({"t": "x" * rng.randint(0, rng.choice([100, 4000, 70000])), "i": len(items)})
                    versions.append(next(VERSIONS))
            elif op < 0.8:
                i = rng.randrange(len(items))
                items[i] = {"t": "changed", "i": i}
                versions[i] = next(VERSIONS)
            elif op < 0.93:
                k = rng.randint(1, min(50, len(items)))
                del items[-k:], versions[-k:]
            else:
                items = [{"new": i} for i in range(rng.randint(0, 100))]
                versions = [next(VERSIONS) for _ in items]
            payload = {"n": 1, "messages": items, "sources": [str(i) for i in range(len(items))]}
            before = {id(p) for piece in cache.lists.values() for p in piece.joined if len(p) > 1}
            pieces = dumps_in_pieces(payload, KEYS, KnownLists(KEYS, array("q", versions), cache))
            assert joined(pieces) == orjson.dumps(payload), seed
            reused_any |= any(id(p) in before for p in pieces)
        assert reused_any, seed


def test_a_list_whose_versions_do_not_fit_is_encoded_without_the_cache() -> None:
    cache = ListCache()
    items = [{"i": i} for i in range(100)]
    known = KnownLists(KEYS, array("q", range(100)), cache)
    assert joined(dumps_in_pieces({"messages": items}, KEYS, known)) == orjson.dumps({"messages": items})
    changed = [{"i": -i} for i in range(99)]  # other items, and one fewer than the versions say
    assert joined(dumps_in_pieces({"messages": changed}, KEYS, known)) == orjson.dumps({"messages": changed})
    other = {"view": items, "messages": items}  # a list not under the known keys keeps no slices
    assert joined(dumps_in_pieces(other, {"view", "messages"}, known)) == orjson.dumps(other)
    assert set(cache.lists) == {"messages"}


# -- over the handlers ------------------------------------------------------------------------------
SESSION = "ses_slices"


def step(n: int) -> list[dict[str, Any]]:
    """One tool step of a long turn (inline results) as an assistant message."""
    mid = f"msg_{100000 + n}"
    call = {
        "id": f"prt_{n}_c",
        "messageID": mid,
        "type": "tool",
        "callID": f"call_{n}",
        "tool": "bash",
        "state": {"status": "completed", "input": {"command": f"ls {n}"}, "output": f"file_{n}\n" * 40},
    }
    text = {"id": f"prt_{n}_t", "messageID": mid, "type": "text", "text": f"Step {n}.  "}
    info = {"id": mid, "sessionID": SESSION, "role": "assistant", "time": {"created": 1000 + n}}
    model = {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}
    return [{"info": {**info, **model}, "parts": [text, call]}]


def opening(steps: int) -> dict[str, Any]:
    prompt = {
        "info": {"id": "msg_000001", "sessionID": SESSION, "role": "user", "time": {"created": 1}},
        "parts": [{"id": "prt_p", "messageID": "msg_000001", "type": "text", "text": "Do the work."}],
    }
    return {"sessionId": SESSION, "messages": [prompt, *(m for n in range(steps) for m in step(n))]}


@pytest.mark.parametrize("fmt", FORMATS)
async def test_each_build_of_a_long_turn_answers_what_a_fresh_sidecar_answers(
    fmt: str, tmp_path: Path
) -> None:
    """A sidecar syncs the steps of a long turn and builds after each (its slices reused); a fresh
    sidecar opened with the same history builds once. The answers are the same JSON."""
    (tmp_path / "sessions" / SESSION).mkdir(parents=True)
    (tmp_path / "sessions" / SESSION / "notes.md").write_text("notes\n")  # the reminder is on
    growing = Harness(memory_root=str(tmp_path))
    steps = 60
    await growing.call("session/open", opening(steps))
    build = {"sessionId": SESSION, "format": fmt, **({"cache": {"ttl": "5m"}} if fmt == "anthropic" else {})}
    await growing.call("request/build", build)
    memo = growing.service.sessions.require(SESSION).session.kept(("build", MAIN_AGENT), BuildMemo)
    for n in range(steps, steps + 6):
        await growing.call("session/sync", {"sessionId": SESSION, "upsertMessages": step(n)})
        assert isinstance(memo.output.value, ListCache)
        held = {id(body) for body in memo.output.value.lists["messages"].joined if len(body) > 1}
        answer = await growing.call("request/build", build)
        now = [id(body) for body in memo.output.value.lists["messages"].joined if len(body) > 1]
        # The slices before the step are sent again as they were (the breakpoints Anthropic's moves
        # and the step's own are encoded again).
        assert len(held & set(now)) >= len(now) // 2 > 0, (fmt, len(held & set(now)), len(now))
        fresh = Harness(memory_root=str(tmp_path))
        await fresh.call("session/open", {**opening(n + 1)})
        expected = await fresh.call("request/build", build)
        for got in (answer, expected):
            got.pop("revision")
        assert answer == expected, (fmt, n)
        assert len(answer["messages"]) > 60 and answer["reminderAdded"]


# -- the allocator -----------------------------------------------------------------------------------
REUSE_SCRIPT = """
import resource, sys
from mimo_sidecar.transport.allocator import fix_malloc_thresholds
from mimo_sidecar.transport.jsonrpc_codec import dumps_in_pieces
assert fix_malloc_thresholds(*map(int, sys.argv[1:]))
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
items = [{"role": "tool", "text": "x" * 6000, "i": i} for i in range(700)]  # 4.2 MB
pieces = dumps_in_pieces({"messages": items}, {"messages"})
del pieces  # a memo started again, a session closed
before = faults()
pieces = dumps_in_pieces({"messages": items}, {"messages"})
print(faults() - before)
"""


def _faults_of_a_second_response(*thresholds: int) -> int:
    args = [str(t) for t in thresholds]
    run = subprocess.run(
        [sys.executable, "-c", REUSE_SCRIPT, *args], capture_output=True, text=True, check=True
    )
    return int(run.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux only")
def test_a_response_is_written_into_the_pages_the_previous_one_left() -> None:
    """The slices come from the heap, which keeps the space they leave (the trim threshold the
    sidecar fixes): the next response is written there, not into fresh mappings that fault on
    every 4 KiB page (4.2 MB is about 1,030 pages)."""
    assert _faults_of_a_second_response() < 100
    assert _faults_of_a_second_response(256 * 1024, 128 * 1024) > 700  # slices mapped: what it avoids
