"""How a provider counts the stored parts of a request (behavior.md#d15): the request-size estimate.

The reference's estimate, `est(JSON.stringify(part))` (behavior.md#message-estimate), counts a
base64 screenshot as its characters / 4 and a thinking signature as text. Providers do not: an image
costs what its pixels cost, a signature or an encrypted reasoning blob is not read as text, and
replayed reasoning costs the reasoning tokens it stands for. The request-size figures
(`estimatedTokens`, the usage fallback, the inflation guard, `inspect`) count that way; the
watermark, the caps and the sections keep the reference's estimate.

Two steps, so that each part's work is done once and cached (`Message.part_costs`):

- `part_cost(part)`: pure, provider-independent. Text as today (the part's JSON length, less the
  payloads counted apart, characters / 4), its media (kind, pixel size, pages, detail) and, for a
  reasoning part, the provider whose replay token it carries and its visible text;
- `cost_tokens(cost, counting)`: that cost for one provider (`Counting`, from the model the request
  goes to), and `hidden_reasoning` for the reasoning a step's usage says it produced beyond the
  visible text, counted where that provider keeps it (the step's own turn, or every turn).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ..words import ANTHROPIC, GOOGLE, OPENAI
from .jsjson import js_json_length
from .jstext import est_len
from .media_size import image_size, pdf_pages

Json = dict[str, Any]

GENERIC = "generic"  # a provider none of the rules below names: Anthropic's media rule, no hidden reasoning

# Keys whose string values are replay tokens, never read as text by the provider: anywhere for
# these, and `signature` in a thinking block or in provider metadata (elsewhere it may be tool input).
TOKEN_KEYS = frozenset({"thoughtSignature", "redactedData", "reasoningEncryptedContent"})
METADATA_KEYS = frozenset({"metadata", "providerOptions", "providerMetadata"})
REASONING_TYPES = frozenset({"reasoning", "thinking", "redacted_thinking"})
INLINED_FILES = frozenset({"text/plain", "application/x-directory"})  # the host inlines their text
# An inline tool state's host bookkeeping, which no format sends (OpenCode keeps diffs, file previews
# and timings there): its metadata, title and times. An error state's metadata stays: an interrupted
# call's output is sent from it (behavior.md#part-conversion).
HOST_ONLY_STATE = ("metadata", "title", "time")
# Which provider can read a MiMo reasoning part's replay token (its metadata key → family).
TOKEN_FAMILIES = {
    ANTHROPIC: ("signature", "redactedData"),
    "bedrock": ("signature", "redactedData"),
    OPENAI: ("reasoningEncryptedContent",),
    GOOGLE: ("thoughtSignature",),
    "vertex": ("thoughtSignature",),
}
COUNTING_FAMILY = {"bedrock": ANTHROPIC, "vertex": GOOGLE}

# -- the providers' media rules (behavior.md#d15 cites each) -------------------------------------------
ANTHROPIC_LONG_EDGE = 1568  # a longer edge is scaled down first
ANTHROPIC_PIXELS_PER_TOKEN = 750
ANTHROPIC_IMAGE_MAX = 1600  # what the largest image Claude reads costs (about 1.15 megapixels)
OPENAI_BOX, OPENAI_SHORT, OPENAI_TILE = 2048, 768, 512
OPENAI_BASE, OPENAI_PER_TILE, OPENAI_LOW = 85, 170, 85
OPENAI_IMAGE_UNKNOWN = OPENAI_BASE + 4 * OPENAI_PER_TILE  # a 768 x 768 image, four tiles
GEMINI_SMALL, GEMINI_TILE, GEMINI_PER_TILE = 384, 768, 258
# A PDF page, its text and its picture together: Anthropic documents 1,500-3,000 text tokens a page
# plus the page's image, and measured pages come to 2,100-2,500; OpenAI also sends both. Gemini: 258.
PDF_PAGE = 2250
GEMINI_PDF_PAGE = 258


@dataclass(frozen=True, slots=True)
class MediaCost:
    kind: str  # "image" | "pdf" | "file" (another document, counted as its text) | "inlined" (not sent)
    size: tuple[int, int] | None = None  # pixels, when the payload says
    pages: int | None = None
    detail: str | None = None  # OpenAI image detail (low | high | auto)
    decoded: int = 0  # bytes of a payload ("file": what is counted as text)


@dataclass(frozen=True, slots=True)
class PartCost:
    """What a stored part costs, for any provider (see `cost_tokens`)."""

    text: int  # est of its JSON, less media payloads and replay tokens
    media: tuple[MediaCost, ...] = ()
    reasoning: str | None = None  # a reasoning part: the family whose replay token it carries
    reasoning_text: int = 0  # a reasoning part: est of its visible text (thinking, summary)
    compaction: int = 0  # est of an encrypted compaction (only the Responses API reads it)


@dataclass(frozen=True)
class Counting:
    """The provider a request goes to, as the estimate needs it: `family` (ANTHROPIC, OPENAI,
    GOOGLE, GENERIC) and whether its model keeps the reasoning of earlier turns in context."""

    family: str = GENERIC
    keeps_all_reasoning: bool = False
    reasoning_input: bool = True  # the format sends reasoning back (Chat Completions does not)


# =============================================================================================
# The provider of a request
# =============================================================================================
FORMAT_FAMILY = {"anthropic": ANTHROPIC, "openai-chat": OPENAI, "openai-responses": OPENAI, "gemini": GOOGLE}
CLAUDE_VERSION = re.compile(r"(opus|sonnet|haiku)[-_.]?(\d{1,2})(?!\d)(?:[-_.](\d{1,2})(?!\d))?")
CLAUDE_LEGACY = re.compile(r"claude[-_](\d{1,2})(?:[-_.](\d{1,2})(?!\d))?[-_.]?(opus|sonnet|haiku)")
GPT_VERSION = re.compile(r"gpt-(\d+)(?:\.(\d+))?")
# Claude keeps every earlier turn's thinking from these versions on (older ones only the last turn's).
CLAUDE_ALL_TURNS = {"opus": (4, 5), "sonnet": (4, 6), "haiku": (5, 0)}
GPT_ALL_TURNS = (5, 6)  # `reasoning.context` (GPT-5.6 on): earlier turns' reasoning stays in context


def family_of(provider_id: str | None, model_id: str | None, fmt: str | None = None) -> str:
    """The provider family of a request: the format's, else the model's, else the provider's."""
    if fmt in FORMAT_FAMILY:
        return FORMAT_FAMILY[fmt]
    model, provider = (model_id or "").lower(), (provider_id or "").lower()
    if "claude" in model:
        return ANTHROPIC
    if "gemini" in model:
        return GOOGLE
    if model.startswith(("gpt", "o1", "o3", "o4", "codex")) or "codex" in model:
        return OPENAI
    for word, family in (
        ("anthropic", ANTHROPIC),
        ("bedrock", ANTHROPIC),
        ("openai", OPENAI),
        ("azure", OPENAI),
        ("google", GOOGLE),
        ("vertex", GOOGLE),
        ("gemini", GOOGLE),
    ):
        if word in provider:
            return family
    return GENERIC


def keeps_all_reasoning(family: str, model_id: str | None) -> bool:
    """Does the model keep the reasoning of earlier turns (not just the current one) in context?"""
    model = (model_id or "").lower()
    if family == ANTHROPIC:
        version = _claude_version(model)
        if version is None:
            return True  # an unknown Claude model: the current ones keep it
        tier, number = version
        return number >= CLAUDE_ALL_TURNS.get(tier, (0, 0))
    if family == OPENAI:
        match = GPT_VERSION.search(model)
        return match is not None and (int(match[1]), int(match[2] or 0)) >= GPT_ALL_TURNS
    return False


def _claude_version(model: str) -> tuple[str, tuple[int, int]] | None:
    match = CLAUDE_VERSION.search(model)
    if match is not None:
        return match[1], (int(match[2]), int(match[3] or 0))
    match = CLAUDE_LEGACY.search(model)
    if match is not None:
        return match[3], (int(match[1]), int(match[2] or 0))
    return None


NO_REASONING_INPUT = frozenset({"openai-chat"})


def counting_for(provider_id: str | None, model_id: str | None, fmt: str | None = None) -> Counting:
    family = family_of(provider_id, model_id, fmt)
    return Counting(family, keeps_all_reasoning(family, model_id), fmt not in NO_REASONING_INPUT)


# =============================================================================================
# A part's cost
# =============================================================================================
class _Walk:
    """One pass over a part: the JSON length to take off (payloads, tokens) and what they are."""

    def __init__(self) -> None:
        self.removed = 0
        self.media: list[MediaCost] = []
        self.compaction = 0

    def value(self, value: Any, meta: bool = False) -> None:
        if isinstance(value, dict):
            self.object(value, meta)
        elif isinstance(value, list):
            for item in value:
                self.value(item, meta)

    def object(self, obj: Json, meta: bool) -> None:
        kind = obj.get("type")
        media = _media_of(obj)
        if media is not None:
            cost, payload = media
            self.media.append(cost)
            self.removed += len(payload)
            return
        for key, value in obj.items():
            if isinstance(value, str) and self.is_token(key, kind, meta):
                self.removed += len(value)
            elif key == "encrypted_content" and isinstance(value, str):
                self.removed += len(value)
                if kind == "compaction":
                    self.compaction += est_len(len(value))
            else:
                self.value(value, meta or key in METADATA_KEYS)

    @staticmethod
    def is_token(key: str, kind: Any, meta: bool) -> bool:
        if key in TOKEN_KEYS:
            return True
        if key == "signature":
            return meta or kind == "thinking"
        return key == "data" and kind == "redacted_thinking"


def part_cost(part: Any) -> PartCost:
    """What `part` costs a provider, before choosing which one (see the module docstring)."""
    return sized_part_cost(part, js_json_length(part))


def sized_part_cost(part: Any, length: int | None) -> PartCost:
    """`part_cost` given the part's `JSON.stringify` length (None: unserialisable), which the
    session's estimate already took when the part was stored."""
    if length is None:
        return PartCost(1000)  # behavior.md#stringify-parity: an unserialisable part
    walk = _Walk()
    walked = part
    state = part.get("state") if isinstance(part, dict) and part.get("type") == "tool" else None
    if isinstance(state, dict):
        kept = ("metadata",) if state.get("status") == "error" else ()
        host_only = [k for k in HOST_ONLY_STATE if k in state and k not in kept]
        walk.removed += sum(_member_length(k, state[k]) for k in host_only)
        walked = {**part, "state": {k: v for k, v in state.items() if k not in host_only}}
    if may_hold_payloads(part):
        walk.value(walked)
    cost = PartCost(est_len(max(0, length - walk.removed)), tuple(walk.media), compaction=walk.compaction)
    if isinstance(part, dict) and part.get("type") in REASONING_TYPES:
        visible = _reasoning_text(part)
        return PartCost(cost.text, cost.media, _token_family(part), est_len(len(visible)), cost.compaction)
    return cost


# Every key and `type` value that makes `_Walk` take something off or find media (`_media_of`,
# `_Walk.is_token`, `encrypted_content`), quoted as JSON writes a key or a string.
_PAYLOAD_NAMES = (
    *sorted(TOKEN_KEYS),
    "signature",
    "encrypted_content",
    "data",
    "inlineData",
    "fileData",
    *("image", "document", "file", "input_image", "input_file", "image_url", "media"),
)
_PAYLOAD_MARK = re.compile(b'"(?:' + b"|".join(re.escape(n.encode()) for n in _PAYLOAD_NAMES) + b')"')


def may_hold_payloads(part: Any) -> bool:
    """Whether the walk over `part` can find anything: its JSON names one of `_PAYLOAD_NAMES`
    (searched at C speed; a long text or tool output without them is not walked key by key)."""
    try:
        encoded = orjson.dumps(part)
    except (TypeError, orjson.JSONEncodeError):
        return True
    return _PAYLOAD_MARK.search(encoded) is not None


def _member_length(key: str, value: Any) -> int:
    """The JSON length of `"key":value,` in an object."""
    return len(key) + 4 + (js_json_length(value) or 0)


def _reasoning_text(part: Json) -> str:
    for key in ("thinking", "text"):
        if isinstance(part.get(key), str):
            return str(part[key])
    summary = part.get("summary")
    if isinstance(summary, list):
        return "\n".join(s["text"] for s in summary if isinstance(s, dict) and isinstance(s.get("text"), str))
    return ""


def _token_family(part: Json) -> str | None:
    """The family that can read a reasoning part's replay token (None: it carries none)."""
    ptype = part.get("type")
    if ptype == "thinking":
        return ANTHROPIC if isinstance(part.get("signature"), str) else None
    if ptype == "redacted_thinking":
        return ANTHROPIC
    if not isinstance(part.get("text"), str):  # a Responses reasoning item
        return OPENAI if isinstance(part.get("encrypted_content"), str) else None
    metadata = part.get("metadata")
    if not isinstance(metadata, dict):
        return None
    for family, keys in TOKEN_FAMILIES.items():
        scoped = metadata.get(family)
        if isinstance(scoped, dict) and any(isinstance(scoped.get(k), str) for k in keys):
            return COUNTING_FAMILY.get(family, family)
    return None


def _media_of(obj: Json) -> tuple[MediaCost, str] | None:
    """A media block of any stored shape: its cost and the payload string its length comes from
    ("" for a reference by URL or file ID). None: not a media block."""
    kind = obj.get("type")
    if kind in ("image", "document") and isinstance(obj.get("source"), dict):  # Anthropic
        source = obj["source"]
        mime = source.get("media_type") if isinstance(source.get("media_type"), str) else None
        data = source.get("data") if source.get("type") == "base64" else None
        if source.get("type") == "text":
            return None  # a text document is text
        return _media(mime or ("image/png" if kind == "image" else "application/pdf"), data)
    if kind == "file" and isinstance(obj.get("url"), str):  # MiMo / OpenCode
        mime = str(obj.get("mime") or "")
        if mime in INLINED_FILES:
            return MediaCost("inlined"), obj["url"]
        return _url_media(obj["url"], mime)
    if kind == "input_image":  # Responses
        detail = obj.get("detail") if isinstance(obj.get("detail"), str) else None
        cost, payload = _url_media(obj.get("image_url"), "image/png")
        return MediaCost(cost.kind, cost.size, cost.pages, detail, cost.decoded), payload
    if kind == "input_file":
        return _url_media(obj.get("file_data") or obj.get("file_url"), "application/pdf")
    if kind == "image_url" and isinstance(obj.get("image_url"), dict):  # Chat Completions
        detail = obj["image_url"].get("detail")
        cost, payload = _url_media(obj["image_url"].get("url"), "image/png")
        return MediaCost(
            cost.kind, cost.size, cost.pages, detail if isinstance(detail, str) else None
        ), payload
    if kind == "media" and isinstance(obj.get("data"), str):  # AI SDK tool-result content
        return _media(str(obj.get("mediaType") or ""), obj["data"])
    inline = obj.get("inlineData")
    if isinstance(inline, dict) and isinstance(inline.get("data"), str):  # Gemini
        return _media(str(inline.get("mimeType") or ""), inline["data"])
    if isinstance(obj.get("fileData"), dict):
        return _media(str(obj["fileData"].get("mimeType") or ""), None)
    return None


def _url_media(url: Any, mime: str) -> tuple[MediaCost, str]:
    """A `data:` URL (its payload counted), an `http(s)`/`file:` URL or a file ID (not fetched)."""
    if not isinstance(url, str):
        return _media(mime, None)
    if url.startswith("data:"):
        head, _, body = url.partition(",")
        declared = head[5:].split(";", 1)[0]
        cost, _ = _media(declared or mime, body if head.endswith(";base64") else None)
        return cost, url
    return _media(mime, None)[0], ""


def _media(mime: str, payload: str | None) -> tuple[MediaCost, str]:
    if mime.startswith("image/"):
        return MediaCost("image", image_size(payload) if payload else None), payload or ""
    if mime == "application/pdf":
        return MediaCost("pdf", pages=pdf_pages(payload) if payload else None), payload or ""
    decoded = len(payload) * 3 // 4 if payload else 0
    return MediaCost("file", decoded=decoded), payload or ""


# =============================================================================================
# For one provider
# =============================================================================================
def cost_tokens(cost: PartCost, counting: Counting) -> int:
    """The part's tokens for `counting`'s provider (hidden reasoning apart, `hidden_reasoning`)."""
    total = cost.text + sum(media_tokens(m, counting.family) for m in cost.media)
    return total + cost.compaction if counting.family == OPENAI else total


def media_tokens(media: MediaCost, family: str) -> int:
    if media.kind == "inlined":
        return 0
    if media.kind == "file":
        return est_len(media.decoded)  # a text document: its characters / 4
    pages = media.pages or 1
    if media.kind == "pdf":
        return (GEMINI_PDF_PAGE if family == GOOGLE else PDF_PAGE) * pages
    if family == OPENAI:
        return openai_image_tokens(media.size, media.detail)
    if family == GOOGLE:
        return gemini_image_tokens(media.size)
    return anthropic_image_tokens(media.size)


def anthropic_image_tokens(size: tuple[int, int] | None) -> int:
    """width × height / 750 after the long edge is brought to 1568, at most the 1600 of the largest
    image Claude reads (its documented ceiling, also taken when the size is unknown)."""
    if size is None:
        return ANTHROPIC_IMAGE_MAX
    width, height = size
    scale = min(1.0, ANTHROPIC_LONG_EDGE / max(width, height))
    return min(ANTHROPIC_IMAGE_MAX, math.ceil(width * scale * height * scale / ANTHROPIC_PIXELS_PER_TOKEN))


def openai_image_tokens(size: tuple[int, int] | None, detail: str | None) -> int:
    """85 + 170 per 512-pixel tile, once the image fits 2048 × 2048 and its short side is at most
    768 (`detail: low`: 85); a 768 × 768 image when the size is unknown."""
    if detail == "low":
        return OPENAI_LOW
    if size is None:
        return OPENAI_IMAGE_UNKNOWN
    width, height = float(size[0]), float(size[1])
    fit = min(1.0, OPENAI_BOX / max(width, height))
    width, height = width * fit, height * fit
    short = min(1.0, OPENAI_SHORT / min(width, height))
    width, height = width * short, height * short
    tiles = math.ceil(width / OPENAI_TILE) * math.ceil(height / OPENAI_TILE)
    return OPENAI_BASE + OPENAI_PER_TILE * tiles


def gemini_image_tokens(size: tuple[int, int] | None) -> int:
    """258 for an image within 384 × 384, else 258 per 768 × 768 tile; 258 when the size is unknown."""
    if size is None or (size[0] <= GEMINI_SMALL and size[1] <= GEMINI_SMALL):
        return GEMINI_PER_TILE
    return GEMINI_PER_TILE * math.ceil(size[0] / GEMINI_TILE) * math.ceil(size[1] / GEMINI_TILE)


def hidden_reasoning(tokens: Any, costs: Iterable[PartCost], counting: Counting) -> int:
    """The reasoning a step produced beyond its visible text, as its usage record tells it, when its
    replay tokens are `counting`'s provider's: the reasoning count (OpenAI reports it) less the
    visible reasoning; for Anthropic, which reports none apart, the output count less the whole
    visible step. 0 without usage or without a replayable token."""
    parts = list(costs)
    replayed = [c for c in parts if c.reasoning is not None and c.reasoning == counting.family]
    if not replayed or not counting.reasoning_input or not isinstance(tokens, Mapping):
        return 0
    reasoning = _count(tokens.get("reasoning"))
    if reasoning > 0:
        return max(0, reasoning - sum(c.reasoning_text for c in replayed))
    if counting.family == ANTHROPIC:
        return max(0, _count(tokens.get("output")) - sum(c.text for c in parts))
    return 0


def _count(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else 0


def prompt_count(tokens: Any) -> int:
    """The prompt side of a usage record: input + cache reads + cache writes (total − output when
    only the total is recorded); 0 when it records none."""
    if not isinstance(tokens, Mapping):
        return 0
    raw = tokens.get("cache")
    cache: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    prompt = _count(tokens.get("input")) + _count(cache.get("read")) + _count(cache.get("write"))
    return prompt or max(0, _count(tokens.get("total")) - _count(tokens.get("output")))


def sum_costs(costs: Sequence[PartCost], counting: Counting) -> int:
    return sum(cost_tokens(c, counting) for c in costs)
