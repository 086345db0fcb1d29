"""The service layer: session state and the rebuild flow, between the RPC handlers and the core.

    from . import SidecarService, InsertRequest

See `service.service` for the API, `service.insert_flow` for where an insert's decision lives.
"""

from .insert_flow import InsertRequest, Settings, StatusListener
from .service import SidecarService, SilentStatus, StatusFactory
from .sessions import OpenRequest

__all__ = [
    "InsertRequest",
    "OpenRequest",
    "Settings",
    "SidecarService",
    "SilentStatus",
    "StatusFactory",
    "StatusListener",
]
