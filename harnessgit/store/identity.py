"""Who is acting: the author and committer git would write, dated by the store's clock."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime, timezone

from harnessgit.errors import HarnessgitError
from harnessgit.readstore.git import Git

Clock = Callable[[], datetime]


def local_now() -> datetime:
    return datetime.now(timezone.utc).astimezone()


class Identity:
    """``git var`` read once per store; dates from ``clock`` unless git's own
    ``GIT_AUTHOR_DATE`` / ``GIT_COMMITTER_DATE`` say otherwise."""

    def __init__(self, git: Git, clock: Clock) -> None:
        self.git = git
        self.clock = clock
        self._idents: dict[str, tuple[str, str]] | None = None

    def person(self) -> str:
        """The committer, as ``Name <email>``."""
        return self.signature("COMMITTER").rsplit(" ", 2)[0]

    def signature(self, who: str) -> str:
        """``Name <email> seconds +zone`` for ``who`` (AUTHOR or COMMITTER)."""
        if self._idents is None:
            self._idents = {}
            listing = self.git.out(["var", "-l"], check=False)
            for line in listing.splitlines():
                key, _, value = line.partition("=")
                if key in ("GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"):
                    person, _, when = value.rpartition("> ")
                    self._idents[key.split("_")[1]] = (person + ">", when)
        if who not in self._idents:
            raise HarnessgitError("git does not know who you are: set user.name and user.email (git config)")
        person, when = self._idents[who]
        if f"GIT_{who}_DATE" not in os.environ:
            now = self.clock()
            offset = now.utcoffset()
            minutes = int(offset.total_seconds() // 60) if offset else 0
            sign = "-" if minutes < 0 else "+"
            when = f"{int(now.timestamp())} {sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"
        return f"{person} {when}"
