"""The host's data as the sidecar holds it (behavior.md#data-model, #ordering, #ids, #shapes).

- `message`: `Message`, a host's `info` and `parts` with their cached token estimates and costs;
- `shapes`: a message projected to tool uses and results, inline and split shapes (D8), carriers;
- `ordering`: creation-order keys, ID mode and sequence mode (D3);
- `ids`: MiMo v2 message IDs, minted with the monotonicity guard (D10);
- `data_types`, `data_model`: the declared type of every host field the sidecar reads, checked
  without building a model per part;
- `session`: `Session`: messages, listing order, agent slices, the view, tasks, actors, the
  watermark, the writer registry, the revision.
"""
