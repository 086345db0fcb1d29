"""The byte level of the wire, without pygls: Content-Length framing (`framing`), the JSON codec
(`jsonrpc_codec`), the nesting check every frame passes before a parser recurses (`jsondepth`),
and the guard that keeps the real stdin/stdout for frames only (`stdio`)."""
