"""Request sizes estimated the way providers count (behavior.md#d15).

Minimal synthetic cases: media measured from its header (PNG, JPEG, GIF, WebP, PDF pages) and
counted by each provider's rule; replay tokens (signatures, encrypted reasoning) not counted as
text; the reasoning a step's usage says it produced counted where the provider keeps it; an inline
tool's host bookkeeping left out. And the line that must not move: the reference's characters / 4
estimate (`Message.tokens`) stays what the watermark, the caps and the sections use.
"""

from __future__ import annotations

import base64
import struct
from typing import Any

import pytest

from mimo_sidecar.core import engine
from mimo_sidecar.core.config import RebuildConfig
from mimo_sidecar.core.estimate.jsjson import js_json_length
from mimo_sidecar.core.estimate.jstext import est_len
from mimo_sidecar.core.estimate.media_size import image_size, pdf_pages
from mimo_sidecar.core.estimate.provider_count import (
    GENERIC,
    Counting,
    anthropic_image_tokens,
    counting_for,
    gemini_image_tokens,
    openai_image_tokens,
    part_cost,
    prompt_count,
)
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.rebuild.watermark import watermark_for
from mimo_sidecar.core.request.size import messages_tokens, request_tokens
from mimo_sidecar.core.session.message import Message
from mimo_sidecar.core.words import ANTHROPIC, GOOGLE, OPENAI
from tests.unit.builders import (
    assistant,
    function_call,
    msg,
    session_of,
    text,
    thinking,
    tool,
    tool_result,
    tool_use,
    usage,
    user,
)
from tests.unit.split_sessions import CLAUDE, GPT, T0

Json = dict[str, Any]
CLAUDE_OLD = {"providerID": "anthropic", "modelID": "claude-sonnet-4-5-20250929"}  # keeps the last turn only
GPT_56 = {"providerID": "openai", "modelID": "gpt-5.6-sol"}  # keeps every turn's reasoning


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def png(width: int, height: int, body: int = 30_000) -> str:
    """A PNG header with the given size, padded to look like a real screenshot's payload."""
    ihdr = struct.pack(">II", width, height) + b"\x08\x06\x00\x00\x00"
    return b64(b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + b"\x00" * 4 + b"\x00" * body)


def jpeg(width: int, height: int) -> str:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + b"\x00" * 9
    sof0 = b"\xff\xc0" + struct.pack(">HBHH", 17, 8, height, width) + b"\x03" + b"\x00" * 9
    return b64(b"\xff\xd8" + app0 + sof0 + b"\xff\xd9")


def anthropic_image(data: str, media_type: str = "image/png") -> Json:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


# =================================================================================================
# Media measured from its first bytes
# =================================================================================================
def test_image_sizes_are_read_from_their_headers() -> None:
    assert image_size(png(1920, 1080)) == (1920, 1080)
    assert image_size(jpeg(640, 480)) == (640, 480)
    assert image_size(b64(b"GIF89a" + struct.pack("<HH", 300, 200) + b"\x00" * 20)) == (300, 200)
    vp8x = (
        b"RIFF"
        + b"\x00" * 4
        + b"WEBPVP8X"
        + b"\x00" * 8
        + (799).to_bytes(3, "little")
        + (599).to_bytes(3, "little")
    )
    assert image_size(b64(vp8x)) == (800, 600)
    lossless = (1023 | (767 << 14)).to_bytes(4, "little")
    assert image_size(b64(b"RIFF\x00\x00\x00\x00WEBPVP8L\x00\x00\x00\x00\x2f" + lossless + b"\x00" * 8)) == (
        1024,
        768,
    )
    assert image_size("not base64 at all!") is None
    assert image_size(b64(b"plain text, no image header")) is None


def test_pdf_pages_are_counted() -> None:
    pdf = b"%PDF-1.4\n" + b"".join(b"%d 0 obj << /Type /Page /Parent 1 0 R >> endobj\n" % i for i in range(3))
    pdf += b"1 0 obj << /Type /Pages /Kids [] /Count 3 >> endobj\n"
    assert pdf_pages(b64(pdf)) == 3
    packed = b"%PDF-1.7\n1 0 obj << /Type /Pages /Count 12 /Kids [] >> endobj\n"  # page objects compressed
    assert pdf_pages(b64(packed)) == 12
    assert pdf_pages(b64(b"%PDF-1.7\n")) is None
    assert pdf_pages(b64(b"not a pdf")) is None


def test_a_pdf_costs_its_pages() -> None:
    pdf = b"%PDF-1.4\n" + b"".join(b"%d 0 obj << /Type /Page >> endobj\n" % i for i in range(3))
    document = {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": b64(pdf)},
    }
    message = msg("u1", "user", [document])
    text = part_cost(document).text
    assert message.request_tokens(Counting(ANTHROPIC)) == text + 3 * 2250
    assert message.request_tokens(Counting(GOOGLE)) == text + 3 * 258


def test_each_providers_image_rule() -> None:
    assert anthropic_image_tokens((1000, 500)) == 667  # 500 000 px / 750
    assert anthropic_image_tokens((3000, 100)) == 110  # long edge brought to 1568 first
    assert anthropic_image_tokens((2000, 2000)) == 1600 == anthropic_image_tokens(None)  # the ceiling
    assert openai_image_tokens((1024, 1024), "high") == 765  # 768 x 768: four 512-px tiles
    assert openai_image_tokens((2048, 4096), None) == 1105  # 1024 x 2048 → 768 x 1536: six tiles
    assert openai_image_tokens((4000, 3000), "low") == 85
    assert openai_image_tokens(None, "auto") == 765
    assert gemini_image_tokens((300, 300)) == 258
    assert gemini_image_tokens((1000, 500)) == 516  # two 768-px tiles
    assert gemini_image_tokens(None) == 258


# =================================================================================================
# A part's cost
# =================================================================================================
def test_a_base64_screenshot_costs_its_pixels_not_its_characters() -> None:
    data = png(1200, 800)
    part = {"type": "tool_result", "tool_use_id": "t1", "content": [anthropic_image(data)]}
    message = msg("k1", "user", [part])
    reference = est_len(js_json_length(part) or 0)
    assert message.tokens == reference > 10_000  # the reference's estimate: characters / 4
    text_only = est_len((js_json_length(part) or 0) - len(data))
    assert message.request_tokens(Counting(ANTHROPIC)) == text_only + 1280  # 960 000 px / 750
    assert message.request_tokens(Counting(OPENAI)) == text_only + 1105  # 1152 x 768: six tiles
    assert message.request_tokens(Counting(GOOGLE)) == text_only + 1032  # four 768-px tiles
    assert message.request_tokens(Counting(GENERIC)) == text_only + 1280  # Anthropic's rule


def test_media_in_every_stored_shape_is_found() -> None:
    data = png(500, 400)
    shapes: list[Json] = [
        anthropic_image(data),
        {"type": "file", "mime": "image/png", "url": f"data:image/png;base64,{data}", "filename": "a.png"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{data}", "detail": "auto"},
        {
            "type": "function_call_output",
            "call_id": "c",
            "output": [{"type": "input_image", "image_url": f"data:image/png;base64,{data}"}],
        },
        {
            "type": "tool",
            "callID": "c",
            "tool": "read",
            "state": {
                "status": "completed",
                "input": {},
                "output": "x",
                "attachments": [
                    {"type": "file", "mime": "image/png", "url": f"data:image/png;base64,{data}"}
                ],
            },
        },
    ]
    for shape in shapes:
        cost = part_cost(shape)
        assert [m.kind for m in cost.media] == ["image"], shape["type"]
        assert cost.media[0].size == (500, 400)
        assert cost.text < 200  # the payload is not text


def test_text_files_the_host_inlines_cost_nothing_and_urls_cost_the_constant() -> None:
    inlined = part_cost(
        {"type": "file", "mime": "text/plain", "url": "data:text/plain;base64," + "QUJD" * 500}
    )
    assert [m.kind for m in inlined.media] == ["inlined"] and inlined.text < 40
    remote = {"type": "file", "mime": "image/png", "url": "https://example.com/shot.png"}
    message = msg("u1", "user", [remote])
    assert message.request_tokens(Counting(ANTHROPIC)) == part_cost(remote).text + 1600  # size unknown


def test_signatures_and_encrypted_reasoning_are_not_counted_as_text() -> None:
    signature = "E" * 12_000
    signed = thinking("Short thought.", signature)
    cost = part_cost(signed)
    assert cost.text == est_len((js_json_length(signed) or 0) - len(signature))
    assert cost.reasoning == ANTHROPIC and cost.reasoning_text == est_len(len("Short thought."))
    mimo = {"type": "reasoning", "text": "t", "metadata": {"anthropic": {"signature": signature}}}
    assert part_cost(mimo).text < 30 and part_cost(mimo).reasoning == ANTHROPIC
    item = {"type": "reasoning", "summary": [], "encrypted_content": "x" * 9000}
    assert part_cost(item).text < 30 and part_cost(item).reasoning == OPENAI
    # `signature` in a tool's input is text the model reads: it stays.
    call = tool_use("t1", "sign", {"signature": "s" * 400})
    assert part_cost(call).text == est_len(js_json_length(call) or 0)


def test_an_inline_tools_host_bookkeeping_is_left_out() -> None:
    part = tool("c1", "edit", {"path": "a.ts"}, output="Edited.")
    part["state"]["metadata"] = {"diff": "+" * 20_000}
    part["state"]["title"] = "a.ts"
    cost = part_cost(part)
    assert cost.text < 80 and est_len(js_json_length(part) or 0) > 5000
    interrupted = tool("c2", "bash", status="error", error="stopped", interrupted=True)
    interrupted["state"]["metadata"]["output"] = (
        "o" * 4000
    )  # sent as the result (behavior.md#part-conversion)
    assert part_cost(interrupted).text > 1000


def test_an_encrypted_compaction_counts_only_where_it_is_sent() -> None:
    part = {"type": "compaction", "encrypted_content": "c" * 8000}
    message = msg("u1", "user", [part])
    assert message.request_tokens(Counting(OPENAI)) == part_cost(part).text + 2000
    assert message.request_tokens(Counting(ANTHROPIC)) == part_cost(part).text


def test_the_cached_costs_follow_a_part_change() -> None:
    message = msg("u1", "user", [{**anthropic_image(png(1500, 1500)), "id": "p1"}])
    assert message.request_tokens(Counting(ANTHROPIC)) > 1600
    message.set_part({"id": "p1", "type": "text", "text": "now text"})
    assert message.request_tokens(Counting(ANTHROPIC)) == message.tokens


# =================================================================================================
# Replayed reasoning: the tokens its usage record says it stands for
# =================================================================================================
def claude_code_turns(model: Json, output: int = 3000) -> list[Message]:
    """Claude Code's shape: one response written as a thinking entry and a call entry sharing one
    providerMessageID, the usage on the last; then its result, a second turn."""

    def entry(mid: str, t: int, part: Json, **kw: Any) -> Message:
        return assistant(mid, part, created=T0 + t, providerMessageID="msg_1", **model, **kw)

    return [
        user("u1", text("read it"), created=T0),
        entry("a1", 1, thinking("", "S" * 3000), finish=None),
        entry(
            "a2",
            2,
            tool_use("t1", "read", {"path": "a"}),
            finish="tool-calls",
            tokens=usage(3, output, read=15_000),
        ),
        user("k1", tool_result("t1", "contents"), created=T0 + 3),
    ]


def test_anthropic_reasoning_counts_its_output_beyond_the_visible_response() -> None:
    msgs = claude_code_turns(CLAUDE)
    counting = counting_for("anthropic", "claude-sonnet-4-6")
    visible = sum(part_cost(p).text for m in msgs[1:3] for p in m.parts)
    plain = sum(m.request_tokens(counting) for m in msgs)
    assert messages_tokens(msgs, counting) == plain + 3000 - visible
    assert counting.keeps_all_reasoning


def test_a_model_that_keeps_only_the_turn_in_progress_drops_older_reasoning() -> None:
    msgs = claude_code_turns(CLAUDE_OLD)
    counting = counting_for("anthropic", "claude-sonnet-4-5-20250929")
    assert not counting.keeps_all_reasoning
    in_turn = messages_tokens(msgs, counting)
    assert in_turn > sum(m.request_tokens(counting) for m in msgs)  # the tool loop: still its turn
    later = [
        *msgs,
        assistant("a3", text("Done."), created=T0 + 4, **CLAUDE_OLD),
        user("u2", text("next"), created=T0 + 5),
    ]
    assert messages_tokens(later, counting) == sum(m.request_tokens(counting) for m in later)  # turn over
    keeps = counting_for("anthropic", "claude-sonnet-4-6")
    assert messages_tokens(later, keeps) > sum(m.request_tokens(keeps) for m in later)


def test_openai_reasoning_counts_its_reported_reasoning_tokens() -> None:
    item = {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "Plan."}],
        "encrypted_content": "E" * 800,
    }
    step = assistant(
        "a1",
        item,
        function_call("c1", "shell"),
        finish="tool-calls",
        created=T0 + 1,
        tokens=usage(100, 50, reasoning=400),
        **GPT,
    )
    msgs = [user("u1", text("go"), created=T0), step]
    counting = counting_for("openai", "gpt-5.3-codex")
    plain = sum(m.request_tokens(counting) for m in msgs)
    assert messages_tokens(msgs, counting) == plain + 400 - est_len(len("Plan."))
    # Chat Completions takes no reasoning back; another provider cannot read it: nothing hidden.
    chat = counting_for("openai", "gpt-5.3-codex", "openai-chat")
    assert messages_tokens(msgs, chat) == sum(m.request_tokens(chat) for m in msgs)
    claude = counting_for("anthropic", "claude-sonnet-4-6")
    assert messages_tokens(msgs, claude) == sum(m.request_tokens(claude) for m in msgs)


@pytest.mark.parametrize(
    ("provider", "model", "family", "keeps"),
    [
        ("anthropic", "claude-opus-4-6", ANTHROPIC, True),
        ("anthropic", "claude-opus-4-1-20250805", ANTHROPIC, False),
        ("anthropic", "claude-sonnet-4-5-20250929", ANTHROPIC, False),
        ("anthropic", "claude-3-7-sonnet-20250219", ANTHROPIC, False),
        ("openai", "claude_4_5_opus", ANTHROPIC, True),  # Cline through an OpenAI-compatible gateway
        ("openai", "gpt-5-codex", OPENAI, False),
        ("openai", "gpt-5.6-sol", OPENAI, True),
        ("google", "gemini-2.5-pro", GOOGLE, False),
        ("opencode", "deepseek-v4-flash-free", GENERIC, False),
        (None, None, GENERIC, False),
    ],
)
def test_the_provider_and_its_reasoning_rule_come_from_the_model(
    provider: str | None, model: str | None, family: str, keeps: bool
) -> None:
    assert counting_for(provider, model) == Counting(family, keeps)


def test_a_format_names_its_provider() -> None:
    assert counting_for(None, "claude-sonnet-4-6", "gemini").family == GOOGLE
    assert counting_for("openai", "gpt-5.6-sol", "anthropic") == Counting(ANTHROPIC, True)


def test_the_prompt_count_of_a_usage_record() -> None:
    assert prompt_count(usage(3, 21, read=139_210, write=2437)) == 141_650
    assert prompt_count({"total": 5000, "output": 300}) == 4700
    assert prompt_count(usage(0, 0)) == 0 and prompt_count(None) == 0


# =================================================================================================
# Where each estimate is used
# =================================================================================================
def screenshot_session() -> Any:
    msgs = [
        user("u1", text("look at these"), created=T0),
        assistant("a1", tool_use("t1", "screenshot"), finish="tool-calls", created=T0 + 1, **CLAUDE),
        user(
            "k1",
            {
                "type": "tool_result",
                "tool_use_id": "t1",
                "content": [anthropic_image(png(1400, 900, 600_000))],
            },
            created=T0 + 2,
        ),
        assistant("a2", text("I see a chart."), finish="stop", created=T0 + 3, **CLAUDE),
        user("u2", text("thanks"), created=T0 + 4),
    ]
    return session_of(msgs, "ses_est", "p")


def test_the_request_figures_count_images_as_the_provider_does(tmp_path: Any) -> None:
    s = screenshot_session()
    memory = MemoryRoot(str(tmp_path))
    built = {
        fmt: engine.build(s, memory, RebuildConfig(), now_ms=T0 + 10, fmt=fmt).request.estimated_tokens
        for fmt in ("ai-sdk", "anthropic", "openai-responses", "gemini")
    }
    reference = sum(m.tokens for m in s.context_view())
    assert reference > 200_000  # 800 000 base64 characters
    # 1400 x 900: Anthropic 1 260 000 px / 750 = 1680, over its 1600 ceiling; OpenAI 1195 x 768, six
    # tiles, 1105; Gemini four tiles, 1032. The text counts the same for each.
    assert built["anthropic"] - built["openai-responses"] == 1600 - 1105
    assert built["anthropic"] - built["gemini"] == 1600 - 1032
    assert built["ai-sdk"] == built["anthropic"]  # ai-sdk: the provider of the model in use
    assert built["anthropic"] - 1600 < 200
    # The usage fallback counts the same way: no step recorded usage.
    trigger = engine.decide_trigger(s, RebuildConfig(), engine.ModelLimits(200_000), None, "main")
    assert trigger.usage_source == "estimate" and trigger.count == built["anthropic"]


def test_the_watermark_and_its_tail_keep_the_reference_estimate() -> None:
    s = screenshot_session()
    view = list(s.context_view())
    wm = watermark_for(view)
    assert wm is not None
    assert wm.tail_tokens == sum(m.tokens for m in view[wm.index + 1 :])  # characters / 4, byte for byte
    counting = engine.session_counting(s)
    assert request_tokens(view, s.ordering(), counting) < sum(m.tokens for m in view) // 50


def test_a_part_the_walk_is_skipped_for_costs_what_the_walk_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """A part whose JSON names no payload key or media type is not walked: on generated sessions of
    every shape (media, reasoning with signatures, encrypted items, inline and split tools) and on
    the real transcripts, each part costs what the walk over it gives."""
    from benchmarks.generator import generate_session
    from mimo_sidecar.core.estimate import provider_count
    from tests.real_sessions import imported, main_session_files, real_sessions_root

    shapes = ("anthropic", "openai", "inline")
    generated = [m for shape in shapes for m in generate_session(150, 5, shape)["messages"]]
    parts = [p for m in generated for p in m["parts"]]
    root = real_sessions_root()
    if root is not None:
        for path in main_session_files(root):
            parts += [p for m in imported(path, shared=True).params["messages"] for p in m["parts"]]
    fast = [provider_count.part_cost(p) for p in parts]
    skipped = sum(not provider_count.may_hold_payloads(p) for p in parts)
    monkeypatch.setattr(provider_count, "may_hold_payloads", lambda part: True)
    assert [provider_count.part_cost(p) for p in parts] == fast
    assert 0 < skipped < len(parts)  # both paths taken
