"""Citations point into docs/behavior.md, and every one of them resolves.

The code, the tests and the documents cite the behaviour reference as `behavior.md#<anchor>` (in
Markdown, as a link to `docs/behavior.md#<anchor>`). The anchors are the explicit
`<a id="..."></a>` of docs/behavior.md, which never change once published. A citation of an anchor
that does not exist fails here, as does an internal link of behavior.md to a missing anchor.

The second test guards against citations of the external specification the reference replaced
(section-sign numbers, "spec" followed by a section sign, the spec's file name). Checkpoint headings
inside test data (`## ` + section sign + number) and citations that name another document are not
citations of it.

The third guards against references to any other document a reader of the repository does not have:
the team's provider-formats and pygls notes, the shared spec and notes directories, and issue
numbers. Say what the rule is, or cite protocol.md or behavior.md, instead.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BEHAVIOR = ROOT / "docs" / "behavior.md"
SCOPE = ["mimo_sidecar", "tests", "protocol.md", "README.md", "docs"]
SUFFIXES = {".py", ".md", ".mjs", ".js", ".json", ".toml", ".txt"}
THIS_FILE = Path(__file__).resolve()

ANCHOR = re.compile(r'<a id="([a-z0-9-]+)"></a>')
CITATION = re.compile(r"behavior\.md#([A-Za-z0-9_-]+)")
INTERNAL_LINK = re.compile(r"\]\(#([^)\s]+)\)")

SECTION = "\u00a7"  # spelled out so that this file holds no citation form itself
SPEC_CITATION = re.compile(rf"{SECTION}\d|\bspec\s+{SECTION}|rebuild-behavior\.md", re.IGNORECASE)
# Not citations of the spec: checkpoint headings in data, a string that starts with a checkpoint
# section title, and a run of section numbers right after another document's name.
DATA_HEADING = re.compile(rf"##\s*{SECTION}\d+")
TITLE_STRING = re.compile(rf"[\"']{SECTION}\d+ [A-Z]")
OTHER_DOCUMENT = re.compile(
    rf"(?P<doc>[\w./-]+\.md)`?\s*{SECTION}\d+(?:\.\d+)*(?:\s*(?:,|and)\s*{SECTION}\d+(?:\.\d+)*)*"
)


def scoped_files() -> list[Path]:
    files: list[Path] = []
    for name in SCOPE:
        path = ROOT / name
        candidates = [path] if path.is_file() else sorted(path.rglob("*"))
        files += [
            p
            for p in candidates
            if p.is_file()
            and p.suffix in SUFFIXES
            and "__pycache__" not in p.parts
            and p.resolve() != THIS_FILE
        ]
    return files


def anchors() -> list[str]:
    return ANCHOR.findall(BEHAVIOR.read_text(encoding="utf-8"))


def test_behavior_md_anchors_are_unique_and_well_formed() -> None:
    found = anchors()
    assert len(found) > 100, "docs/behavior.md lost its anchors"
    duplicates = sorted(a for a, n in Counter(found).items() if n > 1)
    assert duplicates == [], f"anchors defined twice in docs/behavior.md: {duplicates}"
    for deviation in range(1, 15):
        assert f"d{deviation}" in found, f"deviation D{deviation} has no anchor d{deviation}"


def test_every_behavior_citation_resolves() -> None:
    known = set(anchors())
    broken: list[str] = []
    cited = 0
    for path in scoped_files():
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for anchor in CITATION.findall(line):
                cited += 1
                if anchor not in known:
                    broken.append(f"{path.relative_to(ROOT)}:{lineno}: behavior.md#{anchor}")
            if path == BEHAVIOR:
                missing = [a for a in INTERNAL_LINK.findall(line) if a not in known]
                broken += [f"docs/behavior.md:{lineno}: (#{a})" for a in missing]
    assert cited > 0, "no citation of docs/behavior.md was found at all"
    assert broken == [], "citations of anchors that docs/behavior.md does not define:\n" + "\n".join(broken)


def spec_citations(line: str) -> list[str]:
    """The citations of the external spec on one line (none for data or other documents)."""
    for doc in OTHER_DOCUMENT.finditer(line):
        if Path(doc.group("doc")).name not in ("behavior.md", "rebuild-behavior.md"):
            line = line.replace(doc.group(0), "")
    line = DATA_HEADING.sub("", TITLE_STRING.sub("", line))
    return [m.group(0) for m in SPEC_CITATION.finditer(line)]


def test_spec_citation_filter() -> None:
    s = SECTION
    assert spec_citations(f"the watermark (spec {s}5.3) moves") == [f"spec {s}"]
    assert spec_citations(f"see {s}12.4 and {s}7.1 step 5") == [f"{s}1", f"{s}7"]
    assert spec_citations("see ../shared/spec/rebuild-behavior.md") == ["rebuild-behavior.md"]
    assert spec_citations(f'"# Title\\n## {s}7 Discovered knowledge\\n"') == []
    assert spec_citations(f'    ("{s}1 Active intent", "_What the user wants_"),') == []
    assert spec_citations(f"(see ../shared/notes/pygls-sidecar-notes.md {s}1.3, {s}1.10, {s}4)") == []
    assert spec_citations("behavior.md#watermark-adjust, D4") == []


# protocol.md's recorded examples are the sidecar's own output: the checkpoint template's section
# names ("§1 Active intent") appear there as data, never as citations.
EXAMPLE_BEGIN = re.compile(r"<!-- BEGIN GENERATED: example ")
EXAMPLE_END = "<!-- END GENERATED -->"


def prose_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of every line that is not inside a recorded example block."""
    kept: list[tuple[int, str]] = []
    in_example = False
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if EXAMPLE_BEGIN.match(line):
            in_example = True
        elif in_example and line.startswith(EXAMPLE_END):
            in_example = False
        elif not in_example:
            kept.append((lineno, line))
    return kept


def test_prose_lines_skip_recorded_examples(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        f"before {SECTION}1\n<!-- BEGIN GENERATED: example x -->\n## {SECTION}2 data\n{EXAMPLE_END}\nafter\n",
        encoding="utf-8",
    )
    assert prose_lines(doc) == [(1, f"before {SECTION}1"), (5, "after")]


def lines_citing(find: Callable[[str], list[str]]) -> list[str]:
    """`path:line: what` for every prose line of the scope in which `find` finds something."""
    left: list[str] = []
    for path in scoped_files():
        for lineno, line in prose_lines(path):
            found = find(line)
            if found:
                left.append(f"{path.relative_to(ROOT)}:{lineno}: {', '.join(found)}")
    return left


def test_no_citation_of_the_external_spec_remains() -> None:
    left = lines_citing(spec_citations)
    assert left == [], f"{len(left)} line(s) still cite the external spec:\n" + "\n".join(left[:50])


# Documents outside the repository, by name. `shared/real-sessions` (a corpus the tests read in
# place when it is found) is not a document and may be named.
OUTSIDE_DOCUMENT = re.compile(
    r"provider-formats|pygls-sidecar-notes|shared/(?:spec|notes)\b|\bissues? \d+", re.IGNORECASE
)


def outside_references(line: str) -> list[str]:
    return [m.group(0) for m in OUTSIDE_DOCUMENT.finditer(line)]


def test_outside_reference_filter() -> None:
    assert outside_references("rendered from (provider-formats \u00a7D1).") == ["provider-formats"]
    assert outside_references("see ../shared/notes/pygls-sidecar-notes.md") == [
        "shared/notes",
        "pygls-sidecar-notes",
    ]
    assert outside_references("(issue 10 item 6) and Issue 3: and issues 8 to 11") == [
        "issue 10",
        "Issue 3",
        "issues 8",
    ]
    assert outside_references("shared/real-sessions/ transcripts; an issue with the API") == []


def test_no_reference_to_a_document_outside_the_repository() -> None:
    left = lines_citing(outside_references)
    assert left == [], f"{len(left)} line(s) cite a document outside the repository:\n" + "\n".join(left[:50])
