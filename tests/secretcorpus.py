"""The secret corpus and a ChatCLI state directory with it planted in every field.

``FORMS`` holds every form the issue lists and the redactor's own rule examples, each with the
secret characters that must never appear in anything vaultsync writes or serves.  Secrets are
letters and digits only (a few with ``-``), so no vaultsync transformation (file names, tags,
lowercasing, JSON or YAML quoting) can hide one from a byte search: search case-insensitively.

``plant_state(root)`` writes, for every form, one item of every store with the form in each of
its text fields (names and file names included), laid out as ChatCLI writes its stores
(chatcli-stores.md; the shapes of fixtures/stores/demo), plus drawn links whose notes hold it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from helpers import build_tree, dumps


@dataclass(frozen=True)
class Form:
    """One way a secret is written: the text, and the secret characters inside it."""

    name: str
    text: str
    secrets: tuple[str, ...]


AWS_ID = "AKIA" + "5UQWK3ZJ7TYDN2XP"
AWS_SECRET = "q3Vx8Jb2kPzR7mW1nT5y" + "L0cF9dH4sA6gE2uK8iO3"
AWS_SECRET_2 = "Wm7Tz2Qp9Lx4Rv8Nk3Hb" + "6Yc1Fd5Gs0Ja2Ue7Io4P"
PEM_BODY = "MIIEowIBAAKCAQEAz8Kq3Lw7Rt2Vb5Nm9Xc4Hj6"
PAT_HEAD = "11AQX4RZY0" + "k3bT9mWq2LpZ"
PAT_TAIL = "Hn5Vc8Xr2Kd7Jf3Lq9Wm4Bt6" + "Yp1Gs8Nz5Cv2Rk7Mh3Qx9Dl4Fw6Tj0Pb"
GITHUB_PAT = f"github_pat_{PAT_HEAD}_{PAT_TAIL}"
GHP = "ghp_" + "R8vK2mQ9xL4tW7nZ3pB6" + "yH1cF5dJ0sG2aE8uXk4i"

FORMS: tuple[Form, ...] = (
    Form("pgpassword", "export PGPASSWORD=Pq7Zr2Lm9Xw4 && psql -h db", ("Pq7Zr2Lm9Xw4",)),
    Form("connection string", "Server=db;User Id=sa;Password=Vn4Kt8Rb2Ys6;", ("Vn4Kt8Rb2Ys6",)),
    Form("aws pair", f"{AWS_ID} / {AWS_SECRET}", (AWS_ID, AWS_SECRET)),
    Form("password prose", "password: Hq5Wd3Jf8Mc1 (rotated monthly)", ("Hq5Wd3Jf8Mc1",)),
    Form("aws env", f"AWS_SECRET_ACCESS_KEY={AWS_SECRET_2} aws s3 ls", (AWS_SECRET_2,)),
    Form(
        "pem one line",
        f"-----BEGIN RSA PRIVATE KEY----- {PEM_BODY} -----END RSA PRIVATE KEY-----",
        (PEM_BODY,),
    ),
    Form("github pat", GITHUB_PAT, (PAT_HEAD, PAT_TAIL)),
    Form(
        "api key prose", "api_key=sk-live-4f9a8b7c6d5e4f3a2b1c (rotate!)", ("4f9a8b7c6d5e4f3a2b1c",)
    ),
    Form("github token", f"token {GHP}", (GHP[4:],)),
    Form("url password", "https://deploy:Zx8Cv2Bn6Mq4@git.example.com/repo", ("Zx8Cv2Bn6Mq4",)),
    # The redactor's own rule examples (core/redact.py).
    Form("lone aws id", "the id AKIA7MBV2HQ4NLX9WRTE alone", ("AKIA7MBV2HQ4NLX9WRTE",)),
    Form("quoted password", 'password = "Correct7Horse3Battery"', ("Correct7Horse3Battery",)),
    Form("env password", "PASSWORD=Swordfish9Marlin", ("Swordfish9Marlin",)),
    Form("json password", '{"password": "s3cr3tPa55w0rd", "user": "x"}', ("s3cr3tPa55w0rd",)),
    Form("bearer", "Authorization: Bearer eyRk7Qm2Xv9Lp4Tz8Wn3Hb", ("eyRk7Qm2Xv9Lp4Tz8Wn3Hb",)),
    Form("basic auth", "Authorization: Basic ZGVwbG95OlJ0OXBMbTJr", ("ZGVwbG95OlJ0OXBMbTJr",)),
)
"""Every form of the issue, then the redactor's own rule examples."""

PROFILE_ENTRIES = {
    "api_key": "k8Rk2qW9xZ4mN7pL",
    "PGPASSWORD": "Tj6Hx3Wc9Rb2",
    "OPENAI_API_KEY": "sk-proj-Ub7Rt2Xm9Kq4Lw6Nz3Vc",
}
"""Profile map entries whose value is a secret only when judged with its key."""

EVERY_SECRET: tuple[str, ...] = (
    *(secret for form in FORMS for secret in form.secrets),
    "k8Rk2qW9xZ4mN7pL",
    "Tj6Hx3Wc9Rb2",
    "Ub7Rt2Xm9Kq4Lw6Nz3Vc",
)
"""What a byte search must never find (case-insensitively)."""

T = "2026-10-24T10:00:00Z"


def file_safe(text: str) -> str:
    """The form as it can stand in a file name on disk (``/`` is a path separator)."""
    return text.replace("/", " ")


def plant_state(root: Path) -> Path:
    """A ChatCLI state directory with every form in every text field; returns ``root``."""
    files: dict[str, str] = {
        "memory/memory_index.json": dumps([_fact(i, f.text) for i, f in enumerate(FORMS)]),
        "memory/topics.json": dumps([_topic(i, f.text) for i, f in enumerate(FORMS)]),
        "memory/projects.json": dumps([_project(i, f.text) for i, f in enumerate(FORMS)]),
        "memory/episodes.json": dumps([_episode(i, f.text) for i, f in enumerate(FORMS)]),
        "memory/user_profile.json": dumps(_profile()),
        "board.json": dumps(_board()),
        "memory/weekly/2026-W43.md": _journal_text(),
        "memory/monthly/2026-10.md": _journal_text(),
    }
    for i, form in enumerate(FORMS):
        files[f"memory/202610/202610{i + 1:02d}.md"] = f"## 10:00\n\n- {form.text}\n"
        session = {"version": 2, "title": form.text, "chat_history": []}
        files[f"sessions/s{i} {file_safe(form.text)}.json"] = dumps(session)
        files[f"skills/k{i} {file_safe(form.text)}/SKILL.md"] = _skill(i, form.text)
        files[f"contexts/{_context_id(i)}.json"] = dumps(_context(i, form.text))
    build_tree(root, files)
    _draw_links(root)
    return root


def _fact(i: int, text: str) -> dict[str, object]:
    return {
        "id": f"{i + 1:024x}",
        "content": f"Fact {i}: {text}",
        "category": f"cat{i} {text}",
        "tags": [f"tag{i} {text}"],
        "created_at": T,
        "last_accessed": T,
        "access_count": 1,
        "score": 1.0,
        "source": text,
        "source_project": f"/home/ana/src/p{i} {text}",
        "confidence": 0.9,
        "provenance": text,
    }


def _topic(i: int, text: str) -> dict[str, object]:
    return {
        "name": f"topic{i} {text}",
        "mentions": 2,
        "summary": text,
        "first_seen": T,
        "last_seen": T,
        "related_fact_ids": [f"{i + 1:024x}"],
    }


def _project(i: int, text: str) -> dict[str, object]:
    return {
        "name": f"proj{i} {text}",
        "path": f"/home/ana/src/p{i} {text}",
        "description": text,
        "status": "active",
        "technologies": [text],
        "key_files": [text],
        "last_active": T,
        "priority": 1,
        "metadata": {"note": text, text: "x"},
    }


def _episode(i: int, text: str) -> dict[str, object]:
    return {
        "id": f"ep_{i + 1:024x}",
        "date": f"2026-10-{i + 1:02d}T11:00:00Z",
        "project": f"/home/ana/src/p{i} {text}",
        "summary": text,
        "outcome": text,
        "refs": [text, "https://ana:Rf4Lz8Mq2Tw6@ci.example.com/x"],
        "source": text,
        "created_at": T,
    }


def _profile() -> dict[str, object]:
    texts = [form.text for form in FORMS]
    return {
        "name": "Ana",
        "role": texts[0],
        "communication_style": texts[3],
        "directives": texts,
        "skills": texts,
        "goals": texts,
        "milestones": [{"date": "2026-09-01", "text": text} for text in texts],
        "stances": [{"position": text, "reason": text, "updated_at": T} for text in texts],
        "environment": dict(PROFILE_ENTRIES),
        "api_key": PROFILE_ENTRIES["api_key"],
        "top_commands": dict.fromkeys(texts, 3),
        "preferences": {f"p{i}": text for i, text in enumerate(texts)},
        "last_updated": T,
    }


def _board() -> dict[str, object]:
    cards = []
    for i, form in enumerate(FORMS):
        cards.append(
            {
                "id": f"card-{i + 1}",
                "title": form.text,
                "description": form.text,
                "column": "doing",
                "assignee": form.text,
                "notes": [{"author": form.text, "text": form.text, "at": T}],
                "history": [{"from": "backlog", "to": "doing", "by": form.text, "at": T}],
                "created_at": T,
                "updated_at": T,
            }
        )
    return {"schema_version": 1, "seq": len(cards), "cards": cards}


def _journal_text() -> str:
    return "".join(f"- {form.text}\n" for form in FORMS)


def _skill(i: int, text: str) -> str:
    fields = {
        "name": f"k{i} {file_safe(text)}",
        "description": text,
        "triggers": text.replace(",", " "),
        "tags": [text],
        "category": text,
    }
    front = "".join(f"{key}: {json.dumps(value)}\n" for key, value in fields.items())
    return f"---\n{front}---\n# {text}\n\n{text}\n"


def _context_id(i: int) -> str:
    return f"3f0e8f1c-2b6a-4c1e-9d7a-{i:012x}"


def _context(i: int, text: str) -> dict[str, object]:
    documents = [
        {
            "Path": f"docs/{text}.md",
            "Content": f"# {text}\n\n{text}\n",
            "Size": 1,
            "Type": "Markdown",
        },
        {
            "Path": f"notes/n{i}.md",
            "Content": f"# Note {i}\n\n{text}\n",
            "Size": 1,
            "Type": "Markdown",
        },
    ]
    return {
        "id": _context_id(i),
        "name": f"ctx{i} {text}",
        "description": text,
        "files": documents,
        "mode": "knowledge" if i % 2 else "chunked",
        "created_at": T,
        "updated_at": T,
        "tags": [text],
        "metadata": {"kb.repo_url": f"https://u:Yd3Kp8Wz5Rm2@git.example.com/r{i}", "note": text},
    }


def _draw_links(state: Path) -> None:
    """Drawn links, through vaultsync's own link store, each with a form in its note."""
    from vaultsync.drawn.store import LinkStore

    store = LinkStore(state)
    moment = datetime(2026, 10, 24, 12, 0, tzinfo=UTC)
    for i, form in enumerate(FORMS):
        source = f"fact:{i + 1:024x}"
        target = f"card:card-{i + 1}"
        store.add(source, target, "related", form.text, now=moment)


EXTRA_SECRETS = ("Rf4Lz8Mq2Tw6", "Yd3Kp8Wz5Rm2")
"""The passwords of the episode refs and the context repo URLs."""

ALL_SECRETS = (*EVERY_SECRET, *EXTRA_SECRETS)
