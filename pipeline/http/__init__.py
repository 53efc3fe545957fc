"""The HTTP adapter: the vault API (FastAPI), its guard and auth; routes call ``vaultsync.app``."""
