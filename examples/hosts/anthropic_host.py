"""An agent host on the Anthropic SDK, driving the sidecar (docs/hosts.md, "Anthropic").

    python examples/hosts/anthropic_host.py [--steps N] [--json]

It runs against a local fake of the Messages API (fake_provider.py: it answers 400 to any request a
provider rule forbids); point `anthropic.Anthropic(base_url=...)` at the real API to use it for real.

Storage: the response's content blocks are the assistant message's parts, as they came (text,
`tool_use`, signed `thinking`); the tool results are `tool_result` parts of the next user message
(the carrier). Usage: Anthropic's `input_tokens` leaves out the cached tokens, which come apart:
input = input_tokens, cache.read = cache_read_input_tokens, cache.write = cache_creation_input_tokens.
"""

from __future__ import annotations

from typing import Any

import anthropic
from host_loop import Call, Host, Json, Output, Step, main

from mimo_sidecar.wire.checkpoint import PrepareResult
from mimo_sidecar.wire.rebuild import BuildResult

MODEL = "claude-sonnet-5-5"
FINISH = {"tool_use": "tool-calls", "end_turn": "stop"}  # the stop reason, as the sidecar reads it


def usage_of(usage: Any) -> Json:
    return {
        "input": usage.input_tokens,
        "output": usage.output_tokens,
        "cache": {
            "read": usage.cache_read_input_tokens or 0,
            "write": usage.cache_creation_input_tokens or 0,
        },
    }


class AnthropicProvider:
    format = "anthropic"
    provider_id = "anthropic"
    model_id = MODEL
    sidecar_tools_in_prefix = False  # request/build adds the sidecar's tools (sidecarTools)

    def __init__(self, base_url: str) -> None:
        self.client = anthropic.Anthropic(base_url=base_url, api_key="not-needed-offline", max_retries=0)

    def send(self, built: BuildResult) -> Any:
        assert built.prefix.request is not None
        # The whole prefix (system AND tools), then the history; `overrides` (thinking disabled when
        # a tool loop has no signed thinking to replay) win over the host's own settings.
        kwargs: Json = {
            "model": MODEL,
            "max_tokens": 4096,
            **built.prefix.request,
            "messages": built.messages,
        }
        kwargs.update(built.overrides)
        return self.client.messages.create(**kwargs)

    def write(self, prepared: PrepareResult) -> str:
        reply = self.send(prepared)  # the writer's request is sent exactly as a turn's
        return "".join(block.text for block in reply.content if block.type == "text")

    def stored(self, response: Any, host: Host) -> Step:
        usage = usage_of(response.usage)
        parts = [block.model_dump(mode="json", exclude_none=True) for block in response.content]
        info = host.assistant_info(FINISH.get(response.stop_reason, response.stop_reason), usage)
        # One provider response: its ID, shared when a host stores one block per record.
        info["providerMessageID"] = response.id
        calls = [Call(b.id, b.name, dict(b.input)) for b in response.content if b.type == "tool_use"]
        return Step([host.message("assistant", parts, **info)], calls, usage)

    def results(self, step: Step, outputs: dict[str, Output], host: Host) -> list[Json]:
        if not step.calls:
            return []
        parts = [result_block(c.call_id, outputs[c.call_id]) for c in step.calls]
        return [host.message("user", parts)]


def result_block(call_id: str, output: Output) -> Json:
    block: Json = {"type": "tool_result", "tool_use_id": call_id, "content": output.text}
    if output.is_error:  # a tool/call answer with isError: the model's mistake, told as one
        block["is_error"] = True
    return block


if __name__ == "__main__":
    raise SystemExit(main(AnthropicProvider, __doc__.splitlines()[0] if __doc__ else ""))
