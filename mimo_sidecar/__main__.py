"""`python -m mimo_sidecar`: same as the `mimo-sidecar` command."""

from .cli import main

raise SystemExit(main())
