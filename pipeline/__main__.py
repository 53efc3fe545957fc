"""``python -m pipeline`` runs the CLI."""

from vaultsync.cli.main import main

main()
