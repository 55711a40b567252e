"""What evidence keeps of a proposer's output (`kept_output`) and of its rationale (`capped`)."""

from __future__ import annotations

import hashlib

from harnessgit.proposers.protocol import MAX_RATIONALE_CHARS, capped, kept_output
from harnessgit.scrub import REDACTED, Scrubber

KEY = "k3y with spaces \"q'\\ $(x)*+?[a]{2}|^ end"


def test_an_output_under_the_cap_is_kept_whole_and_scrubbed() -> None:
    kept = kept_output(f"ok é {KEY}", Scrubber(secrets=[KEY]), limit=1024)
    clean = f"ok é {REDACTED}"
    assert kept == {
        "raw_output": clean,
        "raw_output_bytes": len(f"ok é {KEY}".encode()),
        "raw_output_sha256": hashlib.sha256(clean.encode()).hexdigest(),
        "raw_output_truncated": False,
    }


def test_a_long_output_keeps_its_start_and_its_end() -> None:
    raw = "START " + "é" * 10_000 + " END"  # 20,010 bytes
    kept = kept_output(raw, Scrubber(), limit=1000)
    excerpt = str(kept["raw_output"])
    assert excerpt.startswith("START ") and excerpt.endswith(" END")
    assert "[18.6 KiB of 19.5 KiB left out]" in excerpt and "\ufffd" not in excerpt  # cut between characters
    assert len(excerpt.encode()) <= 1000 + 40
    assert kept["raw_output_bytes"] == 20_010 and kept["raw_output_truncated"] is True


def test_a_secret_across_the_cut_is_redacted_before_the_cut() -> None:
    # Cut first, the excerpt would end with the key's first characters, which no rule knows.
    raw = "x" * 740 + KEY + "y" * 2000
    excerpt = str(kept_output(raw, Scrubber(secrets=[KEY]), limit=1000)["raw_output"])
    assert KEY[:8] not in excerpt and REDACTED in excerpt


def test_capped() -> None:
    assert capped("short") == "short"
    assert capped("w" * 5000) == "w" * (MAX_RATIONALE_CHARS - 3) + "..."
