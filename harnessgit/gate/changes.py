"""What a commit on the base branch changes, as the gate sees it.

Four kinds, judged with the settings in force before the commit (its first parent's
harnessgit.toml): the **harness** (files under ``[harness] paths``: only the gate may
change them), the **evaluator** (the files of its fingerprint, or its command or
model: a *regrade*, after which old and new scores do not compare), the
**settings** that decide (``[harness]``, ``[evaluator]``, ``[splits]``, ``[gate]``,
``[checks]`` and the split manifest), and everything else: **infrastructure**
(README, docs, CI), which changes nothing the gate reads. `verify` asks for a gated
merge or a recorded override for the first three and only lists the fourth.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from harnessgit import globs, layout
from harnessgit.config import CONFIG_FILE, Config, parse_config
from harnessgit.errors import ConfigError, HarnessgitError
from harnessgit.evaluation.context import eval_context
from harnessgit.evaluation.fingerprint import evaluator_files
from harnessgit.evaluation.splits import ManifestError
from harnessgit.gate.settings import committed_settings
from harnessgit.records import OverrideRecord
from harnessgit.store import Objects, Store

# The sections of harnessgit.toml that decide what reaches the base branch.
DECIDING = ("harness", "evaluator", "splits", "gate", "checks")


@dataclass(frozen=True)
class Change:
    commit: str
    harness: list[str]  # harness files changed
    evaluator: list[str]  # evaluator files changed, or "[evaluator] command"/"model"
    settings: list[str]  # deciding sections of harnessgit.toml changed, or the manifest
    other: list[str]  # everything else: infrastructure
    # Of ``other``, the files in a folder that holds a harness file (a skill's
    # references/ or scripts/ beside its SKILL.md): infrastructure by the globs, yet
    # likely read by the agent. Listed so that a reviewer can widen [harness] paths.
    beside: list[str] = field(default_factory=list)

    @property
    def kinds(self) -> list[str]:
        """What needs a gated merge or a recorded override: harness, regrade, settings."""
        found = [("harness", self.harness), ("regrade", self.evaluator), ("settings", self.settings)]
        return [kind for kind, paths in found if paths]

    @property
    def infrastructure(self) -> bool:
        return not self.kinds


def classify(store: Store, commit: str) -> Change:
    """What ``commit`` changes against its first parent, under the parent's settings."""
    info = store.objects.commit_info(commit)
    if not info.parents:
        raise HarnessgitError(f"{commit[:12]} is a root commit: it has no parent to compare with")
    parent = info.parents[0]
    try:
        before = committed_settings(store.objects, parent, what=f"the parent of {commit[:12]}").config
    except (ConfigError, ManifestError):
        # Before harnessgit was set up, nothing decided: every change is outside the gate's view.
        return Change(commit, [], [], [], sorted(store.history.changed_paths(parent, commit)))
    paths = sorted(store.history.changed_paths(parent, commit))
    harness = [p for p in paths if globs.matches(p, before.harness.paths)]
    files = store.objects.files_at(commit)
    graders = set(evaluator_files(store.objects.files_at(parent), before)) | set(
        evaluator_files(files, before)
    )
    evaluator = [p for p in paths if p in graders and p not in harness]
    settings = _settings_changes(store.objects, parent, commit, before, paths)
    evaluator += [f"[evaluator] {key}" for key in _evaluator_keys(store.objects, commit, before)]
    taken = {*harness, *evaluator, CONFIG_FILE, before.splits.manifest}
    other = [p for p in paths if p not in taken]
    return Change(commit, harness, evaluator, settings, other, beside_harness(other, files, before))


def beside_harness(paths: list[str], files: Mapping[str, object], config: Config) -> list[str]:
    """The ``paths`` under a folder (not the root) that holds a harness file of ``files``."""
    folders = {p.rpartition("/")[0] for p in files if globs.matches(p, config.harness.paths)} - {""}
    return [p for p in paths if any(p.startswith(folder + "/") for folder in folders)]


def _settings_changes(
    objects: Objects, parent: str, commit: str, before: Config, paths: list[str]
) -> list[str]:
    found = []
    if before.splits.manifest in paths:
        found.append(before.splits.manifest)
    if CONFIG_FILE in paths:
        after = _config_at(objects, commit)
        for name in DECIDING:
            if after is None or getattr(after, name) != getattr(before, name):
                found.append(f"[{name}]")
    return found


def _evaluator_keys(objects: Objects, commit: str, before: Config) -> list[str]:
    """The evaluator's command or model changed in harnessgit.toml: a regrade too."""
    after = _config_at(objects, commit)
    if after is None:
        return []
    return [
        spec.name
        for spec in fields(before.evaluator)
        if spec.name in ("command", "model")
        and getattr(after.evaluator, spec.name) != getattr(before.evaluator, spec.name)
    ]


def _config_at(objects: Objects, commit: str) -> Config | None:

    raw = objects.file_at(objects.commit_info(commit).tree, CONFIG_FILE)
    try:
        return parse_config(raw) if raw is not None else None
    except ConfigError:
        return None


def regrades(store: Store, config: Config, commits: list[str]) -> list[str]:
    """The commits of ``commits`` (a first-parent chain, oldest first) whose evaluator
    fingerprint differs from the commit before them, each named in a phrase with its
    subject and the reason its override records (`verify` asks for one); [] when the
    first and last have one fingerprint."""
    if len(commits) < 2:
        return []
    fingerprint = [
        eval_context(store.objects, config, sha).key.fingerprint for sha in (commits[0], commits[-1])
    ]
    if fingerprint[0] == fingerprint[1]:
        return []
    found, previous = [], fingerprint[0]
    for sha in commits[1:]:
        current = eval_context(store.objects, config, sha).key.fingerprint
        if current != previous:
            found.append(_regrade_named(store, sha))
        previous = current
    return found


def _regrade_named(store: Store, sha: str) -> str:
    records = store.notes.records_on(layout.NOTES_GATE, sha)
    override = next((r for r in records if isinstance(r, OverrideRecord) and r.commit == sha), None)
    reason = f", override: “{override.reason}”" if override is not None else ", no override recorded"
    return f"at {sha[:12]} {store.objects.commit_info(sha).subject!r}{reason}"
