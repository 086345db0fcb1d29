"""The Python name of every protocol method, and the messages the sidecar sends a client.

One rule names every typed client method and every notification callback after its protocol
method, so a reader finds one from the other: `$/` dropped, `/` becomes `_`, camelCase becomes
snake_case (`session/open` → `session_open`, `checkpoint/writerStarted` →
`checkpoint_writer_started`, `$/cancelRequest` → `cancel_request`). `tests/unit/test_typed_client.py`
checks both flavours against the method registry (`wire.registry`): a method added there without
its client method fails.
"""

from __future__ import annotations

import re

from ..wire.registry import REGISTRY, MethodSpec

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def python_name(method: str) -> str:
    """The client attribute of protocol method `method`."""
    return _CAMEL.sub("_", method.removeprefix("$/").replace("/", "_")).lower()


def client_methods() -> list[MethodSpec]:
    """What a client sends: one typed method each."""
    return [spec for spec in REGISTRY.values() if spec.direction == "client → sidecar"]


def sidecar_messages() -> dict[str, MethodSpec]:
    """What the sidecar sends a client (notifications, and the progress request), by method."""
    return {spec.name: spec for spec in REGISTRY.values() if spec.direction == "sidecar → client"}
