"""Test and demo aids: deterministic stand-ins for the parts of a host the sidecar does not provide.

Nothing here is used by the sidecar itself, and nothing here calls a network.
"""
