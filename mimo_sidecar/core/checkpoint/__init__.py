"""The checkpoint file, `checkpoint.md` (behavior.md#checkpoint-template, #writer-instructions,
#checkpoint-commit).

- `template`: its shape (title, `Topic:` line, ten numbered sections) and the topic the index shows;
- `content`: what `checkpoint/commit` accepts as the file's content, and what it warns about;
- `writer_brief`: the instructions the checkpoint writer's model is given.
"""
