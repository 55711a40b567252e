"""The duplication rule's near repeats carried from a file's last version (issue 27,
item 5): the repeats found for each version of a file are the same with the last
version's graph (`lineage`) as without it, over random edit sequences whose sentences
often nearly repeat one another (so near pairs come and go with each edit)."""

from __future__ import annotations

import random

import pytest

from harnessgit.checks import duplication
from harnessgit.checks.duplication import find_repeats

VOCABULARY = [
    "agent",
    "tool",
    "file",
    "read",
    "write",
    "search",
    "plan",
    "task",
    "user",
    "answer",
    "code",
    "test",
    "commit",
    "review",
    "shell",
]


def sentence(rng: random.Random) -> str:
    return " ".join(rng.sample(VOCABULARY, rng.randint(6, 12))).capitalize() + "."


def edited(rng: random.Random, lines: list[str]) -> list[str]:
    """One to three edits: a line rewritten, inserted, removed, or copied with one word
    changed (a near repeat), a heading or a blank line inserted."""
    out = list(lines)
    for _ in range(rng.randint(1, 3)):
        where = rng.randrange(len(out) + 1)
        kind = rng.random()
        if kind < 0.3 and out:
            out[min(where, len(out) - 1)] = f"- {sentence(rng)} {sentence(rng)}"
        elif kind < 0.5 and len(out) > 3:
            del out[min(where, len(out) - 1)]
        elif kind < 0.75 and any(line.strip() for line in out):
            words = rng.choice([line for line in out if line.strip()]).split()
            words[rng.randrange(len(words))] = rng.choice(VOCABULARY)
            out.insert(where, " ".join(words))
        elif kind < 0.85:
            out.insert(where, f"## {rng.choice(VOCABULARY).title()}")
        elif kind < 0.9:
            out.insert(where, "")
        else:
            out.insert(where, f"- {sentence(rng)}")
    return out


@pytest.mark.parametrize("seed", range(6))
def test_each_version_finds_what_a_whole_search_finds(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    monkeypatch.setattr(duplication, "_GRAPHS", {})
    lines = [f"- {sentence(rng)}" for _ in range(rng.randint(5, 30))]
    carried = 0
    for _version in range(60):
        text = "\n".join(lines) + "\n"
        for near in (0.6, 0.8):
            carried += (f"p{seed}.md", near) in duplication._GRAPHS
            assert find_repeats(text, near, lineage=f"p{seed}.md") == find_repeats(text, near)
        lines = edited(rng, lines)
    assert carried >= 100  # the versions after the first were found from the last one's graph


def test_another_file_or_setting_lends_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(duplication, "_GRAPHS", {})
    rng = random.Random(7)
    texts = ["\n".join(f"- {sentence(rng)}" for _ in range(20)) + "\n" for _ in range(4)]
    for number, text in enumerate(texts):
        for near in (0.5, 0.9):
            assert find_repeats(text, near, lineage="same.md") == find_repeats(text, near)
            assert find_repeats(texts[-1 - number], near, lineage="same.md") == find_repeats(
                texts[-1 - number], near
            )


def test_a_new_sentence_finds_a_partner_that_lacks_its_rarest_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """At the threshold: a new 20-word sentence whose 4 rarest words (its own) the
    earlier one lacks still nearly repeats it (16/20 = 0.8): the words looked up for a new
    sentence are |words| - ceil(near * |words|) + 1 of them, one fewer would miss it."""
    monkeypatch.setattr(duplication, "_GRAPHS", {})
    common = [f"w{chr(97 + a)}{chr(97 + b)}" for a, b in zip(range(16), range(3, 19), strict=True)]
    own = ["solo", "lone", "only", "sole"]
    earlier = "- " + " ".join(common) + ".\n\nSomething else entirely here.\n"
    later = earlier + "\n- " + " ".join(common[:8] + own + common[8:]) + ".\n"
    assert find_repeats(earlier, 0.8, lineage="t.md") == find_repeats(earlier, 0.8)
    [repeat] = find_repeats(later, 0.8)
    assert repeat.kind == "passage" and not repeat.exact
    assert find_repeats(later, 0.8, lineage="t.md") == [repeat]
