"""One request to the model (behavior.md#request, #request-size, #usage-fallback, #request-reuse).

- `assembly`: view, collapse, normalised turns, the per-turn reminder, the output format;
- `build_memo`: the conversion of a view up to its newest cut, kept so that the next request
  converts only what is new (byte for byte what a whole conversion makes);
- `size`: a request's estimated size as its provider counts it, without building it;
- `running_size`: that estimate for a view kept as a running sum, updated by each change;
- `estimate_accuracy`: each step's estimated request against the usage it recorded.
"""
