"""An agent host on the google-genai SDK (Gemini), driving the sidecar (docs/hosts.md, "Gemini").

    python examples/hosts/gemini_host.py [--steps N] [--json]

It runs against a local fake of `generateContent` (fake_provider.py: 400 for any request a
provider rule forbids); drop `http_options` to use the real API.

Storage: Gemini has no stored shape of its own in the sidecar; a Gemini host stores MiMo's inline
shape, where a call and its result are one `tool` part (`callID`, `tool`, `state` with `input`,
`output`), the call's `thoughtSignature` in `metadata.google.thoughtSignature`; text is a `text`
part. So the tools run before the step is stored, and there is no carrier message. Usage:
`promptTokenCount` counts the cached tokens too, so input = promptTokenCount − cachedContentTokenCount
(+ toolUsePromptTokenCount), cache.read = cachedContentTokenCount, output = candidatesTokenCount,
reasoning = thoughtsTokenCount.
"""

from __future__ import annotations

import base64
from typing import Any

from google import genai
from google.genai import types
from host_loop import Call, Host, Json, Output, Step, main, now_ms

from mimo_sidecar.wire.checkpoint import PrepareResult
from mimo_sidecar.wire.rebuild import BuildResult

MODEL = "gemini-3-pro-preview"


def usage_of(meta: Any) -> Json:
    cached = meta.cached_content_token_count or 0
    return {
        "input": (meta.prompt_token_count or 0) - cached + (meta.tool_use_prompt_token_count or 0),
        "output": meta.candidates_token_count or 0,
        "reasoning": meta.thoughts_token_count or 0,
        "cache": {"read": cached, "write": 0},
    }


class GeminiProvider:
    format = "gemini"
    provider_id = "google"
    model_id = MODEL
    sidecar_tools_in_prefix = True  # the host lists the sidecar's tools with its own (tools/list)

    def __init__(self, base_url: str) -> None:
        options = types.HttpOptions(
            base_url=base_url, api_version="v1beta", retry_options=types.HttpRetryOptions(attempts=1)
        )
        self.client = genai.Client(api_key="not-needed-offline", http_options=options)

    def send(self, built: BuildResult) -> Any:
        # prefix.request is {systemInstruction, tools}: a valid GenerateContentConfig as it is.
        config = {**(built.prefix.request or {}), **built.overrides}
        return self.client.models.generate_content(model=MODEL, contents=built.messages, config=config)

    def write(self, prepared: PrepareResult) -> str:
        return str(self.send(prepared).text or "")

    def stored(self, response: Any, host: Host) -> Step:
        usage = usage_of(response.usage_metadata)
        parts: list[Json] = []
        calls: list[Call] = []
        outputs: dict[str, Output] = {}
        for part in response.candidates[0].content.parts:
            if part.text:
                parts.append({"type": "text", "text": part.text})
            elif part.function_call is not None:
                call = Call(
                    part.function_call.id or host.new_id("call"),
                    part.function_call.name,
                    dict(part.function_call.args or {}),
                )
                calls.append(call)
                started = now_ms()
                outputs[call.call_id] = output = host.run_tool(call)  # before the step is stored
                tool: Json = {
                    "type": "tool",
                    "callID": call.call_id,
                    "tool": call.name,
                    "state": tool_state(call, output, started),
                }
                if part.thought_signature:
                    signature = base64.b64encode(part.thought_signature).decode()
                    tool["metadata"] = {"google": {"thoughtSignature": signature}}
                parts.append(tool)
        info = host.assistant_info("tool-calls" if calls else "stop", usage)
        return Step([host.message("assistant", parts, **info)], calls, usage, outputs)

    def results(self, step: Step, outputs: dict[str, Output], host: Host) -> list[Json]:
        return []  # inline: every result is in its call's part already


def tool_state(call: Call, output: Output, started: int) -> Json:
    """MiMo's inline state of a finished call: `completed` with its output, or `error`."""
    timing = {"input": call.input, "time": {"start": started, "end": now_ms()}}
    if output.is_error:  # a tool/call answer with isError: the model's mistake, told as one
        return {"status": "error", "error": output.text, **timing}
    return {"status": "completed", "output": output.text, "title": call.name, "metadata": {}, **timing}


if __name__ == "__main__":
    raise SystemExit(main(GeminiProvider, __doc__.splitlines()[0] if __doc__ else ""))
