"""Realistic text for generated sessions: source files, search results, build logs, web pages, prose.

Everything big is built by joining slices of pre-made line pools, so a 200 KB tool output costs
one `str.join`. The pools are built once per process from a fixed seed (they are the same for every
session); the per-session `random.Random` only chooses from them, so a session is reproducible
from its own seed.

The invented project is "tinyscript", a small language implemented in TypeScript (lexer, parser,
checker, emitter), which gives the paths, identifiers, logs and memory files one consistent theme.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from functools import lru_cache

PROJECT_ROOT = "/home/dev/tinyscript"

MODULES = {
    "lexer": ["scanner", "token", "position", "keywords", "unicode", "trivia", "index"],
    "parser": ["parser", "expression", "statement", "declaration", "recovery", "precedence", "index"],
    "checker": ["checker", "binder", "scope", "types", "inference", "diagnostics", "index"],
    "emitter": ["emitter", "sourcemap", "printer", "writer", "index"],
    "cli": ["main", "options", "watch", "format"],
    "util": ["assert", "collections", "strings", "path", "perf"],
}
IDENTS = (
    "token kind value pos span start end line column offset source text buffer cursor peek next "
    "node scope symbol diag result ctx env expr stmt decl params body index count flags parent child "
    "name range trivia keyword literal operator precedence left right op args callee member target "
    "emitter writer indent output map mapping file files options config cache entry key items queue"
).split()
TYPES = (
    "Token TokenKind Position Span Node Scope Symbol Diagnostic Lexer Parser Checker Emitter SourceFile "
    "TypeRef Expr Stmt Decl Binder Printer Writer SourceMap Options Program CompilerHost Trivia"
).split()
FUNCS = (
    "scan scanToken scanString scanNumber scanIdentifier skipTrivia peekChar advance expect parseExpression "
    "parseStatement parseBlock parseBinary parseUnary parsePrimary parseCall recover bindSymbol lookup "
    "declare checkNode checkCall inferType widen narrow emitNode emitBlock writeLine indent dedent "
    "addMapping report createDiagnostic formatDiagnostic resolvePath readFile watchFiles"
).split()
COMMENTS = [
    "Keep the position of the first character so diagnostics point at the start of the token.",
    "Trailing trivia belongs to the previous token; leading trivia to the next one.",
    "TODO: handle CRLF line endings consistently across the scanner and the source map.",
    "The precedence table is ordered from the loosest to the tightest binding operator.",
    "Recovery: skip to the next statement start so one error does not cascade.",
    "Identifiers may contain any Unicode ID_Continue code point after the first character.",
    "Numbers are scanned greedily; a trailing dot is part of the member access, not the literal.",
    "Scopes are chained; lookup walks outwards until it finds a declaration or reaches the root.",
    "Source map columns are zero-based UTF-16 offsets, like the ones the browser expects.",
    "Do not allocate here: this function runs once per character of every file.",
]
CODE_TEMPLATES = [
    "  const {i} = {f}({j});",
    "  if (!{i}) return undefined;",
    "  if ({i}.kind === TokenKind.{T}) {{",
    "    {i}.push({j});",
    "  }}",
    "  let {i} = this.{j}.{k};",
    "  for (const {i} of {j}.{k}) {{",
    "    this.{f}({i}, {j});",
    "  return {{ kind: TokenKind.{T}, {i}, {j} }};",
    "  this.{i} += {n};",
    "  while (this.{i} < this.{j}.length && is{T}(this.{j}.charCodeAt(this.{i}))) this.{i}++;",
    "  // {c}",
    "  throw new Error(`unexpected ${{{i}}} at ${{this.{j}}}`);",
    "  const {i}: {T} | undefined = this.{k}.get({j});",
    "  switch ({i}.kind) {{",
    "    case TokenKind.{T}: return this.{f}({j});",
    '  assert({i} >= 0, "{i} must not be negative");',
    "  {i}.{k} = {{ start: {j}.start, end: this.{k}.end }};",
]


Slots = tuple[tuple[str, Sequence[object]], ...]
# The values a template's `{name}`s are drawn from, in the order they are drawn (a seeded stream:
# the order is part of the corpus). `range(1, 65)` draws as `randint(1, 64)` does.
CODE_SLOTS: Slots = (
    ("i", IDENTS),
    ("j", IDENTS),
    ("k", IDENTS),
    ("f", FUNCS),
    ("T", TYPES),
    ("n", range(1, 65)),
    ("c", COMMENTS),
)


def _fill(rng: random.Random, template: str, slots: Slots = CODE_SLOTS) -> str:
    """`template` with each slot drawn from its values."""
    return template.format(**{name: rng.choice(values) for name, values in slots})


def _code_block(rng: random.Random) -> list[str]:
    name, typ = rng.choice(FUNCS), rng.choice(TYPES)
    head = rng.choice(
        [
            f"export function {name}({rng.choice(IDENTS)}: {typ}, {rng.choice(IDENTS)}: number): "
            f"{rng.choice(TYPES)} {{",
            f"  {name}({rng.choice(IDENTS)}: {typ}): void {{",
            f"export class {typ}{rng.choice(['Impl', 'Builder', 'Cache', 'Visitor'])} {{",
            f"function {name}(this: {typ}, {rng.choice(IDENTS)}: string): boolean {{",
        ]
    )
    body = [_fill(rng, rng.choice(CODE_TEMPLATES)) for _ in range(rng.randint(3, 14))]
    doc = [f"/** {rng.choice(COMMENTS)} */"] if rng.random() < 0.4 else []
    return [*doc, head, *body, "}", ""]


LOG_FLAVORS = {
    "tsc": [
        "src/{m}/{f}.ts({n},{c}): error TS2345: Argument of type '{T}' is not assignable to parameter "
        "of type '{U}'.",
        "src/{m}/{f}.ts({n},{c}): error TS2339: Property '{i}' does not exist on type '{T}'.",
        "src/{m}/{f}.ts({n},{c}): error TS7006: Parameter '{i}' implicitly has an 'any' type.",
        "src/{m}/{f}.ts({n},{c}): error TS2554: Expected {k} arguments, but got {n2}.",
    ],
    "test": [
        " PASS  tests/{m}/{f}.test.ts ({ms} ms)",
        "   ✓ {f}: {i} handles {T} ({ms2} ms)",
        "   ✓ {f} keeps the {i} of a {T} ({ms2} ms)",
        " FAIL  tests/{m}/{f}.test.ts",
        "   ✕ {f} reports a diagnostic for an unterminated {i} ({ms2} ms)",
        "     Expected: {n}\n     Received: {n2}",
        "       at Object.<anonymous> (tests/{m}/{f}.test.ts:{n}:{c})",
    ],
    "build": [
        "[{pct}%] Compiling src/{m}/{f}.ts",
        "  -> dist/{m}/{f}.js ({kb} kB, map {kb2} kB) in {ms} ms",
        "warning: unused variable `{i}` in src/{m}/{f}.ts:{n}",
        "bundling {m} ... {ms} ms",
        "npm WARN deprecated {i}@{k}.{n2}.0: this package is no longer maintained",
    ],
    "trace": [
        "Error: unexpected {i} at {n}:{c}",
        "    at {T}.{f} (src/{m}/{f}.ts:{n}:{c})",
        "    at {T}.{f} (src/{m}/{f}.ts:{n2}:{c})",
        "    at processTicksAndRejections (node:internal/process/task_queues:95:5)",
        "    at async Promise.all (index {k})",
    ],
    "git": [
        "{h} {f}: {msg}",
        " src/{m}/{f}.ts | {n} {plus}{minus}",
        "\tmodified:   src/{m}/{f}.ts",
        "\tnew file:   tests/{m}/{f}.test.ts",
    ],
}


def _fill_log(rng: random.Random, template: str) -> str:
    m = rng.choice(list(MODULES))
    return template.format(
        m=m,
        f=rng.choice(MODULES[m]),
        n=rng.randint(1, 900),
        n2=rng.randint(0, 9),
        c=rng.randint(1, 80),
        k=rng.randint(1, 5),
        T=rng.choice(TYPES),
        U=rng.choice(TYPES),
        i=rng.choice(IDENTS),
        ms=rng.randint(3, 4000),
        ms2=rng.randint(0, 90),
        pct=rng.randint(0, 100),
        kb=rng.randint(1, 300),
        kb2=rng.randint(1, 90),
        h=f"{rng.getrandbits(28):07x}",
        msg=rng.choice(COMMENTS),
        plus="+" * rng.randint(0, 30),
        minus="-" * rng.randint(0, 12),
    )


MARKDOWN = [
    "# {T} — tinyscript language reference",
    "## {T} and {U}",
    "The `{i}` field of a `{T}` records where the construct starts in the source text. {c}",
    "A `{T}` is immutable once created; transformations return a new `{T}` with an updated `{i}`.",
    "- `{f}({i})`: returns the `{T}` at the cursor without consuming it.",
    "- `{i}`: the zero-based UTF-16 offset of the first character.",
    "```ts\nconst {i} = {f}({j});\n```",
    "> **Note** {c}",
    "| option | default | meaning |\n| --- | --- | --- |\n| `{i}` | `{n}` | {c} |",
    "See also [{T}](https://tinyscript.dev/docs/{i}) and the [{U} guide](https://tinyscript.dev/guide/{j}).",
]

CJK_PROSE = [
    "帮我看看为什么词法分析器在文件末尾没有换行时会丢掉最后一个 token。",
    "这个报错是从 parser 的错误恢复里来的，先别改 checker。",
    "把 Position 改成用 UTF-16 偏移量，和 source map 保持一致。",
    "测试全部跑一遍，失败的用例贴出来给我看。",
    "用 Bun 不用 npm，提交前记得跑 lint。",
    "我们之前讨论过 Token 的结构，别再把 trivia 放进 value 里了。",
    "这个函数太长了，拆成三个小函数，每个只做一件事。",
]
EN_PROSE = [
    "Can you look at why the lexer drops the last token when the file has no trailing newline?",
    "Run the full test suite and tell me which tests fail.",
    "Let's move the precedence table into its own module.",
    "The source map is off by one column after a tab character, please fix it.",
    "Add a regression test for unterminated template strings.",
    "Keep the public API of the parser unchanged; only the internals should move.",
    "Why does `tsc` complain about implicit any in the binder now?",
    "Please also update the docs in docs/lexer.md when you are done.",
    "Use the existing `createDiagnostic` helper instead of building the object by hand.",
    "Don't touch the emitter yet, we'll do that in a separate change.",
]
EMOJI = ["🎉", "👍", "🙏", "🚀", "🤔", "✅", "🐛", "🔥", "😅", "👀"]
ASSISTANT_PROSE = [
    "I'll start by reading the scanner to see how it handles the end of input.",
    "The bug is in `scanIdentifier`: it stops one character early when the identifier ends the file.",
    "Let me search for every caller of `createDiagnostic` before changing its signature.",
    "The tests pass now, except the two source-map tests, which were already failing on main.",
    "I've moved the precedence table into `src/parser/precedence.ts` and re-exported it from the index.",
    "Next I'll run the type checker to make sure nothing else depends on the old shape.",
    "This is a pre-existing failure; it also fails on a clean checkout.",
    "The fix is small: clamp the offset before slicing, and add a test for the empty file.",
    "I'll check the git history to see why this was added in the first place.",
    "Both call sites pass a `Position`, so the change is safe.",
]
REASONING_PROSE = [
    "The user wants the last token kept. The loop condition uses `<` against length - 1, "
    "which is suspicious.",
    "If I change the Position type, the binder and the emitter both need updating; "
    "check their imports first.",
    "The failing test expects column 9 but gets 8, so tabs are counted as one column somewhere.",
    "Maybe the recovery skips the semicolon twice. Let me look at `recover` before guessing.",
    "There are three implementations of this helper; only one handles CRLF. Unify them.",
    "Running the whole suite takes a while; run the lexer tests first, then everything.",
    "The grep found 14 call sites; 12 are in tests, so the production change is small.",
    "I should not touch the emitter as the user asked. Keep the change inside the parser.",
]


MARKDOWN_SLOTS: Slots = (
    ("T", TYPES),
    ("U", TYPES),
    ("i", IDENTS),
    ("j", IDENTS),
    ("f", FUNCS),
    ("n", range(0, 65)),
    ("c", COMMENTS),
)


class LinePool(list):
    """A list of lines that knows its average line length (for sizing joined slices)."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__(lines)
        self.avg = max(1, sum(len(x) + 1 for x in lines) // max(1, len(lines)))


class Pools:
    """Line pools shared by every session (built once from a fixed seed)."""

    def __init__(self) -> None:
        rng = random.Random(0x5EED)
        self.code_blocks = ["\n".join(_code_block(rng)) for _ in range(600)]
        self.code_lines = LinePool([_fill(rng, rng.choice(CODE_TEMPLATES)).strip() for _ in range(3000)])
        self.logs = {
            k: LinePool([_fill_log(rng, rng.choice(v)) for _ in range(2500)]) for k, v in LOG_FLAVORS.items()
        }
        self.markdown = LinePool([_fill(rng, rng.choice(MARKDOWN), MARKDOWN_SLOTS) for _ in range(1500)])
        self.paths = sorted(
            f"{PROJECT_ROOT}/{top}/{m}/{f}{suffix}"
            for m, files in MODULES.items()
            for f in files
            for top, suffix in (("src", ".ts"), ("tests", ".test.ts"))
        ) + [
            f"{PROJECT_ROOT}/{p}"
            for p in (
                "package.json",
                "tsconfig.json",
                "README.md",
                "docs/lexer.md",
                "docs/parser.md",
                "scripts/bench.js",
                "bunfig.toml",
            )
        ]


@lru_cache(maxsize=1)
def pools() -> Pools:
    return Pools()


def take(rng: random.Random, pool: LinePool, approx_bytes: int) -> str:
    """About `approx_bytes` of consecutive pool lines (wrapping), starting at a random offset."""
    count = max(1, approx_bytes // pool.avg)
    start = rng.randrange(len(pool))
    if start + count <= len(pool):
        return "\n".join(pool[start : start + count])
    lines = pool[start:]
    while len(lines) < count:
        lines += pool[: count - len(lines)]
    return "\n".join(lines)


def lognormal_bytes(rng: random.Random, median: float, sigma: float, cap: int) -> int:
    return int(min(cap, median * math.exp(rng.gauss(0.0, sigma))))


class FileCorpus:
    """The project's files: content is derived from (seed, path) and cached, so re-reads agree."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._lines: dict[str, list[str]] = {}

    def numbered_lines(self, path: str) -> list[str]:
        lines = self._lines.get(path)
        if lines is None:
            rng = random.Random(f"{self.seed}:{path}")
            size = lognormal_bytes(rng, 9000, 1.0, 200_000)
            blocks = pools().code_blocks
            text = "\n".join(blocks[rng.randrange(len(blocks))] for _ in range(max(1, size // 380)))
            lines = [f"{n:05d}| {line}" for n, line in enumerate(text.split("\n"), 1)]
            self._lines[path] = lines
        return lines

    def read(self, rng: random.Random, path: str, approx_bytes: int) -> tuple[str, int, int, bool]:
        """A read tool output of about `approx_bytes`: (text, offset, limit, truncated)."""
        lines = self.numbered_lines(path)
        limit = max(5, approx_bytes // 45)
        truncated = limit < len(lines)
        offset = rng.randrange(len(lines) - limit) if truncated and rng.random() < 0.4 else 0
        shown = lines[offset : offset + limit]
        tail = (
            f"\n\n(File has more lines. Use 'offset' parameter to read beyond line {offset + len(shown)})"
            if truncated
            else f"\n\n(End of file - total {len(lines)} lines)"
        )
        return "<file>\n" + "\n".join(shown) + tail + "\n</file>", offset, limit, truncated


def prose(rng: random.Random, pool: list[str], k_min: int, k_max: int) -> str:
    return " ".join(rng.choice(pool) for _ in range(rng.randint(k_min, k_max)))


def user_text(rng: random.Random) -> str:
    """A user turn: mostly short instructions, some CJK, some emoji, a few long pasted logs."""
    r = rng.random()
    if r < 0.12:
        flavor = rng.choice(["trace", "test", "tsc"])
        paste = take(rng, pools().logs[flavor], lognormal_bytes(rng, 4000, 0.7, 20_000))
        return f"{rng.choice(EN_PROSE)} Here's the output:\n\n```\n{paste}\n```\n\nAny idea what's going on?"
    if r < 0.32:
        return prose(rng, CJK_PROSE, 1, 3)
    if r < 0.42:
        return f"{rng.choice(EN_PROSE)} {rng.choice(EMOJI)}"
    if r < 0.52:
        return prose(rng, EN_PROSE, 3, 8) + "\n\n" + prose(rng, CJK_PROSE, 1, 2)
    return prose(rng, EN_PROSE, 1, 2)


def assistant_summary(rng: random.Random) -> str:
    bullets = "\n".join(f"- {rng.choice(ASSISTANT_PROSE)}" for _ in range(rng.randint(2, 6)))
    code = rng.choice(pools().code_blocks)
    head = prose(rng, ASSISTANT_PROSE, 1, 3)
    return f"{head}\n\n{bullets}\n\n```ts\n{code}\n```\n\n{rng.choice(ASSISTANT_PROSE)}"
