"""vaultsync: ChatCLI stores → knowledge graph → Obsidian vault in git.

Stages: extract (stores → ``Records``) → graph (``Records`` → ``Graph``, links resolved) →
render (``Graph`` → notes) → plan (diff against the manifest) → write and commit.
"""
