"""Seconds to mask one long line of a repeated pattern, by length: is masking linear?

Run: ``.venv/bin/python bench/redact_lines.py`` (prints a table; nothing is asserted).
Each pattern is repeated to 150 KB, 300 KB, 600 KB and 1.2 MB on one line; a linear masker
takes about twice as long per doubling, a quadratic one four times as long.
"""

from __future__ import annotations

import sys
import time

from vaultsync.core.redact import redact

PATTERNS = {
    "password=": "password=",
    "password: x ": "password: x ",
    "token=abc123 ": "token=abc123 ",
    "api_key=": "api_key=",
    "-----BEGIN PRIVATE KEY-----": "-----BEGIN PRIVATE KEY-----",
    "Bearer ": "Bearer ",
    "AKIA": "AKIA",
    "://u:": "://u:",
    "u:Pw0rd1234@h.io ": "u:Pw0rd1234@h.io ",
    "PGPASSWORD=Tr0ub4dor3 && ": "PGPASSWORD=Tr0ub4dor3 && ",
    "AKIA… / ": "AKIA5UQWK3ZJ7TYDN2XP / ",
}
SIZES = (150_000, 300_000, 600_000, 1_200_000)


def seconds(text: str) -> float:
    """Best of two runs of ``redact(text)``."""
    best = float("inf")
    for _ in range(2):
        start = time.perf_counter()
        redact(text)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    """Print one row per pattern: seconds at each size, and the last doubling's ratio."""
    redact("ghp_" + "1234567890abcdefghij" + "ABCDEFGHIJ123456")  # load the rules first
    chosen = sys.argv[1:] or list(PATTERNS)
    print("| pattern | " + " | ".join(f"{s // 1000} KB" for s in SIZES) + " | ×/doubling |")
    print("|---" * (len(SIZES) + 2) + "|")
    for name in chosen:
        unit = PATTERNS[name]
        figures = [seconds((unit * (size // len(unit) + 1))[:size]) for size in SIZES]
        ratio = figures[-1] / figures[-2] if figures[-2] else float("nan")
        cells = " | ".join(f"{f:.3f} s" for f in figures)
        print(f"| `{name}` | {cells} | {ratio:.1f} |", flush=True)


if __name__ == "__main__":
    main()
