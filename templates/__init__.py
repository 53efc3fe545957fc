"""The built-in Jinja templates, one per kind of note (package data)."""
