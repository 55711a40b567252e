"""Reading the user's working tree and index (the reading half of the store's
`Worktree`): untracked files, tracked files, staged entries."""

from __future__ import annotations

from pathlib import Path

from harnessgit.objects import TreeEntry
from harnessgit.readstore.git import Git


class WorktreeReader:
    def __init__(self, git: Git, root: Path) -> None:
        self.git = git
        self.root = root

    def untracked_files(self, paths: list[str] | None = None) -> list[str]:
        """Files in the working tree that git does not track and does not ignore
        (only among ``paths`` when given)."""
        if paths == []:
            return []
        args = ["--literal-pathspecs", "ls-files", "-z", "--others", "--exclude-standard", "--full-name"]
        raw = self.git.run([*args, "--", *(paths or [])]).stdout
        return [item.decode("utf-8", "surrogateescape") for item in raw.split(b"\0") if item]

    def tracked_files(self) -> list[str]:
        raw = self.git.run(["ls-files", "-z", "--cached", "--full-name"]).stdout
        return [item.decode("utf-8", "surrogateescape") for item in raw.split(b"\0") if item]

    def index_entries(self, paths: list[str] | None = None) -> dict[str, TreeEntry]:
        """Staged files (stage 0) by path: what the next commit will contain."""
        args = ["--literal-pathspecs", "ls-files", "-s", "-z", "--full-name"]
        raw = self.git.run([*args, "--", *(paths or [])]).stdout if paths != [] else b""
        entries = {}
        for item in raw.split(b"\0"):
            if not item:
                continue
            meta, _, path = item.partition(b"\t")
            mode, sha, stage = meta.decode().split()
            if stage == "0":
                name = path.decode("utf-8", "surrogateescape")
                entries[name] = TreeEntry(mode, name, sha)
        return entries
