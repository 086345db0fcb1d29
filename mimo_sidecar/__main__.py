"""`python -m mimo_sidecar`: same as the `mimo-sidecar` command."""

from .cli.main import main

raise SystemExit(main())
