"""Every Markdown link of the documents resolves: the file it names exists, and so does its anchor.

A reader follows the links of README.md, protocol.md and docs/*.md (and the READMEs of `examples/`,
`benchmarks/` and `clients/vscode/`) without anything else at hand, so a link to a missing file or
to a heading that was renamed is a dead end. An anchor is either a heading's slug, as GitHub makes
it (lowercase; punctuation and symbols removed; each space a hyphen; `-1`, `-2`... for repeats), or
an explicit `<a id="..."></a>`. Links inside code (fenced blocks, inline code spans) are examples,
not links. External links (`http:`, `https:`, `mailto:`) are not fetched.

test_citations.py checks the `behavior.md#<anchor>` citations of code and prose against
behavior.md's explicit anchors; this file checks the Markdown links themselves.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [
    ROOT / "README.md",
    ROOT / "protocol.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "examples" / "node" / "README.md",
    ROOT / "clients" / "vscode" / "README.md",
    ROOT / "examples" / "sample" / "README.md",
    ROOT / "examples" / "hosts" / "README.md",
    ROOT / "benchmarks" / "README.md",
    ROOT / "schemas" / "README.md",  # generated: every model's file
]
EXTERNAL = ("http://", "https://", "mailto:")

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
EXPLICIT_ANCHOR = re.compile(r"""<a\s+(?:id|name)=["']([^"']+)["']""")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
# [text](target) or ![alt](target), the target with an optional "title"; text may hold `code`.
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
MARKDOWN_LINK_TEXT = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
HTML_TAG = re.compile(r"<[^>]+>")


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: links reduced to their text, HTML tags dropped, lowercase,
    every character that is not a letter, a digit, a mark, `_`, `-` or a space dropped, and each
    space turned into a hyphen (runs are not collapsed)."""
    text = HTML_TAG.sub("", MARKDOWN_LINK_TEXT.sub(r"\1", heading)).strip().lower()
    kept = [
        ch
        for ch in text
        if ch in "-_ " or unicodedata.category(ch)[0] in "LNM" or unicodedata.category(ch) == "Pc"
    ]
    return "".join(kept).replace(" ", "-")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks."""
    lines: list[tuple[int, str]] = []
    fence: str | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        opening = FENCE.match(line)
        if opening and (fence is None or opening.group(1) == fence):
            fence = opening.group(1) if fence is None else None
            continue
        if fence is None:
            lines.append((lineno, line))
    return lines


def anchors_of(path: Path) -> set[str]:
    found: set[str] = set()
    repeats: dict[str, int] = {}
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        found.update(EXPLICIT_ANCHOR.findall(INLINE_CODE.sub("", line)))  # not the ones shown as code
        heading = HEADING.match(line)
        if heading:
            slug = github_slug(heading.group(2))
            n = repeats.get(slug, 0)
            repeats[slug] = n + 1
            found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def links_of(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every Markdown link outside code."""
    return [
        (lineno, target)
        for lineno, line in prose_lines(text)
        for target in LINK.findall(INLINE_CODE.sub("", line))
    ]


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    broken: list[str] = []
    cache: dict[Path, set[str]] = {}
    for lineno, target in links_of(path.read_text(encoding="utf-8")):
        if not target or target.startswith(EXTERNAL):
            continue
        file_part, _, fragment = target.partition("#")
        resolved = (path.parent / file_part).resolve() if file_part else path
        where = f"{path.relative_to(root)}:{lineno}: ({target})"
        if not resolved.exists():
            broken.append(f"{where}: no such file")
        elif fragment and resolved.suffix == ".md":
            if resolved not in cache:  # once per file (setdefault would read it for every link)
                cache[resolved] = anchors_of(resolved)
            anchors = cache[resolved]
            if fragment not in anchors:
                broken.append(f"{where}: no anchor #{fragment} in {resolved.relative_to(root)}")
    return broken


def test_github_slugs() -> None:
    assert github_slug("`rebuild/insert`") == "rebuildinsert"
    assert github_slug("The inflation guard (`no-gain`)") == "the-inflation-guard-no-gain"
    assert github_slug("Normalisation (every format)") == "normalisation-every-format"
    assert github_slug("Waiting for a writer: which watermark the boundary gets (D4)") == (
        "waiting-for-a-writer-which-watermark-the-boundary-gets-d4"
    )
    assert github_slug("See what a rebuild would do: `mimo-sidecar inspect`") == (
        "see-what-a-rebuild-would-do-mimo-sidecar-inspect"
    )
    assert github_slug("`$/progress`") == "progress"
    assert github_slug("D12: the boundary goes right after `W`, even behind") == (
        "d12-the-boundary-goes-right-after-w-even-behind"
    )
    assert github_slug("4. Recent user input (verbatim)") == "4-recent-user-input-verbatim"
    assert github_slug("Importers: real transcripts as `session/open` params") == (
        "importers-real-transcripts-as-sessionopen-params"
    )


def test_the_checker_finds_what_is_broken(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text(
        '# Other\n\n<a id="kept"></a>\n## Same\n## Same\n`<a id="shown"></a>`\n', encoding="utf-8"
    )
    doc = tmp_path / "doc.md"
    doc.write_text(
        "# Title\n"
        "[ok](other.md#other) [ok](other.md#kept) [ok](other.md#same-1) [ok](#title) [ok](https://x.y/z)\n"
        "[bad file](missing.md) [bad anchor](other.md#gone) [bad here](#nowhere) [code](other.md#shown)\n"
        "`[in code](missing.md)`\n"
        "```\n[in a fence](missing.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(doc, tmp_path) == [
        "doc.md:3: (missing.md): no such file",
        "doc.md:3: (other.md#gone): no anchor #gone in other.md",
        "doc.md:3: (#nowhere): no anchor #nowhere in doc.md",
        "doc.md:3: (other.md#shown): no anchor #shown in other.md",
    ]


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves(path: Path) -> None:
    assert path.is_file(), f"{path.relative_to(ROOT)} is gone: update DOCUMENTS"
    assert links_of(path.read_text(encoding="utf-8")) or path.name == "README.md", "no link found at all"
    broken = broken_links(path)
    assert broken == [], "links that lead nowhere:\n" + "\n".join(broken)
