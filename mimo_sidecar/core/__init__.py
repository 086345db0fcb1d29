"""The pure core: every rule of docs/behavior.md, with no I/O beyond confined reads and writes under
the memory root, and no pygls, asyncio or pydantic (tests/unit/test_layering.py).

Its rooms, lowest first (a package imports only the ones above it in this list, and the shared
vocabulary at the top level):

- `estimate/`: what one piece of content costs: UTF-16 text and `JSON.stringify` parity, `est`, media
  sizes, each provider's cost of a part;
- `session/`: the host's data as the sidecar holds it: messages with their cached estimates, tool
  call shapes, creation order, IDs, the declared host types, the `Session`;
- `memory/`: the memory root: confined walks, reads, atomic writes, budgeted reads;
- `checkpoint/`: `checkpoint.md`: its template, what a commit accepts, the writer's instructions;
- `formats/`: requests in each provider's own format (normalised turns, one renderer per format);
- `rebuild/`: the rebuild itself: watermark, trigger, live step, tail digest, collapse, the
  sections and their render, the boundary message, microcompaction;
- `request/`: one request: its assembly from a view, its converted prefix kept between requests,
  its estimated size (and the running sum of it), the estimate against usage;
- `model_tools/`: the sidecar's own model tools (history, memory, task).

At the top level: `engine` (compute, insert, build over one `Session`), `outcomes` (what the engine
returns), and the vocabulary every room shares: `words` (closed sets of words), `texts` (every
text), `errors`, `config`, `tool_pointers` (which of the model's tools a text names).
"""
