"""What one piece of content costs (behavior.md#est, #js-parity, #d15).

- `jstext`: UTF-16 lengths and slices, JavaScript whitespace and trim, `est` (characters / 4);
- `jsjson`: `JSON.stringify`'s text and its UTF-16 length, fast, for every part's estimate;
- `media_size`: an image's pixel size and a PDF's page count from the payload's first bytes;
- `provider_count`: what a stored part costs each provider family (text, media by pixels or pages,
  replay tokens, replayed reasoning).

The lowest room of the core: it imports only the shared vocabulary.
"""
