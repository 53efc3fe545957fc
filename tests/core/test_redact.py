"""Secret masking: kingfisher plus our own patterns, precise on prose and ids."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import corpus
from hypothesis import given, settings
from hypothesis import strategies as st
from secretcorpus import FORMS, Form
from vaultsync.core import redact as redact_module
from vaultsync.core.redact import MASKED, find_secrets, mask, redact

GITHUB_PAT = "ghp_" + "1234567890abcdefghij" + "ABCDEFGHIJ123456"
AWS_ID = "AKIA" + "2OGYBAH6STMMNXNN"
AWS_SECRET = "q3Vx8Jb2kPzR7mW1nT5y" + "L0cF9dH4sA6gE2uK8iO3"


class TestOwnPatterns:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            (f"the id {AWS_ID} alone", f"the id {mask(AWS_ID)} alone"),
            (f"ASIA{'A' * 16}", mask(f"ASIA{'A' * 16}")),
            ("https://bob:hunter2@example.com/x", f"https://bob:{mask('hunter2')}@example.com/x"),
            (
                "postgres://admin:Xk9pQ2mZ7vL4@db:5432/app",
                f"postgres://admin:{mask('Xk9pQ2mZ7vL4')}@db:5432/app",
            ),
            ('password = "correct horse battery"', f'password = "{mask("correct horse battery")}"'),
            ("PASSWORD=swordfish", f"PASSWORD={mask('swordfish')}"),
            ("export DB_PASSWORD=swordfish", f"export DB_PASSWORD={mask('swordfish')}"),
            (
                '{"password": "s3cr3t!", "user": "x"}',
                f'{{"password": "{mask("s3cr3t!")}", "user": "x"}}',
            ),
            ("password: hunter2", f"password: {mask('hunter2')}"),
            ("  db_password: swordfish", f"  db_password: {mask('swordfish')}"),
            ("api_key = 'sk-abc123def456'", f"api_key = '{mask('sk-abc123def456')}'"),
            ("apiKey: `abc123xyz`", f"apiKey: `{mask('abc123xyz')}`"),
            (
                "SECRET_KEY = 'django-insecure-abc123'",
                f"SECRET_KEY = '{mask('django-insecure-abc123')}'",
            ),
            (
                f"aws_secret_access_key = {AWS_SECRET}\n",
                f"aws_secret_access_key = {mask(AWS_SECRET)}\n",
            ),
            (
                "Authorization: Bearer abcdefABCDEF0123456789xyz",
                f"Authorization: Bearer {mask('abcdefABCDEF0123456789xyz')}",
            ),
        ],
    )
    def test_masks(self, text: str, expected: str) -> None:
        """Only the secret is replaced; names, quotes and URLs stay readable."""
        assert redact(text) == expected

    @pytest.mark.parametrize(
        "text",
        [
            "Password: choose a strong one and keep it safe",
            "password = input()",
            "password = getpass.getpass()",
            "token: ${{ secrets.GITHUB_TOKEN }}",
            "password: <your password>",
            "password: changeme",
            "token: null",
            "tokenizer = 'bert'",
            "max_tokens = 4096",
            "secrets: write",
            "key = 3",
            "password = user_password",
            "Make a note of the token: you will need it",
            "https://example.com:8080/path",
            "postgres://user:password@localhost/db",
            'curl -H "Authorization: Bearer <GITHUB_TOKEN>"',
            "fact:ab37259d1cbc0a08a73db347 and ep_9f2e0c7a1b3d5e6f708192a3",
            "source: 5e0c1b9a7d3f2e4c8a6b0d1f",
            "[[fact:ab37259d1cbc0a08a73db347]] https://x.io/5e0c1b9a7d3f2e4c8a6b0d1f",
        ],
    )
    def test_leaves_alone(self, text: str) -> None:
        """Prose, placeholders, code and our hex ids are never masked."""
        assert redact(text) == text

    def test_private_key_block(self) -> None:
        """The key body goes; the armour lines stay."""
        text = (
            "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabcd==\n"
            "-----END RSA PRIVATE KEY-----\nafter\n"
        )
        body = mask("MIIEowIBAAKCAQEA\nabcd==")
        assert redact(text) == (
            f"before\n-----BEGIN RSA PRIVATE KEY-----\n{body}\n"
            "-----END RSA PRIVATE KEY-----\nafter\n"
        )

    def test_cut_private_key_block(self) -> None:
        """A block without its END line is masked up to the next blank line."""
        text = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\nAAAA\n\nafter"
        body = mask("b3BlbnNzaC1rZXk\nAAAA")
        assert redact(text) == f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n\nafter"


class TestKingfisher:
    def test_provider_token(self) -> None:
        """A GitHub token is found by kingfisher, with offsets mapped from bytes."""
        text = f"Configuração: token {GITHUB_PAT} — done"
        assert redact(text) == f"Configuração: token {mask(GITHUB_PAT)} — done"

    def test_byte_offsets_after_emoji(self) -> None:
        """Characters of 4 UTF-8 bytes before the secret do not shift the mask."""
        text = f"😀😀 {GITHUB_PAT} ok"
        assert redact(text) == f"😀😀 {mask(GITHUB_PAT)} ok"

    def test_aws_pair(self) -> None:
        """The access key id and the secret are both masked."""
        text = f"aws_access_key_id = {AWS_ID}\naws_secret_access_key = {AWS_SECRET}\n"
        assert redact(text) == (
            f"aws_access_key_id = {mask(AWS_ID)}\naws_secret_access_key = {mask(AWS_SECRET)}\n"
        )

    def test_rules_load_only_when_needed(self) -> None:
        """Text without a candidate token (prose, our ids, paths) never loads the rules."""
        code = (
            "import sys\n"
            "from vaultsync.core import redact\n"
            "assert redact.redact('plain prose, password: choose one well') is not None\n"
            "assert redact.redact('id 5e0c1b9a7d3f2e4c8a6b0d1f') is not None\n"
            "assert redact.redact('see [v2](/docs/section12/page103.md) and '\n"
            "                     'https://example.com/v1/guide2 and [[Projects/project003]]') "
            "is not None\n"
            "print(redact._scanner_loaded, 'kingfisher_sdk' in sys.modules)\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        assert out.split() == ["False", "False"]

    def test_secret_beside_a_path_is_still_found(self) -> None:
        """A path is no candidate, but a token in the same text still gets the text scanned."""
        text = f"see /docs/section1/page103.md then use {GITHUB_PAT}"
        assert redact(text) == f"see /docs/section1/page103.md then use {mask(GITHUB_PAT)}"

    def test_context_words_get_a_text_scanned(self) -> None:
        """A secret too short to be a candidate is still found after a word rules key on."""
        text = 'curl https://api.example.com/v2/users1 -H "Authorization: Basic dXNlcjpwYXNz"'
        header = f'-H "Authorization: Basic {mask("dXNlcjpwYXNz")}"'
        assert redact(text) == f"curl https://api.example.com/v2/users1 {header}"

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("Authorization: Token abc12345xyz", f"Authorization: Token {mask('abc12345xyz')}"),
            ('authorization="basic dXNlcjpwYXNz"', f'authorization="basic {mask("dXNlcjpwYXNz")}"'),
            ("the Authorization: Basic scheme is weak", "the Authorization: Basic scheme is weak"),
            ("Authorization: Basic credentials", "Authorization: Basic credentials"),
        ],
    )
    def test_authorization_header(self, text: str, expected: str) -> None:
        """An Authorization header's credentials are masked; prose after it is not."""
        assert redact(text) == expected

    def test_long_parts_are_candidates_even_with_an_extension(self) -> None:
        """A run with a part long enough to hold a token is scanned, extension or not."""
        assert redact(f"{GITHUB_PAT}.md") == f"{mask(GITHUB_PAT)}.md"


class TestProperties:
    @settings(max_examples=150, deadline=None)
    @given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
    def test_idempotent_and_spans_valid(self, text: str) -> None:
        """Masking twice changes nothing more; spans are sorted, disjoint and in range."""
        once = redact(text)
        assert redact(once) == once
        spans = find_secrets(text)
        assert all(0 <= a < b <= len(text) for a, b in spans)
        assert all(spans[i][1] < spans[i + 1][0] for i in range(len(spans) - 1))

    @settings(max_examples=100, deadline=None)
    @given(st.from_regex(r"[0-9a-f]{24}", fullmatch=True))
    def test_hex_ids_never_masked(self, hex_id: str) -> None:
        """A 24-hex note id stays, bare, in a wikilink or as a quoted value."""
        for text in (hex_id, f"[[fact:{hex_id}]]", f'source: "{hex_id}"', f"ep_{hex_id}"):
            assert redact(text) == text


class TestCorpus:
    def test_no_false_positives_on_foam_docs(self) -> None:
        """Real documentation prose (86 Markdown files) has nothing to mask."""
        root = corpus("foam-docs")
        files = sorted(root.rglob("*.md"))
        assert files
        hits = {
            str(path.relative_to(root)): find_secrets(path.read_text(encoding="utf-8"))
            for path in files
        }
        assert {name: spans for name, spans in hits.items() if spans} == {}

    def test_one_megabyte_masks_only_the_token(self) -> None:
        """In a megabyte of real Markdown, the token at its very end is the only change."""
        root = corpus("foam-docs")
        text = "".join(p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.md")))
        data = (text * (1_000_000 // len(text) + 1))[:1_000_000] + f"\n{GITHUB_PAT}\n"
        assert data.count(GITHUB_PAT) == 1
        assert redact(data) == data.replace(GITHUB_PAT, mask(GITHUB_PAT))


class TestLongLines:
    # How long masking takes is `make bench`'s (its Redaction table); here, what keeps it
    # linear: no assignment reads the rest of its line.
    LINE = "password: choose one well; " * 4000

    def test_an_assignment_reads_two_characters_past_its_value(self) -> None:
        """After a bare value the pattern looks at most two visible characters further."""
        start = self.LINE.index(":")
        match = redact_module._VALUE.match(self.LINE, start)
        assert match is not None
        assert (match["bare"], match["rest"]) == ("choose", " on")

    def test_long_line_of_prose_assignments(self) -> None:
        """A 100 KB line of prose assignments is left alone; a secret ending it is masked."""
        assert redact(self.LINE) == self.LINE
        assert redact(f"{self.LINE}password: hunter2") == f"{self.LINE}password: {mask('hunter2')}"


class TestSecretCorpus:
    @pytest.mark.parametrize("form", FORMS, ids=[form.name for form in FORMS])
    def test_every_form_masked(self, form: Form) -> None:
        """Each form of the issue and each rule example loses its secret, in prose too."""
        for text in (form.text, f"Note: {form.text}\nmore text", f"- {form.text} — see ops"):
            masked = redact(text)
            assert not any(secret in masked for secret in form.secrets), masked
            assert redact(masked) == masked

    @pytest.mark.parametrize("form", FORMS, ids=[form.name for form in FORMS])
    def test_lowercased_forms_masked(self, form: Form) -> None:
        """A store that lowercases a name (projects) still has every secret masked."""
        masked = redact(form.text.lower())
        assert not any(secret.lower() in masked for secret in form.secrets), masked

    @pytest.mark.parametrize(
        "text",
        [
            "git@github.com:org/repo.git",
            "meet at 10:30@office.example tomorrow",
            "Password: choose a strong one (rotated monthly)",
            "password: see the vault entry && ask ops",
            "the private key lives in the HSM",
            "-----BEGIN PUBLIC KEY----- MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A -----END PUBLIC KEY-----",
        ],
    )
    def test_new_rules_leave_prose_alone(self, text: str) -> None:
        """Values followed by prose, scp remotes and public keys are not secrets."""
        assert redact(text) == text

    def test_mask_names_the_secret(self) -> None:
        """The same secret gets the same mask; two secrets get two masks."""
        assert MASKED.fullmatch(mask("Pq7Zr2Lm9Xw4"))
        assert mask("Pq7Zr2Lm9Xw4") == mask("Pq7Zr2Lm9Xw4") != mask("Pq7Zr2Lm9Xw5")

    def test_many_unclosed_key_blocks(self) -> None:
        """Key headers without END lines, on one long line: one body, found in one pass."""
        text = "-----BEGIN PRIVATE KEY----- abc " * 20_000
        masked = redact(text)
        assert masked.startswith("-----BEGIN PRIVATE KEY----- \u2039secret-")
        assert "abc" not in masked


class TestAssignmentProperty:
    @settings(max_examples=200, deadline=None)
    @given(
        name=st.sampled_from(
            ["password", "PGPASSWORD", "db_password", "api_key", "AWS_SECRET_ACCESS_KEY", "token"]
        ),
        op=st.sampled_from(["=", ": ", " = ", ":"]),
        secret=st.from_regex(r"[A-Za-z]{2}[0-9]{2}[A-Za-z0-9]{6,24}", fullmatch=True),
        after=st.sampled_from(["", " && psql -h db", " (rotate!)", ";", " aws s3 ls", " # old"]),
        before=st.sampled_from(["", "export ", "  ", "- ", "Server=db;"]),
    )
    def test_credential_values_never_survive(
        self, name: str, op: str, secret: str, after: str, before: str
    ) -> None:
        """A credential-looking value after a secret-like name is masked, whatever follows it."""
        masked = redact(f"{before}{name}{op}{secret}{after}")
        assert secret not in masked
        assert masked == f"{before}{name}{op}{mask(secret)}{after}"
