"""mimo-sidecar: the context-rebuild subsystem of MiMo Code as a stdio JSON-RPC sidecar."""

__version__ = "0.1.0"
