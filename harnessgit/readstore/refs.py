"""Reading refs (the reading half of the store's `Refs`): what refs point at, from git's
ref files where they are plain (`RefFiles`), and revisions resolved."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from pathlib import Path

from harnessgit import layout
from harnessgit.errors import InvalidName, UnknownRevision
from harnessgit.names import check_ref_name, check_revision
from harnessgit.readstore.catfile import CatFile
from harnessgit.readstore.git import Git
from harnessgit.readstore.reffiles import UNKNOWN, RefFiles

_FULL_SHA = re.compile(r"[0-9a-f]{40}")
log = logging.getLogger("harnessgit")


class RefReader:
    def __init__(self, git: Git, git_dir: Path, common_dir: Path, catfile: CatFile) -> None:
        self.git = git
        self.git_dir = git_dir
        self.common_dir = common_dir  # refs, shared by every worktree
        self.files = RefFiles(common_dir)  # ref reads without a git process
        self._catfile = catfile

    # -- reading ---------------------------------------------------------

    def value(self, ref: str) -> str | None:
        """The object a full ref name points at now, or None: from git's ref files
        (`RefFiles`), else through the persistent cat-file; never a new process."""
        if not ref.startswith("refs/"):
            raise ValueError(f"not a full ref name: {ref}")
        value = self.files.value(ref)
        if value != UNKNOWN:
            return value
        found = self._catfile.lookup(ref)
        return found[0] if found else None

    def values(self, refs: Iterable[str]) -> dict[str, str]:
        """Current values of the refs that exist, by full name."""
        values = {}
        for ref in refs:
            sha = self.value(ref)
            if sha is not None:
                values[ref] = sha
        return values

    def listing(self, *prefixes: str) -> dict[str, str]:
        """Every ref under ``prefixes`` (all refs without), by full name."""
        refs = self._listed_files(prefixes)
        if refs is None:
            listing = self.git.out(["for-each-ref", "--format=%(objectname) %(refname)", *prefixes])
            refs = {}
            for line in listing.splitlines():
                sha, _, ref = line.partition(" ")
                refs[ref] = sha
        return refs

    def _listed_files(self, prefixes: tuple[str, ...]) -> dict[str, str] | None:
        """`listing` read from git's ref files (`RefFiles.listing`), without a process;
        None when only git can tell."""
        if not prefixes:
            return None
        found: dict[str, str] = {}
        for prefix in prefixes:
            listed = self.files.listing(prefix.rstrip("/") + "/")
            if listed is None:
                return None
            found.update(listed)
        return {
            ref: found[ref] for ref in sorted(found, key=lambda ref: ref.encode("utf-8", "surrogateescape"))
        }

    def head_branch(self) -> str | None:
        """The branch HEAD is on, or None when HEAD is detached."""
        result = self.git.run(["symbolic-ref", "--quiet", "--short", "HEAD"], check=False)
        return result.stdout.decode().strip() or None

    def resolve(self, rev: str) -> str:
        """The commit a revision names: git's meaning first (a branch, a tag, a commit id,
        ``HEAD~2``), then a label's (``production``, ``production~2``: the name under
        refs/harnessgit/labels/). The one resolver every command's revision goes through.

        When a branch or tag and a label share a name, git's meaning wins, as for any
        ref git already knows, and a warning names the label's explicit form
        (``refs/harnessgit/labels/NAME``) when the two point at different commits."""
        check_revision(rev)
        if _FULL_SHA.fullmatch(rev):
            # A full object id needs no revision parsing: one cat-file lookup, no git process.
            found = self._catfile.lookup(rev)
            if found is not None and found[1] == "commit":
                return rev
        sha = self._rev_parse(rev)
        label_ref, as_label = _label_form(rev)
        # Only a label that exists costs a git process more (ref files are read in-process).
        labelled = self._rev_parse(as_label) if label_ref and self.value(label_ref) else None
        if sha is None:
            if labelled is None:
                raise UnknownRevision(f"unknown revision {rev!r}")
            return labelled
        if labelled is not None and labelled != sha:
            log.warning(
                "%s is taken as git names it (%s), not as the label (%s): write %s to mean the label",
                rev,
                sha[:12],
                labelled[:12],
                as_label,
            )
        return sha

    def _rev_parse(self, rev: str) -> str | None:
        # HEAD on a branch, and a branch name, read from git's ref files: no git process
        # (the pre-commit hook reads HEAD and [harness] base on every commit).
        found = self.files.head(self.git_dir) if rev == "HEAD" else self.files.branch(self.git_dir, rev)
        if found != UNKNOWN:
            return found
        result = self.git.run(
            ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
            check=False,
        )
        return result.stdout.decode().strip() if result.returncode == 0 else None


def _label_form(rev: str) -> tuple[str, str]:
    """``production~2`` -> (``refs/harnessgit/labels/production``,
    ``refs/harnessgit/labels/production~2``): the label's ref and the revision read as
    that label's; ("", "") when the revision does not begin with a name a label could have."""
    cut = next((i for i, char in enumerate(rev) if char in "~^@:"), len(rev))
    name = rev[:cut]
    try:
        check_ref_name(name)
    except InvalidName:
        return "", ""
    if name.startswith("refs/"):
        return "", ""
    return layout.LABELS + name, layout.LABELS + rev
