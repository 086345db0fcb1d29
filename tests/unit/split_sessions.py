"""Small sessions in the split shapes (docs/data-model.md, "Split shapes: field reference"), with the
traps that real transcripts of each tool hold (docs/importers.md).

- `claude_code()`: Claude Code's records: one response stored as several assistant entries that
  share `providerMessageID` (thinking, text, tool_use, tool_use), the carrier of the first parallel
  call written between two of them, an image inside a tool result, a user image, a call ID with
  characters Anthropic rejects, and an in-flight call at the end (no result).
- `codex()`: Codex rollout items: Responses `reasoning` items with encrypted content, a
  `function_call` with a 70-character `call_id`, a freeform `custom_tool_call` (apply_patch), their
  outputs on one tool-role carrier, an `input_image` in a result.
- `inline_signed()`: MiMo/OpenCode inline messages whose reasoning parts carry Anthropic signatures.

Every message has `time.created` ascending and IDs that sort in creation order.
"""

from __future__ import annotations

from mimo_sidecar.core.session.message import Message
from tests.unit.builders import (
    assistant,
    custom_tool_call,
    custom_tool_call_output,
    function_call,
    function_call_output,
    image,
    input_image,
    reasoning_item,
    text,
    thinking,
    tool,
    tool_result,
    tool_use,
    user,
)

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
CLAUDE = {"providerID": "anthropic", "modelID": "claude-sonnet-4-6"}
GPT = {"providerID": "openai", "modelID": "gpt-5.3-codex"}
T0 = 1_760_000_000_000
LONG_CALL_ID = "call_" + "x" * 65  # 70 characters: over the Responses (64) and Chat (40) limits
ODD_CALL_ID = "toolu_01:shell.run"  # ':' and '.' are not accepted by Anthropic


def claude_code() -> list[Message]:
    def a(mid: str, t: int, *parts, finish="tool-calls", pm="msg_01A") -> Message:
        return assistant(mid, *parts, finish=finish, created=T0 + t, providerMessageID=pm, **CLAUDE)

    return [
        user("m01", text("Why does the screenshot show a blank page?"), image(PNG), created=T0),
        a("m02", 10, thinking("Two files to read.", "sig-1"), finish=None),
        a("m03", 11, text("Reading both files."), finish=None),
        a("m04", 12, tool_use("toolu_01A", "read", {"path": "a.ts"}), finish=None),
        user(
            "m05", tool_result("toolu_01A", [{"type": "text", "text": "a body"}, image(PNG)]), created=T0 + 13
        ),
        a("m06", 14, tool_use(ODD_CALL_ID, "bash", {"command": "ls"})),
        user("m07", tool_result(ODD_CALL_ID, "a.ts b.ts"), created=T0 + 15),
        a(
            "m08",
            20,
            thinking("Done.", "sig-2"),
            text("The page is blank because a.ts throws."),
            finish="stop",
            pm="msg_02B",
        ),
        user("m09", text("Fix it."), created=T0 + 30),
        a(
            "m10",
            40,
            thinking("Edit a.ts.", "sig-3"),
            tool_use("toolu_03C", "edit", {"path": "a.ts"}),
            pm="msg_03C",
        ),
    ]


def codex() -> list[Message]:
    def a(mid: str, t: int, *parts, finish="tool-calls") -> Message:
        return assistant(mid, *parts, finish=finish, created=T0 + t, **GPT)

    patch = "*** Begin Patch\n*** Update File: a.ts\n@@\n-throw 1\n+return 1\n*** End Patch"
    return [
        user("c01", text("fix the test"), created=T0),
        a(
            "c02",
            10,
            reasoning_item("Look first.", "ENC-1", "rs_1"),
            function_call(LONG_CALL_ID, "shell", '{"command":["ls"]}'),
            custom_tool_call("call_patch", "apply_patch", patch),
        ),
        Message(
            {"id": "c03", "role": "tool", "time": {"created": T0 + 11}},
            [
                function_call_output(LONG_CALL_ID, [{"type": "input_text", "text": "a.ts"}, input_image()]),
                custom_tool_call_output("call_patch", "Success. Updated a.ts"),
            ],
            seq=0,
        ),
        a("c04", 20, reasoning_item("Done.", "ENC-2", "rs_2"), text("Fixed."), finish="stop"),
        user("c05", text("thanks, now run the tests"), created=T0 + 30),
    ]


def inline_signed() -> list[Message]:
    meta = {"anthropic": {"signature": "sig-inline"}}
    return [
        user("i01", text("go"), created=T0),
        assistant(
            "i02",
            {"type": "step-start"},
            {"type": "reasoning", "text": "thinking", "metadata": meta},
            text("on it"),
            tool("c1", "read", {"path": "x"}, output="X"),
            finish="tool-calls",
            created=T0 + 10,
            **CLAUDE,
        ),
    ]
