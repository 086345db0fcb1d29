"""The Python clients of the sidecar (docs/client.md).

- `Sidecar` (`client.sync`) and `AsyncSidecar` (`client.aio`): typed, one method per protocol
  method, the wire models in and out, notifications as typed callbacks (`Notifications`), and
  timeouts that follow the sidecar's own waits (`Timeouts`); a blocking call is cancelled from
  another thread with a `CancelToken` (`client.cancellation`).
- `SidecarClient` (`client.connection`): the JSON connection under the sync client, with plain
  dicts; the demo and the benchmarks use it directly.

Neither imports pygls.
"""

from .aio import AsyncSidecar
from .cancellation import CancelToken, RequestCancelled
from .connection import Answer, Prepared, RequestFuture, Response, SidecarClient
from .errors import RpcError, RpcTimeout, SidecarClosed
from .notifications import Notifications
from .sync import Sidecar
from .timeouts import Timeouts
from .wire_json import to_wire

__all__ = [
    "Answer",
    "AsyncSidecar",
    "CancelToken",
    "Notifications",
    "Prepared",
    "RequestFuture",
    "RequestCancelled",
    "Response",
    "RpcError",
    "RpcTimeout",
    "Sidecar",
    "SidecarClient",
    "SidecarClosed",
    "Timeouts",
    "to_wire",
]
