"""Parse a large JSON text slice by slice, each slice with orjson: linear in the text's size, at
orjson's speed, and never holding the interpreter for more than one slice.

Why not one `orjson.loads`: it keeps the GIL for the whole text (about 120 ms for 50 MB), so no
other session could be answered meanwhile, and it first copies the whole text, which put a
one-shot 50 MB `session/open` over the memory target. Why not ijson: its C backend re-reads a string
from its start each time the string crosses a read buffer, so 20 MB of "é" took 42 s.

How the slices are found. A value no longer than `SLICE_BYTES` is parsed whole. A longer array or
object is split into runs of consecutive elements (or members) of about `SLICE_BYTES` each, each run
parsed as `[run]` (or `{run}`); an element that is itself too long is split the same way, one level
down. Where one element ends is found by parsing a window that starts at it: orjson stops at the
first byte after the value (its error gives the position), or fails at the window's end when the
value is longer. To cut a run without walking every element, the parser guesses: the first comma
about `SLICE_BYTES` on that is followed by what began the run's first element (`{"info":`, say;
a quote in an object; anything in an array of numbers), and parses the run up to it. The guess
needs no proof: the run parses, inside wrappers that each hold one value, if and only if the comma
separates two elements, because what precedes the run is known to start an element, so a comma
inside a string or a nested value leaves a string or a bracket open. When the guess fails, the
elements are walked one window at a time until the next run.

Every run is wrapped in as many brackets as enclose it in the text, so orjson's own depth limit
(`MAX_NESTING`) counts from the document's top. What orjson refuses and JSON allows (lone surrogate
escapes, numbers beyond the double range) goes to the codec's exact parsers (`leaf` for a run,
`exact` to find where a value ends). The result equals what parsing the whole text would give:
the same values, key order and duplicate keys (the last one wins).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import orjson

from .jsondepth import MAX_NESTING, FrameTooDeep

SLICE_BYTES = 1 << 20  # the longest run orjson parses at once: ~3 ms, a few MiB of temporary memory
_FIRST_WINDOW = 64 << 10  # the first guess of an element's size; later guesses follow the last one
_MIN_WINDOW = 4 << 10
_HINT_BYTES = 32  # the longest beginning of a run's first element that a guessed cut must repeat
_GUESS_REACH = 2  # a cut is guessed up to this many SLICE_BYTES after the run's start

_WHITESPACE = re.compile(rb"[ \t\n\r]*")
_SCALAR = re.compile(rb"[^ \t\n\r,:\[\]{}\"]+")  # a number or a literal, up to the next delimiter
_CONTINUATION = range(0x80, 0xC0)  # UTF-8 bytes that do not start a character
_AFTER_VALUE = b",]}"  # what follows an element or a member's value
_CUT_TOKEN = 64  # a decoder error this close to a window's end may be a token the window cut
_OPEN_ARRAY, _CLOSE_ARRAY, _OPEN_OBJECT, _CLOSE_OBJECT = 0x5B, 0x5D, 0x7B, 0x7D
_COMMA, _COLON, _QUOTE, _BACKSLASH = 0x2C, 0x3A, 0x22, 0x5C

Leaf = Callable[[bytes], Any]


class SlicedParseError(ValueError):
    """The text is not JSON; the message names the byte where it stops being JSON."""


def loads_sliced(text: bytes | bytearray, leaf: Leaf, exact: json.JSONDecoder) -> Any:
    """Parse `text` slice by slice (see the module's doc). `leaf` parses one slice as the codec
    does (raising ValueError, or FrameTooDeep for nesting past the limit); `exact` is the codec's
    standard-library decoder, which finds where a value that orjson refuses ends."""
    return _Parser(text, leaf, exact).document()


class _Parser:
    def __init__(self, text: bytes | bytearray, leaf: Leaf, exact: json.JSONDecoder) -> None:
        self.text = text
        self.view = memoryview(text)
        self.leaf = leaf
        self.exact = exact
        self.window = _FIRST_WINDOW

    def document(self) -> Any:
        start = self._skip_space(0)
        if start == len(self.text):
            raise SlicedParseError("no JSON value (the text is empty)")
        end = self._small_end(start)
        if end is None:
            value, end = self._large(start, 0)
        else:
            value = self.leaf(bytes(self.view[start:end]))
        end = self._skip_space(end)
        if end != len(self.text):
            raise self._error("unexpected content after the JSON value", end)
        return value

    def _large(self, pos: int, level: int) -> tuple[Any, int]:
        """The value at `pos`, which may be longer than a slice, and the byte after it. `level`
        counts the arrays and objects around it."""
        if level >= MAX_NESTING:  # the value would open one level too many (and we recurse)
            raise FrameTooDeep
        opener = self.text[pos]
        if opener == _OPEN_ARRAY:
            return self._array(pos, level)
        if opener == _OPEN_OBJECT:
            return self._object(pos, level)
        end = self._token_end(pos)
        return self.leaf(bytes(self.view[pos:end])), end

    # -- arrays and objects ----------------------------------------------------------------------
    def _array(self, pos: int, level: int) -> tuple[list[Any], int]:
        items: list[Any] = []
        cur = self._skip_space(pos + 1)
        if self._byte(cur) == _CLOSE_ARRAY:
            return items, cur + 1
        while True:  # `cur` starts an element
            end = self._small_end(cur)
            if end is None:
                value, end = self._large(cur, level + 1)
                items.append(value)
            else:
                hint = self._array_hint(cur, end)
                run, end = self._run_from(cur, end, level, b"[]", hint, lambda start: start)
                items.extend(run)
            closed, cur = self._next_item(end, _CLOSE_ARRAY)
            if closed:
                return items, cur

    def _object(self, pos: int, level: int) -> tuple[dict[Any, Any], int]:
        result: dict[Any, Any] = {}
        cur = self._skip_space(pos + 1)
        if self._byte(cur) == _CLOSE_OBJECT:
            return result, cur + 1
        while True:  # `cur` starts a member
            key_end, value_start = self._member(cur)
            end = self._small_end(value_start)
            if end is None:
                key = self.leaf(bytes(self.view[cur:key_end]))
                result[key], end = self._large(value_start, level + 1)
            else:
                run, end = self._run_from(cur, end, level, b"{}", b'"', lambda start: self._member(start)[1])
                result.update(run)
            closed, cur = self._next_item(end, _CLOSE_OBJECT)
            if closed:
                return result, cur

    def _next_item(self, end: int, closer: int) -> tuple[bool, int]:
        """After an element or member that ends at `end`: (True, the byte after the container)
        when `closer` follows, else (False, where the next element or member starts)."""
        cur = self._skip_space(end)
        found = self._byte(cur)
        if found == closer:
            return True, cur + 1
        if found != _COMMA:
            raise self._error(f"expected ',' or '{chr(closer)}'", cur)
        return False, self._skip_space(cur + 1)

    def _run_from(
        self,
        start: int,
        first_end: int,
        level: int,
        brackets: bytes,
        hint: bytes,
        value_at: Callable[[int], int],
    ) -> tuple[Any, int]:
        """The run of elements (or members) that starts with the one in [start, first_end), parsed,
        and the byte after its last one: cut by a guess, else walked one element at a time
        (`value_at` gives where the value of an element or member starting at a byte begins)."""
        guessed = self._guessed_run(start, first_end, level, brackets, hint)
        if guessed is not None:
            return guessed
        end = first_end
        while end - start < SLICE_BYTES:
            comma = self._skip_space(end)
            if self._byte(comma) != _COMMA:
                break
            following = self._small_end(value_at(self._skip_space(comma + 1)))
            if following is None:
                break
            end = following
        return self._run(start, end, level, brackets), end

    def _array_hint(self, start: int, first_end: int) -> bytes:
        """What a guessed cut in an array must be followed by: the beginning of the run's first
        element up to its first ':' (`{"info":`), else its first byte; a quote for strings;
        nothing for numbers and literals, which hold no comma. (In an object: a quote.)"""
        opener = self.text[start]
        if opener not in (_OPEN_ARRAY, _OPEN_OBJECT):
            return b'"' if opener == _QUOTE else b""
        head = bytes(self.view[start : min(first_end, start + _HINT_BYTES)])
        colon = head.find(b":")
        return head[: colon + 1] if colon > 0 else head[:1]

    def _member(self, pos: int) -> tuple[int, int]:
        """The end of the member name at `pos`, and where its value starts."""
        if self._byte(pos) != _QUOTE:
            raise self._error("expected a member name (a string)", pos)
        key_end = self._string_end(pos)
        colon = self._skip_space(key_end)
        if self._byte(colon) != _COLON:
            raise self._error("expected ':' after a member name", colon)
        return key_end, self._skip_space(colon + 1)

    # -- runs ------------------------------------------------------------------------------------
    def _guessed_run(
        self, start: int, first_end: int, level: int, brackets: bytes, hint: bytes
    ) -> tuple[Any, int] | None:
        """The run from `start` to a guessed cut about SLICE_BYTES on (the module's doc says why
        a run that parses is cut right), and the cut; None when there is no guess or it fails."""
        if first_end - start >= SLICE_BYTES:
            return None  # the first element is a run by itself
        cut = self._comma_before(hint, start + SLICE_BYTES, start + _GUESS_REACH * SLICE_BYTES)
        if cut is None:
            return None
        try:
            return _unwrapped(orjson.loads(self._wrapped(start, cut, level, brackets)), level), cut
        except ValueError:  # orjson's error, or a wrapper that does not hold exactly one value
            return None

    def _comma_before(self, hint: bytes, start: int, stop: int) -> int | None:
        """The first comma in [start, stop) followed (after whitespace) by `hint`."""
        if not hint:
            found = self.text.find(b",", start, stop)
            return found if found >= 0 else None
        found = self.text.find(hint, start, stop)
        while found >= 0:
            before = self._space_back(found)
            if before >= start and self.text[before] == _COMMA:
                return before
            found = self.text.find(hint, found + 1, stop)
        return None

    def _run(self, start: int, end: int, level: int, brackets: bytes) -> Any:
        """The elements or members in [start, end), whose ends are known."""
        try:
            return _unwrapped(self.leaf(self._wrapped(start, end, level, brackets)), level)
        except FrameTooDeep:
            raise
        except ValueError as exc:
            raise self._error(f"not JSON ({_reason(exc)})", start) from None

    def _wrapped(self, start: int, end: int, level: int, brackets: bytes) -> bytes:
        """The run [start, end) inside its container's brackets and `level` arrays standing for the
        containers around that one, so orjson's depth limit counts from the top."""
        return b"".join((b"[" * level, brackets[:1], self.view[start:end], brackets[1:], b"]" * level))

    # -- where a value ends ----------------------------------------------------------------------
    def _small_end(self, pos: int) -> int | None:
        """The byte after the value at `pos` when it is at most SLICE_BYTES long, else None."""
        opener = self._byte(pos)
        if opener not in (_OPEN_ARRAY, _OPEN_OBJECT):
            end = self._token_end(pos)
            return end if end - pos <= SLICE_BYTES else None
        size = self.window
        while True:
            stop = self._char_boundary(min(pos + size, len(self.text)))
            try:
                orjson.loads(self.view[pos:stop])
            except orjson.JSONDecodeError as exc:
                end = pos + len(exc.doc[: exc.pos].encode("utf-8", "surrogatepass"))
                if end >= stop and stop < len(self.text):  # the window ends inside the value
                    if size >= SLICE_BYTES:
                        return None
                    size = min(SLICE_BYTES, size * 8)
                    continue
                if end >= len(self.text) or self.text[end] not in _AFTER_VALUE:
                    # orjson stopped inside the value: something it refuses and JSON may allow
                    # (a lone surrogate escape, 1e400), or not JSON at all; the exact decoder says.
                    return self._exact_end(pos)
                # Else orjson stopped at the first byte after the value. (Invalid JSON can stop
                # at such a byte too, `[1,,2]`: the run holding the value then fails to parse.)
            else:
                end = stop
            self.window = max(_MIN_WINDOW, min(SLICE_BYTES, 4 * (end - pos)))
            return end

    def _exact_end(self, pos: int) -> int | None:
        """Where the array or object at `pos` ends, by the standard library's decoder (slower than
        orjson, and only asked when orjson refuses something); None beyond SLICE_BYTES."""
        size = self.window
        while True:
            stop = self._char_boundary(min(pos + size, len(self.text)))
            try:
                window = str(self.view[pos:stop], "utf-8")
            except UnicodeDecodeError as exc:
                raise self._error("not UTF-8", pos + exc.start) from None
            try:
                _value, end = self.exact.raw_decode(window)
            except RecursionError:
                raise FrameTooDeep from None
            except json.JSONDecodeError as exc:
                cut = exc.msg.startswith("Unterminated string") or exc.pos >= len(window) - _CUT_TOKEN
                if cut and stop < len(self.text):
                    if size >= SLICE_BYTES:
                        return None
                    size = min(SLICE_BYTES, size * 8)
                    continue
                where = pos + len(window[: exc.pos].encode("utf-8", "surrogatepass"))
                raise self._error(f"not JSON ({exc.msg})", where) from None
            return pos + len(window[:end].encode("utf-8", "surrogatepass"))

    def _token_end(self, pos: int) -> int:
        """The byte after the string, number or literal at `pos` (its content is orjson's to check)."""
        if self.text[pos] == _QUOTE:
            return self._string_end(pos)
        match = _SCALAR.match(self.text, pos)
        if match is None:
            raise self._error("expected a JSON value", pos)
        return match.end()

    def _string_end(self, pos: int) -> int:
        """The byte after the string that opens at `pos`: the first quote not escaped by an odd run
        of backslashes (found with `find`, at memchr's speed, whatever the string holds)."""
        quote = pos
        while True:
            quote = self.text.find(b'"', quote + 1)
            if quote < 0:
                raise self._error("unterminated string", pos)
            backslash = quote - 1
            while self.text[backslash] == _BACKSLASH:
                backslash -= 1
            if (quote - 1 - backslash) % 2 == 0:
                return quote + 1

    # -- bytes -----------------------------------------------------------------------------------
    def _byte(self, pos: int) -> int:
        if pos >= len(self.text):
            raise SlicedParseError(f"the text ends inside a JSON value (at byte {pos})")
        return self.text[pos]

    def _skip_space(self, pos: int) -> int:
        match = _WHITESPACE.match(self.text, pos)
        return match.end() if match else pos

    def _space_back(self, pos: int) -> int:
        """The last byte before `pos` that is not whitespace."""
        pos -= 1
        while pos > 0 and self.text[pos] in b" \t\n\r":
            pos -= 1
        return pos

    def _char_boundary(self, pos: int) -> int:
        """`pos`, moved back to the start of the UTF-8 character it falls in (orjson checks the
        encoding of its whole input first)."""
        back = pos
        while 0 < back < len(self.text) and self.text[back] in _CONTINUATION and pos - back < 3:
            back -= 1
        return back

    def _error(self, what: str, pos: int) -> SlicedParseError:
        return SlicedParseError(f"{what} at byte {pos}")


def _unwrapped(value: Any, level: int) -> Any:
    """The run inside its `level` wrapping arrays. Each must hold exactly one value: a guessed cut
    that falls inside a nested array can still parse, its array closed by a wrapper's bracket, but
    then some wrapper holds more than the run."""
    for _ in range(level):
        if not (isinstance(value, list) and len(value) == 1):
            raise ValueError("the cut is not between two elements")
        value = value[0]
    return value


def _reason(exc: ValueError) -> str:
    return exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
