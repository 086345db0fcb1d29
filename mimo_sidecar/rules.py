"""The provider-rules checker, for hosts: what each provider refuses with a 400, per output format.

    from .rules import check

    built = sidecar.request_build({"sessionId": sid, "format": "anthropic"})
    problems = check("anthropic", built.messages, prefix=built.prefix.request, overrides=built.overrides)
    assert problems == [], problems

`check(fmt, messages, *, prefix=None, overrides=None, thinking=None, gemini_signatures=True,
open_end=False) -> list[Violation]` looks at a list in one of the output formats (`ai-sdk`,
`anthropic`, `openai-chat`, `openai-responses`, `gemini`): the sidecar's own output or any a host
holds, and returns every rule it breaks, empty when the provider would accept it.

- `prefix`: the request's `prefix.request`. Its cache breakpoints count; for `openai-chat` its
  `messages` go in front; for `anthropic`, when given, it must define `tools` if the history holds
  calls (the API refuses such a request otherwise).
- `overrides`: `request/build`'s `overrides` (a forced `thinking: {"type": "disabled"}` counts as off).
- `thinking`: the request's Anthropic thinking mode. `None` leaves the two rules about thinking in
  the final assistant message unchecked.
- `gemini_signatures`: check that each model turn's first `functionCall` carries a
  `thoughtSignature` (Gemini 3 requires it).
- `open_end`: the host appends a user turn before sending (the writer's fork), so the rules about
  the final message are not checked.

A `Violation` is `(rule, index, detail)`: `rule` is `<format>/<name>`, one of `RULES` (which says
what each means), `index` the message or item at fault (-1 for the request as a whole).

The checker is a pure function with no dependency on the rest of the sidecar; it is the same one
the sidecar's own tests run over every request they build (docs/formats.md, "Formats").
"""

from .core.formats.rules import RULES, Violation, check

__all__ = ["RULES", "Violation", "check"]
