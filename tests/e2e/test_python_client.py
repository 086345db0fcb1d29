"""The package's Python client (`mimo_sidecar.client`), which the demo and the benchmarks use,
against the real sidecar."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mimo_sidecar.client import RpcError, SidecarClient

from .rawclient import hook_env

pytestmark = pytest.mark.e2e


def test_client_round_trips_errors_notifications_cancel_and_exit(tmp_path: Path) -> None:
    seen: list[tuple[str, object]] = []
    client = SidecarClient.spawn(
        on_notification=lambda method, params: seen.append((method, params)),
        env=hook_env(),
        stderr=subprocess.DEVNULL,
    )
    with client:
        client.initialize(str(tmp_path), config={"checkpoint": {"push_caps": {"focus_task": 5}}})
        assert client.request("session/open", {"sessionId": "c1"}) == {"sessionId": "c1", "revision": 1}
        prepared = client.prepare("session/get", params_json=b'{"sessionId":"c1"}')
        response = client.send(prepared, timeout=10)
        assert response.result["revision"] == 1 and response.size > 50
        with pytest.raises(RpcError) as exc:
            client.request("session/get", {"sessionId": "nope"})
        assert exc.value.code == 1001 and exc.value.data["field"] == "sessionId"
        with pytest.raises(RpcError) as exc:
            client.request("no/such-method", {})
        assert exc.value.method_missing
        slow = client.request_async("test/sleep", {"ms": 10_000})
        client.cancel(slow)
        with pytest.raises(RpcError) as exc:
            slow.result(5)
        assert exc.value.code == -32800
        code = client.shutdown()
    assert code == 0
    assert [m for m, _ in seen] == ["window/logMessage"]  # the D6 config warning
