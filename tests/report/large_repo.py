"""A synthetic repository of the shape that broke the report (issue 27 item 7): a flat
collection of system prompts, most commits touching a file or two, every 50th an upstream
sync touching 120 files, no evaluator (so no commit is scored). Written with one
`git fast-import`, so that 500 commits take about a second.

Synthetic on purpose: its size is what matters here, and it repeats exactly; the text
is generated prose (headings, bullets, a code block), not real prompts.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

CONFIG = '[harness]\npaths = ["system-prompts/*.md"]\nbase = "main"\n'
SYNC_EVERY = 50  # every SYNC_EVERY-th commit is an upstream sync
SYNC_FILES = 120


def prompt(index: int, version: int) -> str:
    rng = random.Random(index * 1_000_003 + version)
    words = ["assistant", "answer", "user", "tool", "cite", "briefly", "never", "always", "check", "source"]
    sections = []
    for part in range(3 + index % 4):
        bullets = "\n".join(
            f"- {' '.join(rng.choice(words) for _ in range(8 + rng.randrange(8)))}." for _ in range(4)
        )
        sections.append(f"## Part {part + 1}\n\n{bullets}\n")
    example = "```text\nuser: hello\nassistant: hi\n```\n"
    return f"# Prompt {index} (v{version})\n\n" + "\n".join(sections) + "\n" + example


def build(repo: Path, files: int = 700, commits: int = 500, seed: int = 0) -> Path:
    """``commits`` commits on main (the first adds every file and harnessgit.toml)."""
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    rng = random.Random(seed)
    versions = [0] * files
    stream: list[bytes] = []

    def blob(path: str, text: str) -> None:
        data = text.encode()
        stream.append(f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n")

    for number in range(commits):
        if number == 0:
            touched, message = list(range(files)), "Import the prompts"
        elif number % SYNC_EVERY == 0:
            touched, message = rng.sample(range(files), SYNC_FILES), f"Sync upstream release {number // 50}"
        else:
            touched = rng.sample(range(files), 1 + rng.randrange(2))
            message = f"Update {', '.join(f'p{i:03d}' for i in touched)}"
        data = message.encode()
        when = 1_767_225_600 + number * 3600
        stream.append(
            f"commit refs/heads/main\nmark :{number + 1}\n"
            f"author Bench <bench@example.invalid> {when} +0000\n"
            f"committer Bench <bench@example.invalid> {when} +0000\n"
            f"data {len(data)}\n".encode()
            + data
            + b"\n"
        )
        if number:
            stream.append(f"from :{number}\n".encode())
        else:
            blob("harnessgit.toml", CONFIG)
        for index in touched:
            versions[index] += number > 0
            blob(f"system-prompts/p{index:03d}.md", prompt(index, versions[index]))
        stream.append(b"\n")
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=b"".join(stream), check=True)
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=repo, check=True)
    return repo
