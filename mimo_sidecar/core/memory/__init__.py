"""The memory root: the only files the sidecar reads or writes (behavior.md#memory-layout,
#confinement, #file-reading, #budgeted-reads).

- `confined`: a path walked beneath the root one component at a time from a handle of the root;
  links followed only while they stay beneath it;
- `files`: `MemoryRoot`: confined reads and listings, decoding, the layout of a session's files;
- `writes`: the one way to write under the root: confined and atomic;
- `budgeted_read`: proportional and section-aware reads of a file under a budget.
"""
