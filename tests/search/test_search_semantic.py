"""Semantic and hybrid search: chunks, vectors by content hash, fusion, modes, the background build.

Every test embeds with the tiny real model of ``tiny_model`` (conftest sets
``VAULTSYNC_EMBED_MODEL``); one test loads the packaged model when the extra is installed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import click
import httpx
import pytest
from click.testing import CliRunner, Result
from vaults import touch_later, write_vault
from vaultsync.core.errors import SemanticUnavailable
from vaultsync.search.embed import ENV_MODEL, choose_mode, default_model_dir, load_embedder
from vaultsync.search.embedjob import (
    ENV_BACKGROUND,
    JobFailure,
    job_failure,
    job_log,
    record_started,
)
from vaultsync.search.fusion import fuse
from vaultsync.search.index import index_path, update_index
from vaultsync.search.model import SearchQuery, SearchResult
from vaultsync.search.reader import IndexReader
from vaultsync.search.vectors import (
    CHUNK_CHARS,
    chunk_note,
    coverage,
    embed_pending,
    start_background,
)

pytest.importorskip("numpy")
pytest.importorskip("tokenizers")

NOTES = {
    "ops/rotation.md": "# Rotation\n\nWe renew the x509 cert of each gateway every month.\n",
    "billing/ledger.md": "# Ledger\n\nThe invoices table and its payments live here.\n",
    "people/ana.md": "# Ana\n\nAna is on vacation in October.\n",
    "db/tuning.md": "# Tuning\n\nPostgres autovacuum for a busy table.\n",
}


def indexed(root: Path, notes: dict[str, str] = NOTES) -> Path:
    vault = write_vault(root / "vault", notes)
    update_index(vault)
    return vault


def ask(vault: Path, text: str, mode: str, **filters: object) -> SearchResult:
    chosen, embedder = choose_mode(mode)
    reader = IndexReader(vault)
    try:
        query = SearchQuery(text=text, mode=chosen, **filters)  # type: ignore[arg-type]
        return reader.search(query, embedder)
    finally:
        reader.close()


def paths(result: SearchResult) -> list[str]:
    return [hit.document.path for hit in result.hits]


def vector_rows(vault: Path) -> int:
    with contextlib.closing(sqlite3.connect(index_path(vault))) as conn:
        return int(conn.execute("SELECT count(*) FROM vectors").fetchone()[0])


class TestChunks:
    def test_short_note_is_one_chunk_with_its_title(self) -> None:
        """A short note is one chunk: its title, then its body."""
        (chunk,) = chunk_note("Rotation", "renew the cert")
        assert (chunk.seq, chunk.start, chunk.text) == (0, 0, "Rotation\nrenew the cert")

    def test_long_document_is_found_by_its_parts(self) -> None:
        """A long document becomes several chunks, each starting where its text is in the body."""
        body = "\n\n".join(f"paragraph {i} " + "word " * 60 for i in range(40))
        chunks = chunk_note("Long", body)
        assert len(chunks) > 5
        for chunk in chunks:
            assert body[chunk.start :].startswith(chunk.text.removeprefix("Long\n")[:40])
            assert len(chunk.text) <= CHUNK_CHARS + len("Long\n") + 2

    def test_one_huge_paragraph_is_cut_at_spaces(self) -> None:
        """A paragraph longer than a chunk is cut at a space, never inside a word."""
        body = " ".join(["abcdefgh"] * 500)
        chunks = chunk_note("T", body)
        assert len(chunks) > 1
        assert all(set(c.text.removeprefix("T\n").split()) == {"abcdefgh"} for c in chunks)


class TestFusion:
    def test_note_in_both_rankings_beats_notes_in_one(self) -> None:
        """A note both rankings hold outranks the first of either ranking alone."""
        fused = fuse([[1, 2], [3, 2]], (1.0, 1.0), {1: "a", 2: "b", 3: "c"}, limit=3)
        assert [nid for nid, _ in fused] == [2, 1, 3]

    def test_duplicate_keeps_its_best_rank(self) -> None:
        """A note listed twice in one ranking counts once, at its best (first) rank."""
        once = fuse([[7, 8]], (1.0,), {}, limit=2)
        twice = fuse([[7, 8, 7, 7]], (1.0,), {}, limit=2)
        assert once == twice

    def test_ties_go_by_path(self) -> None:
        """Equal fused scores come in path order, whatever the rankings' order."""
        fused = fuse([[5], [4]], (1.0, 1.0), {4: "z.md", 5: "a.md"}, limit=2)
        assert [nid for nid, _ in fused] == [5, 4]

    def test_first_notes_stay_first(self) -> None:
        """A note named by the query comes first even when fusion scores another higher."""
        fused = fuse([[1, 2], [2]], (1.0, 1.0), {}, limit=2, first={1})
        assert [nid for nid, _ in fused] == [1, 2]


class TestEmbedder:
    def test_synonyms_are_near(self) -> None:
        """Words of one meaning give near vectors, words of another do not."""
        vectors = load_embedder().embed(["tls certificate", "x509 cert", "invoice payments"])
        assert float(vectors[0] @ vectors[1]) > 0.9
        assert float(vectors[0] @ vectors[2]) < 0.1

    def test_text_without_known_words_is_zero(self) -> None:
        """A text of unknown words only is the zero vector, not a NaN."""
        vector = load_embedder().embed(["zzz qqq"])[0]
        assert not vector.any()

    def test_missing_model_says_how_to_enable(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A model folder without the model's files is a configuration error naming the extra."""
        monkeypatch.setenv(ENV_MODEL, str(tmp_path / "nothing-here"))
        with pytest.raises(SemanticUnavailable) as caught:
            load_embedder()
        assert caught.value.exit_code == 3
        assert "vaultsync[semantic]" in (caught.value.hint or "")

    @pytest.mark.skipif(default_model_dir() is None, reason="the semantic extra is not installed")
    def test_packaged_model_loads_offline(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The model the extra installs loads from its package and embeds, nothing downloaded."""
        monkeypatch.delenv(ENV_MODEL)
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
        vectors = load_embedder().embed(["certificate rotation", "renew the TLS cert"])
        assert vectors.shape[0] == 2
        assert abs(float(vectors[0] @ vectors[0]) - 1.0) < 1e-5


class TestVectors:
    def test_embeds_every_note_once(self, tmp_path: Path) -> None:
        """The first run embeds every note; a second finds nothing left to embed."""
        vault = indexed(tmp_path)
        first = embed_pending(vault, load_embedder())
        second = embed_pending(vault, load_embedder())
        assert (first.notes, first.remaining) == (4, 0)
        assert (second.notes, second.chunks) == (0, 0)

    def test_changed_note_alone_is_embedded_again(self, tmp_path: Path) -> None:
        """After one note changes, only that note is embedded again; the old vectors go."""
        vault = indexed(tmp_path)
        embed_pending(vault, load_embedder())
        note = vault / "people/ana.md"
        note.write_text("# Ana\n\nAna is on holiday.\n")
        touch_later(note)
        update_index(vault)
        report = embed_pending(vault, load_embedder())
        assert (report.notes, report.chunks) == (1, 1)
        assert vector_rows(vault) == 4

    def test_identical_contents_share_vectors(self, tmp_path: Path) -> None:
        """Two notes with the same bytes are embedded once and both found."""
        text = "# Same\n\nThe tls cert.\n"
        vault = indexed(tmp_path, {"a.md": text, "b.md": text, "c.md": "# C\n\nmoney\n"})
        assert embed_pending(vault, load_embedder()).notes == 2
        assert paths(ask(vault, "certificate", "semantic"))[:2] == ["a.md", "b.md"]

    def test_rebuilt_text_index_starts_vectors_anew(self, tmp_path: Path) -> None:
        """A rebuilt index holds no vectors until they are embedded again."""
        vault = indexed(tmp_path)
        embed_pending(vault, load_embedder())
        update_index(vault, rebuild=True)
        with contextlib.closing(sqlite3.connect(index_path(vault))) as conn:
            assert coverage(conn, load_embedder().name) == (0, 4)


class TestModes:
    def test_semantic_finds_note_by_synonym(self, tmp_path: Path) -> None:
        """Semantic mode finds a note by words it does not contain."""
        vault = indexed(tmp_path)
        embed_pending(vault, load_embedder())
        assert paths(ask(vault, "certificates", "semantic"))[0] == "ops/rotation.md"

    def test_text_misses_the_synonym(self, tmp_path: Path) -> None:
        """Text mode finds nothing for a word no note holds (what hybrid adds to)."""
        vault = indexed(tmp_path)
        assert paths(ask(vault, "holiday", "text")) == []

    def test_hybrid_finds_both_kinds(self, tmp_path: Path) -> None:
        """Hybrid finds the note with the words first, and notes by meaning after it."""
        notes = {**NOTES, "ops/holiday-plan.md": "# Plan\n\nThe holiday plan of the team.\n"}
        vault = indexed(tmp_path, notes)
        embed_pending(vault, load_embedder())
        found = paths(ask(vault, "holiday", "hybrid"))
        assert found[:2] == ["ops/holiday-plan.md", "people/ana.md"]

    def test_hybrid_finds_a_note_with_some_of_the_words(self, tmp_path: Path) -> None:
        """Hybrid ranks a note holding only some of a paraphrase's words (text mode finds none)."""
        vault = indexed(tmp_path)
        embed_pending(vault, load_embedder())
        assert paths(ask(vault, "monthly gateway secrets swap", "text")) == []
        assert paths(ask(vault, "monthly gateway secrets swap", "hybrid"))[0] == "ops/rotation.md"

    def test_hybrid_finds_other_word_forms(self, tmp_path: Path) -> None:
        """Hybrid's any-word ranking matches a word's other forms (``renewing`` → ``renew``)."""
        vault = indexed(tmp_path)
        assert paths(ask(vault, "renewing", "hybrid")) == ["ops/rotation.md"]

    def test_stems_follow_updates(self, tmp_path: Path) -> None:
        """A changed note is found by its new words' stems and no longer by its old ones."""
        vault = indexed(tmp_path)
        note = vault / "ops/rotation.md"
        note.write_text("# Rotation\n\nWe replace the gateways.\n")
        touch_later(note)
        update_index(vault)
        assert paths(ask(vault, "renewing", "hybrid")) == []
        assert paths(ask(vault, "replacing", "hybrid")) == ["ops/rotation.md"]

    def test_hybrid_keeps_exact_title_first(self, tmp_path: Path) -> None:
        """A note whose title is the query stays first in hybrid mode."""
        notes = {**NOTES, "Tuning.md": "# Tuning\n\nsee [[db/tuning]]\n"}
        vault = indexed(tmp_path, notes)
        embed_pending(vault, load_embedder())
        assert paths(ask(vault, "Tuning", "hybrid"))[0] in {"Tuning.md", "db/tuning.md"}

    def test_filters_apply_to_semantic_hits(self, tmp_path: Path) -> None:
        """A folder filter keeps semantic hits outside the folder out."""
        vault = indexed(tmp_path)
        embed_pending(vault, load_embedder())
        found = paths(ask(vault, "certificates invoices", "semantic", folder="billing"))
        assert found == ["billing/ledger.md"]

    def test_semantic_snippet_is_from_the_best_chunk(self, tmp_path: Path) -> None:
        """A semantic hit's snippet comes from the chunk that matched, not the note's start."""
        body = "# Big\n\n" + "\n\n".join(["filler " * 150] * 3) + "\n\nThe x509 cert expires.\n"
        vault = indexed(tmp_path, {"big.md": body, "other.md": "# O\n\nmoney\n"})
        embed_pending(vault, load_embedder())
        (hit, *_) = ask(vault, "certificates", "semantic").hits
        assert "x509" in hit.snippet

    def test_query_of_unknown_words_finds_nothing(self, tmp_path: Path) -> None:
        """A query the model knows no word of finds no note by meaning."""
        vault = indexed(tmp_path)
        embed_pending(vault, load_embedder())
        assert paths(ask(vault, "zzz qqq", "semantic")) == []

    def test_incomplete_index_says_so(self, tmp_path: Path) -> None:
        """Before the vectors are built, hybrid answers with text hits and a notice."""
        vault = indexed(tmp_path)
        result = ask(vault, "vacation", "hybrid")
        assert paths(result) == ["people/ana.md"]
        assert "0 of 4 notes embedded" in result.notice


def wait_embedded(vault: Path) -> int:
    """Wait (at most 2 minutes; no duration is asserted) until no note lacks vectors or the job
    has failed."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with contextlib.closing(sqlite3.connect(index_path(vault))) as conn:
            done, total = coverage(conn, load_embedder().name)
        if done == total or job_failure(index_path(vault)) is not None:
            break
        time.sleep(0.2)
    return total - done


@pytest.fixture
def background(monkeypatch: pytest.MonkeyPatch) -> None:
    """This test asks for the background job (conftest keeps it from starting)."""
    monkeypatch.setenv(ENV_BACKGROUND, "1")


def broken_model(root: Path) -> Path:
    """A copy of the tiny model whose weights cannot be read: the job fails while loading it."""
    folder = root / "broken-model"
    shutil.copytree(Path(os.environ[ENV_MODEL]), folder)
    (folder / "model.safetensors").write_bytes(b"\x01")
    return folder


@pytest.mark.usefixtures("background")
class TestBackground:
    def test_starts_when_vectors_are_missing(self, tmp_path: Path) -> None:
        """With notes lacking vectors, a background process is started and embeds them all."""
        vault = indexed(tmp_path)
        assert start_background(vault)
        assert wait_embedded(vault) == 0

    def test_nothing_starts_when_every_note_has_vectors(self, tmp_path: Path) -> None:
        """When every note has its vectors, no process is started (a sync pays nothing)."""
        vault = indexed(tmp_path)
        embed_pending(vault, load_embedder())
        assert not start_background(vault)

    def test_told_a_syncs_paths_it_asks_only_about_them(self, tmp_path: Path) -> None:
        """Given the notes a sync wrote, it starts only when one of those lacks vectors."""
        vault = indexed(tmp_path)
        embed_pending(vault, load_embedder())
        (vault / "people/ana.md").write_text("# Ana\n\nAna is back in November.\n")
        update_index(vault)
        assert not start_background(vault, paths={"ops/rotation.md"})
        assert start_background(vault, paths={"ops/rotation.md", "people/ana.md"})
        assert wait_embedded(vault) == 0

    def test_nothing_starts_without_an_index(self, tmp_path: Path) -> None:
        """A vault without a search index starts no embedder."""
        vault = write_vault(tmp_path / "vault", NOTES)
        assert not start_background(vault)

    def test_a_vaultsync_folder_where_it_starts_cannot_shadow_the_package(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Started in a clone of the repository (a vaultsync/ folder here), the job still works."""
        shadow = tmp_path / "clone" / "vaultsync"
        shadow.mkdir(parents=True)
        (shadow / "__init__.py").write_text("raise ImportError('the clone, not the package')\n")
        monkeypatch.chdir(shadow.parent)
        vault = indexed(tmp_path)
        assert start_background(vault)
        assert wait_embedded(vault) == 0
        assert job_failure(index_path(vault)) is None

    def test_a_failed_job_is_recorded_and_searches_say_so(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A job that fails leaves its exit status and last error line, and a search shows them."""
        vault = indexed(tmp_path)
        monkeypatch.setenv(ENV_MODEL, str(broken_model(tmp_path)))
        assert start_background(vault)
        failure = wait_failed(index_path(vault))
        assert failure is not None
        assert failure.exit_code == 3
        assert "not a usable embedding model" in failure.error
        monkeypatch.undo()
        result = ask(vault, "vacation", "hybrid")
        assert "the background job failed (exit 3: " in result.notice
        assert "being built" not in result.notice

    def test_a_job_that_dies_before_its_code_runs_leaves_its_last_line(
        self, tmp_path: Path
    ) -> None:
        """A process that died without a record is a failure, told by its stderr's last line."""
        vault = indexed(tmp_path)
        db = index_path(vault)
        job_log(db).write_text("Traceback (most recent call last):\nImportError: boom\n")
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)  # fmt: skip
        record_started(db, int(dead.stdout))
        failure = job_failure(db)
        assert failure is not None
        assert failure.describe() == "unknown exit: ImportError: boom"

    def test_not_started_when_opted_out(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """VAULTSYNC_EMBED_BACKGROUND=0 keeps the job from starting, as an explicit value does."""
        vault = indexed(tmp_path)
        assert not start_background(vault, allowed=False)
        monkeypatch.setenv(ENV_BACKGROUND, "0")
        assert not start_background(vault)
        assert vector_rows(vault) == 0


def wait_failed(db: Path) -> JobFailure | None:
    """Wait (at most 2 minutes; no duration is asserted) until the job has recorded a failure."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        failure = job_failure(db)
        if failure is not None and failure.exit_code is not None:
            return failure
        time.sleep(0.2)
    return job_failure(db)


@pytest.fixture
def vaultsync() -> click.Group:
    from vaultsync.cli.main import cli
    from vaultsync.cli.search import search

    if "search" not in cli.commands:
        cli.add_command(search)
    return cli


def first_search(tmp_path: Path, vaultsync: click.Group) -> tuple[Path, Result]:
    """A vault of ``NOTES`` searched once, before any vector exists: the vault, the run."""
    vault = write_vault(tmp_path / "vault", NOTES)
    result = CliRunner().invoke(vaultsync, ["search", "vacation", "--vault", str(vault)])
    assert result.exit_code == 0
    return vault, result


class TestCommand:
    def test_with_the_job_turned_off_the_notice_says_so(
        self, tmp_path: Path, vaultsync: click.Group
    ) -> None:
        """VAULTSYNC_EMBED_BACKGROUND=0: the notice names the variable, never a job that is not."""
        _, result = first_search(tmp_path, vaultsync)
        assert "VAULTSYNC_EMBED_BACKGROUND=0 keeps the rest from being built" in result.stderr
        assert "in the background" not in result.stderr

    @pytest.mark.usefixtures("background")
    def test_first_search_answers_then_builds_in_background(
        self, tmp_path: Path, vaultsync: click.Group
    ) -> None:
        """The first search prints text hits and the notice; a background process embeds."""
        vault, result = first_search(tmp_path, vaultsync)
        assert "people/ana.md" in result.stdout
        assert "being built in the background" in result.stderr
        assert wait_embedded(vault) == 0
        later = CliRunner().invoke(vaultsync, ["search", "holiday", "--vault", str(vault)])
        assert "people/ana.md" in later.stdout
        assert "being built" not in later.stderr

    def test_without_the_extra_semantic_exits_3(self, tmp_path: Path) -> None:
        """Without numpy, --mode semantic exits 3 with one line saying how to enable it."""
        vault = indexed(tmp_path)
        blocker = tmp_path / "blocker"
        (blocker / "numpy").mkdir(parents=True)
        (blocker / "numpy" / "__init__.py").write_text("raise ImportError('no numpy here')\n")
        env = {**os.environ, "PYTHONPATH": str(blocker)}
        command = [sys.executable, "-m", "vaultsync", "search", "cert", "--mode", "semantic",
                   "--vault", str(vault)]  # fmt: skip
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 3
        assert "pip install 'vaultsync[semantic]'" in done.stderr
        assert "Traceback" not in done.stderr

    def test_without_the_extra_default_is_text(self, tmp_path: Path) -> None:
        """Without the extra, a plain search runs in text mode and says nothing about it."""
        vault = indexed(tmp_path)
        blocker = tmp_path / "blocker"
        (blocker / "tokenizers").mkdir(parents=True)
        (blocker / "tokenizers" / "__init__.py").write_text("raise ImportError\n")
        env = {**os.environ, "PYTHONPATH": str(blocker)}
        command = [sys.executable, "-m", "vaultsync", "search", "vacation", "--json",
                   "--vault", str(vault)]  # fmt: skip
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        assert '"mode": "text"' in done.stdout


class TestApi:
    @pytest.fixture
    def api(self, tmp_path: Path) -> Iterator[httpx.Client]:
        """The API over a small vault whose vectors are built, with its token."""
        from helpers import serving
        from vaultsync.http.auth import vault_token
        from vaultsync.http.server import make_app

        vault = indexed(tmp_path)
        embed_pending(vault, load_embedder())
        app = make_app(vault, tmp_path / "state", host="127.0.0.1", refresh=0, environ={})
        bearer = {"authorization": f"Bearer {vault_token(vault)}"}
        with serving(app) as url, httpx.Client(base_url=url, timeout=30, headers=bearer) as client:
            yield client

    def test_semantic_mode_finds_by_meaning(self, api: httpx.Client) -> None:
        """``mode: semantic`` finds a note by a word it does not hold."""
        body = {"query": "holiday", "mode": "semantic", "max_results": 1}
        (item,) = api.post("/v1/vault/search", json=body).json()[:1]
        assert item["document"]["path"] == "people/ana.md"

    def test_text_mode_does_not(self, api: httpx.Client) -> None:
        """``mode: text`` is BM25 only: no note holds the word, so nothing is found."""
        assert api.post("/v1/vault/search", json={"query": "holiday", "mode": "text"}).json() == []

    def test_unknown_mode_is_422(self, api: httpx.Client) -> None:
        """A mode other than text, semantic or hybrid is refused as invalid input."""
        response = api.post("/v1/vault/search", json={"query": "x", "mode": "fuzzy"})
        assert response.status_code == 422
