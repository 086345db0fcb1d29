"""Domain errors reach the wire through one total map, with no text rewriting."""

from __future__ import annotations

import pytest

from mimo_sidecar.core.errors import DomainError, ErrorCode
from mimo_sidecar.rpc import errors


@pytest.mark.parametrize("code", list(ErrorCode))
def test_every_domain_error_code_has_a_documented_wire_error(code: ErrorCode) -> None:
    spec = errors.DOMAIN_ERRORS.get(code)
    assert spec is not None, f"{code} has no wire mapping in rpc/errors.py DOMAIN_ERRORS"
    assert spec in errors.ERRORS  # and so in protocol.md's error table (test_protocol_doc)


def test_domain_codes_map_to_distinct_application_codes() -> None:
    codes = [spec.code for spec in errors.DOMAIN_ERRORS.values()]
    assert len(codes) == len(set(codes)) and all(c >= 1000 for c in codes)


def test_message_is_method_path_detail_and_data_carries_the_same_field() -> None:
    err = DomainError(ErrorCode.MESSAGE_NOT_FOUND, "no message 'x'", ("upsertParts", 1, "messageId"))
    wire = errors.from_domain_error("session/sync", err)
    assert wire.code == errors.MESSAGE_NOT_FOUND.code
    assert wire.message == "session/sync: upsertParts.1.messageId: no message 'x'"
    assert wire.data == {"name": "MessageNotFound", "field": "upsertParts.1.messageId"}


def test_error_without_a_field_and_with_data() -> None:
    err = DomainError(ErrorCode.WRITER_STATE, "nothing in flight", data={"sessionId": "s"})
    wire = errors.from_domain_error("checkpoint/writerFinished", err)
    assert wire.message == "checkpoint/writerFinished: nothing in flight"
    assert wire.data == {"name": "WriterStateError", "sessionId": "s"}


def test_tracebacks_never_reach_the_client() -> None:
    payload = errors.public_error(
        -32603, "ValueError: secret", {"traceback": ["Traceback ...\n", "secret\n"]}
    )
    assert payload == {
        "code": -32603,
        "message": errors.INTERNAL_MESSAGE,
        "data": {"name": errors.INTERNAL_ERROR.name},
    }
    assert errors.error_of(RuntimeError("secret"))["message"] == errors.INTERNAL_MESSAGE
