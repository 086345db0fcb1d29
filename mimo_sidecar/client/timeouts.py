"""How long the client waits for each answer: as long as the sidecar itself may wait, plus a margin.

Most requests answer at once; the two that wait are bounded by the sidecar, so their timeouts
follow those bounds instead of a fixed number:

- `rebuild/insert` may wait for a checkpoint writer: on a cold start up to
  `checkpoint.writer_wait_ms.without_watermark` (300 s by default), and, when that writer's success
  promotes a queued one, up to `with_watermark` (30 s) more (protocol.md, `rebuild/insert` steps 2-3);
- `shutdown` waits for the requests in flight, at most 10 s.

The typed clients take the bounds from the config they send (`initialize`, `sidecar/configure`), so
a host that shortens or lengthens the writer waits gets timeouts that match.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..wire.config import SidecarConfig

MARGIN_S = 30.0  # the transport, a busy machine, a large answer
REQUEST_S = 120.0  # no wait of the sidecar's: enough for a session/open of tens of megabytes
SHUTDOWN_WAIT_S = 10.0  # protocol.md, `shutdown`: in-flight requests get at most 10 s
_DEFAULT_WAITS = SidecarConfig.model_validate({}).checkpoint.writer_wait_ms


@dataclass(frozen=True)
class Timeouts:
    """Seconds to wait for the answer of each kind of request."""

    request: float = REQUEST_S
    insert: float = (_DEFAULT_WAITS.without_watermark + _DEFAULT_WAITS.with_watermark) / 1000 + MARGIN_S
    shutdown: float = SHUTDOWN_WAIT_S + MARGIN_S

    def following(self, config: SidecarConfig | Mapping[str, Any] | None) -> Timeouts:
        """These timeouts with the insert's set from the writer waits `config` configures."""
        if config is None:
            config = SidecarConfig.model_validate({})
        elif not isinstance(config, SidecarConfig):
            config = SidecarConfig.model_validate(dict(config))
        waits = config.checkpoint.writer_wait_ms
        return replace(self, insert=(waits.without_watermark + waits.with_watermark) / 1000 + MARGIN_S)

    def of(self, method: str) -> float:
        if method == "rebuild/insert":
            return self.insert
        if method == "shutdown":
            return self.shutdown
        return self.request
