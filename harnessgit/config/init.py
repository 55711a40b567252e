"""`harnessgit init`: write harnessgit.toml and make `git log` show harnessgit notes.

A convenience, not a required step: every command works wherever a valid
harnessgit.toml is present.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from harnessgit import globs, layout
from harnessgit.checkconfig.detect import Found, LeftOut, detect, harness_globs, hidden_prose, left_out
from harnessgit.config import CONFIG_FILE, DEFAULT_HARNESS_PATHS, Config, parse_config
from harnessgit.errors import ConfigError, HarnessgitError, UnknownRevision
from harnessgit.names import check_ref_name
from harnessgit.store import Store

# Evidence (rationales) and gate verdicts are short and worth seeing in `git log`;
# evaluation records hold every per-instance score and would flood it. Written as
# globs because git warns about a displayRef that names a ref not created yet.
DISPLAY_REFS = [layout.NOTES_EVIDENCE + "*", layout.NOTES_GATE + "*"]


@dataclass(frozen=True)
class InitResult:
    path: str
    config: Config
    display_refs_added: list[str]
    unmatched: list[str] = field(default_factory=list)  # given --harness globs that match no file yet
    # What init found when no --harness glob was given (empty: nothing it knows, so the
    # default globs were written).
    found: list[Found] = field(default_factory=list)
    # How many files of the working tree each written [harness] paths glob matches.
    counts: dict[str, int] = field(default_factory=dict)
    # The folders holding the most prose the globs leave out, largest first, and the
    # largest when it outweighs what the globs cover (a detection that missed the harness).
    left_out: list[LeftOut] = field(default_factory=list)
    hidden: LeftOut | None = None
    text: str = ""  # the harnessgit.toml written (or, with dry_run, that would be)
    written: bool = True  # False: dry_run, nothing was written


def _toml_list(values: list[str]) -> str:
    return "[" + ", ".join(json.dumps(value, ensure_ascii=False) for value in values) + "]"


def render_config(
    harness: list[str],
    evaluator: list[str] | None,
    splits: str,
    model: str,
    base: str,
    evaluator_files: list[str] | None = None,
) -> str:
    command = (
        f"command = {_toml_list(evaluator)}  # argv, never a shell string"
        if evaluator
        else '# command = ["python3", "eval.py"]  # argv, never a shell string'
    )
    files = (
        f"files = {_toml_list(evaluator_files)}  # what the evaluator reads: an edit to these is a regrade"
        if evaluator_files
        else '# files = ["eval.py"]  # what the evaluator reads; default: the files its command names'
    )
    return f"""\
# harnessgit configuration (docs/config.md lists every key and its default).

[harness]
paths = {_toml_list(harness)}  # globs of the harness components
base = {json.dumps(base)}  # the branch that moves only through the gate

[evaluator]
{command}
{files}
model = {json.dumps(model)}  # label recorded with every evaluation

[splits]
manifest = {json.dumps(splits)}  # {{"train": [...], "selection": [...], "test": [...]}}

[gate]
alpha = 0.05  # family-wise false-accept rate, spent across gate attempts
min_effect = 0.0  # the lower confidence bound must exceed this
min_instances = 30  # refuse smaller selection sets unless --allow-small
"""


def init_repository(
    store: Store,
    *,
    harness: list[str] | None = None,
    evaluator: list[str] | None = None,
    splits: str = "splits.json",
    model: str = "default",
    base: str | None = None,
    dry_run: bool = False,
) -> InitResult:
    """Write harnessgit.toml (with ``dry_run``, only say what it would write)."""
    path = store.root / CONFIG_FILE
    if path.exists() and not dry_run:
        raise ConfigError(f"{CONFIG_FILE} already exists: edit it, or remove it first")
    if base is None:
        base = store.refs.head_branch()
        if base is None:
            raise HarnessgitError("HEAD is detached: pass --base BRANCH")
    check_ref_name(base, "base branch")
    files = working_files(store)
    found = [] if harness else detect(files)
    patterns = harness or harness_globs(found) or list(DEFAULT_HARNESS_PATHS)
    text = render_config(
        patterns,
        evaluator,
        splits,
        model,
        base,
        named_files(store, evaluator or []),
    )
    config = parse_config(text.encode("utf-8"))  # what we write must be what we read
    present = set(store.config_values("notes.displayRef"))
    added = [ref for ref in DISPLAY_REFS if ref not in present]
    if not dry_run:
        with open(path, "x", encoding="utf-8") as handle:
            handle.write(text)
        for ref in added:
            store.config_add("notes.displayRef", ref)
    counts = {glob: sum(1 for file in files if globs.matches(file, [glob])) for glob in patterns}
    # A given glob that matches no file is likely a typo that would make every edit to
    # the harness "not a harness file": warned about, not an error (the files may be next).
    unmatched = [glob for glob in harness or [] if not counts[glob]]
    missed = left_out(files, patterns)
    hidden = None if harness else hidden_prose(found, missed)
    return InitResult(
        str(path), config, added, unmatched, found, counts, missed, hidden, text, written=not dry_run
    )


def working_files(store: Store) -> set[str]:
    """The files of the working tree: tracked, or untracked and not ignored."""
    changes = store.worktree.changes()
    try:
        files = set(store.objects.files_at(store.refs.resolve("HEAD")))
    except UnknownRevision:  # no commit yet: only what git status lists
        files = set()
    files |= {path for path, exists in changes.items() if exists}
    files -= {path for path, exists in changes.items() if not exists}
    return files


def named_files(store: Store, argv: list[str]) -> list[str]:
    """The evaluator's own files, as ``[evaluator] files`` globs: each argument of its
    command that is a file (``eval.py``) or a folder (``grader/`` -> ``grader/**``) of
    the working tree. What the gate's evaluator fingerprint covers (docs/gate.md)."""
    found: list[str] = []
    for argument in argv:
        path = argument.removeprefix("./").rstrip("/")
        if not path or path.startswith(("-", "/")) or ".." in path.split("/"):
            continue
        where = store.root / path
        if where.is_dir():
            pattern = f"{globs.escape(path)}/**"
        elif where.is_file():
            pattern = globs.escape(path)
        else:
            continue
        if pattern not in found:
            found.append(pattern)
    return found
