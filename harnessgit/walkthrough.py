"""A narrated walkthrough of init -> propose -> show -> log in a fresh repository.

What `harnessgit demo` runs until the offline evolve demo lands: every step uses
the same functions as the commands, on a real git repository in DIR.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from harnessgit.config import load_config
from harnessgit.history import accepted_log
from harnessgit.init import init_repository
from harnessgit.propose import propose
from harnessgit.render_show import log_text, show_text
from harnessgit.show import show
from harnessgit.store import Store

SKILL = """\
---
name: support-triage
description: Triage a customer ticket into one queue. Use for every inbound ticket.
---
# Support triage

1. Read the ticket.
2. Pick one queue: billing, bug, account or other.
"""


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def walkthrough(directory: Path, say: Callable[[str], None]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    if any(directory.iterdir()):
        from harnessgit.errors import HarnessgitError

        raise HarnessgitError(f"{directory} is not empty: pick a new directory for the demo")
    _git(directory, "init", "-q", "-b", "main")
    _git(directory, "config", "user.name", "harnessgit demo")
    _git(directory, "config", "user.email", "demo@harnessgit.invalid")
    (directory / "SKILL.md").write_text(SKILL)
    _git(directory, "add", "-A")
    _git(directory, "commit", "-q", "-m", "The harness as it ships")
    say(f"$ cd {directory} && harnessgit init --harness SKILL.md")
    with Store.discover(directory) as store:
        init_repository(store, harness=["SKILL.md"])
        _git(directory, "add", "harnessgit.toml")
        _git(directory, "commit", "-q", "-m", "Set up harnessgit")
        config = load_config(store.root)

        say("\n# An edit in the working tree becomes a candidate commit; the tree stays as it is.")
        (directory / "SKILL.md").write_text(SKILL + "3. Quote the sentence that decided the queue.\n")
        first = propose(
            store,
            config,
            rationale="Quote the deciding sentence\n\n"
            "Trajectories show the queue picked without a reason a reviewer can check.",
            evidence=[{"kind": "critique", "text": "ticket 17: queue 'bug' for a refund request"}],
        )
        _git(directory, "checkout", "-q", "--", "SKILL.md")
        say(
            "$ harnessgit propose -m 'Quote the deciding sentence' --evidence critique.jsonl\n"
            + first.candidate
        )

        say("\n# A second candidate builds on the first, from a file.")
        extended = (
            SKILL + "3. Quote the sentence that decided the queue.\n4. When two queues fit, prefer billing.\n"
        )
        second = propose(
            store,
            config,
            {"SKILL.md": extended},
            parent=first.candidate,
            rationale="Break ties toward billing",
        )
        say(
            f"$ harnessgit propose --parent {first.candidate} --file SKILL.md=new.md -m '...'\n"
            f"{second.candidate}"
        )

        say(f"\n$ harnessgit show {first.candidate}")
        say(show_text(show(store, config, first.candidate)))
        say("\n$ harnessgit log   # main moves only through the gate: nothing accepted yet")
        say(log_text(accepted_log(store, config)))
    say(f"\nThe repository is in {directory}: try `git log --all --oneline` and `harnessgit show` there.")
