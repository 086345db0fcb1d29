"""The normalised request: what every output format is rendered from (docs/formats.md, "Normalisation").

`normalize.normalize` turns the stored view (any host shape, behavior.md#shapes) into a list of `Turn`s:

- a **user** turn holds `Text` and `Media` blocks (and `Compaction`, an encrypted summary item);
- an **assistant** turn is one provider response (one step): `Text`, `Reasoning` and `ToolCall`
  blocks in the order the model produced them. Split entries that share `providerMessageID` are
  already merged into one turn;
- a **tool** turn holds the `ToolResult`s of the assistant turn right before it: exactly one per
  call, in call order.

Nothing in here is format specific: a renderer decides which reasoning it may replay, how media is
carried and how call IDs are spelled. The blocks keep the stored data they came from (`native`,
`metadata`, the original `arguments` string), so a renderer that targets the provider that produced
them sends them back byte for byte.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..estimate.jsjson import js_stringify

Json = dict[str, Any]



@dataclass(slots=True)
class Text:
    text: str
    metadata: Json | None = None  # a MiMo text part's metadata (Gemini thought signatures)
    phase: str | None = None  # a Responses assistant message's phase (commentary/final_answer)
    volatile: bool = False  # changes place every turn (the memory reminder): never a cache breakpoint


@dataclass(slots=True)
class Media:
    """An image, PDF or other file: from a MiMo `file` part, an Anthropic `image`/`document` block,
    a Responses `input_image`/`input_file` item or an inline result's attachment.

    `url` is the stored URL exactly as given (`data:`, `https:`, `file:`...), `data` the base64
    payload when the source gave it without a URL. `b64()` and `data_url()` derive the other form.
    """

    mime: str
    url: str | None = None
    data: str | None = None
    filename: str | None = None
    title: str | None = None
    detail: str | None = None
    file_id: str | None = None
    native: Json | None = None  # the stored provider-native block, when there is one

    @property
    def is_image(self) -> bool:
        return self.mime.startswith("image/")

    def b64(self) -> str | None:
        """The base64 payload: `data`, or the body of a base64 `data:` URL."""
        if self.data is not None:
            return self.data
        if self.url is not None and self.url.startswith("data:"):
            head, sep, body = self.url.partition(",")
            if sep and head.endswith(";base64"):
                return body
        return None

    def data_url(self) -> str | None:
        """A `data:` URL: the stored one, else one built from the base64 payload."""
        if self.url is not None and self.url.startswith("data:"):
            return self.url
        if self.data is not None:
            return f"data:{self.mime};base64,{self.data}"
        return None

    def remote_url(self) -> str | None:
        """An `http(s)` URL a provider can fetch itself."""
        if self.url is not None and self.url.startswith(("https://", "http://")):
            return self.url
        return None

    def decoded_size(self) -> int | None:
        """Bytes of the decoded payload (from the base64 length; no decoding)."""
        payload = self.b64()
        if payload is None:
            return None
        return len(payload) * 3 // 4 - payload[-2:].count("=")

    def label(self) -> str:
        return f"{self.mime} {self.filename or self.title or ''}".rstrip()


@dataclass(slots=True)
class Reasoning:
    """Thinking, from a MiMo `reasoning` part or a provider-native block, with its replay token.

    `family` is the API that can verify the token (ANTHROPIC, OPENAI, GOOGLE, another key of
    MiMo metadata such as `bedrock`), or None when there is no token: such reasoning is never
    replayed to a provider (it would be rejected or mislead; docs/formats.md, "Normalisation", step 5).
    """

    text: str
    family: str | None
    native: Json | None = None  # thinking / redacted_thinking block or Responses reasoning item
    metadata: Json | None = None  # a MiMo reasoning part's metadata (AI SDK providerOptions)

    def token(self, key: str) -> Any:
        """A MiMo metadata token such as `signature` under this reasoning's family."""
        if self.metadata is None or self.family is None:
            return None
        scoped = self.metadata.get(self.family)
        return scoped.get(key) if isinstance(scoped, dict) else None


@dataclass(slots=True)
class ToolCall:
    call_id: str
    name: str
    input: Any
    arguments: str | None = None  # OpenAI's JSON string as stored: replayed verbatim to OpenAI
    custom: bool = False  # a Responses freeform tool: `input` is a plain string
    metadata: Json | None = None  # an inline tool part's metadata (Gemini signature...)
    provider_executed: bool = False
    # `input` as `JSON.stringify` writes it, once: a call is shared by every request built from its
    # message's version (`normalize`), and OpenAI formats send every call's input as a string.
    stringified: str | None = None

    def input_json(self, plain: bool = False) -> str:
        """`input` as `JSON.stringify` writes it (`{}` for none), computed once per call. `plain`:
        the input is known to hold nothing orjson writes otherwise (it sits in a part measured
        so, `Message.plain_json`), and orjson's text is taken without the check."""
        if self.stringified is None:
            value = self.input if self.input is not None else {}
            self.stringified = (orjson.dumps(value).decode() if plain else js_stringify(value)) or "{}"
        return self.stringified


@dataclass(slots=True)
class ToolResult:
    call_id: str
    name: str
    content: list[Text | Media]  # in stored order
    is_error: bool = False
    as_string: bool = True  # the stored content was a bare string
    custom: bool = False  # answers a freeform (custom) tool call
    provider_executed: bool = False
    source: str | None = None  # the stored message holding it (the issuer for inline/synthesized)

    @property
    def text(self) -> str:
        """The text blocks joined with "\\n" (core.session.shapes.content_text)."""
        texts = [b.text for b in self.content if isinstance(b, Text)]
        return texts[0] if len(texts) == 1 else "\n".join(texts)

    @property
    def media(self) -> list[Media]:
        return [b for b in self.content if isinstance(b, Media)]


@dataclass(slots=True)
class Compaction:
    """A provider's compaction item in a user turn (Codex `compaction`, after its label text): the
    whole history before it, encrypted; only the Responses API that wrote it can read it back."""

    encrypted: str


Block = Text | Media | Reasoning | ToolCall | ToolResult | Compaction


@dataclass(slots=True)
class Turn:
    role: str  # "user" | "assistant" | "tool"
    blocks: list[Any]
    sources: list[str]  # the stored messages it comes from; the first is the primary one
    provider: str | None = None  # assistant: info.providerID
    model: str | None = None  # assistant: info.modelID
    boundary: bool = False  # the rebuild boundary's user turn
    instructions: bool = False  # user: a provider's developer/system message (`info.providerRole`)
    deferred: list[Turn] = field(default_factory=list)  # internal: user content held for after results

    def add_source(self, message_id: str) -> None:
        if message_id not in self.sources:
            self.sources.append(message_id)


def is_base64(payload: str) -> bool:
    try:
        base64.b64decode(payload[:64] + "=" * (-len(payload[:64]) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True
