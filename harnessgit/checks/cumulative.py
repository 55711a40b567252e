"""Cumulative growth: a file's size against a fixed reference, not only its parent.

The growth rule compares each change with the one before it, so a file grown in
ten steps of 1.45x each (every one under the 1.5x warning) passed every commit.
Measured against a reference that stays put while the steps pile up (the merge
base with ``[harness] base``, a label, or ``--since``), the same limits see the
sum of the steps. The measure is a state of the file (its size over the
reference's), so the ratchet applies: once over the limit, a change that does
not grow the file further is not blocked by it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

from harnessgit import layout
from harnessgit.check_findings import Finding
from harnessgit.checkconfig import CheckSections
from harnessgit.checkconfig.sections import KindChecks
from harnessgit.checks.growth import check_growth
from harnessgit.errors import InvalidName, UnknownRevision
from harnessgit.names import check_ref_name, check_revision
from harnessgit.readstore import Repository
from harnessgit.readstore.refs import RefReader
from harnessgit.render import short

_HINT = (
    "the steps since then add up: cut back what did not earn its place, "
    "or move the reference on purpose (a label, or --since)"
)


def check_since(path: str, kind: KindChecks, reference: str, text: str, since: str) -> list[Finding]:
    """Growth of ``text`` over ``reference``, the file at ``since`` (a description
    such as "the merge base with main (1a2b3c4d5e6f)"): the growth rule's limits and
    exemption, with a measure that names the reference."""
    return [
        replace(
            finding,
            measure=f"size / size at {since}",
            message=f"grew {finding.value:.2f}x since {since} "
            f"({len(reference):,} -> {len(text):,} characters)",
            hint=_HINT,
        )
        for finding in check_growth(path, kind, reference, text)
    ]


class Reference(NamedTuple):
    """The commit cumulative growth is measured against, and how findings name it."""

    commit: str
    name: str  # how findings name it: "the merge base with main (1a2b3c4d5e6f)"


def growth_reference(
    store: Repository, config: CheckSections, old: str | None, new: str | None, since: str | None
) -> tuple[Reference | None, list[str]]:
    """The commit cumulative growth is measured against, and notes about the choice.

    ``since`` (``--since``) wins; otherwise ``[checks] growth_since``. None when
    there is no reference, or when it is ``old`` itself: the growth rule already
    compares with that."""
    if since is not None:
        check_revision(since)
        commit = store.refs.resolve(since)
        return (Reference(commit, f"{since} ({short(commit)})") if commit != old else None), []
    setting = config.checks.growth_since
    if setting == "none" or old is None:
        return None, []
    if setting.startswith("label:"):
        name = setting.removeprefix("label:")
        labelled = store.refs.value(layout.LABELS + check_ref_name(name, "label name"))
        if labelled is None:
            return None, [f"[checks] growth_since: no label {name!r}; cumulative growth was not checked"]
        return (Reference(labelled, f"label {name} ({short(labelled)})") if labelled != old else None), []
    tip, base = new or _resolved(store.refs, "HEAD"), config.harness.base
    base_tip = _resolved(store.refs, base)
    # On the base branch's tip (most commits the hook sees) the merge base is the tip: no git.
    fork = (tip if tip == base_tip else store.history.merge_base(tip, base_tip)) if tip and base_tip else None
    # Only a fork behind the compared revision adds anything: on the base branch
    # itself the merge base is the checked commit (or the compared one).
    if fork is not None and fork != old and store.history.is_ancestor(fork, old):
        return Reference(fork, f"the merge base with {base} ({short(fork)})"), []
    if setting == "auto":
        return _last_label(store, old), []
    return None, []


def _resolved(refs: RefReader, rev: str) -> str | None:
    try:
        check_revision(rev)
        return refs.resolve(rev)
    except (UnknownRevision, InvalidName):
        return None  # no commit yet, or no base branch in this clone: nothing to add up from


def _last_label(store: Repository, old: str) -> Reference | None:
    """The label nearest behind ``old``: on the base branch itself, the last release
    a team marked (``harnessgit label``) is where growth adds up from."""
    behind = [
        (ref.removeprefix(layout.LABELS), commit)
        for ref, commit in sorted(store.refs.listing(layout.LABELS).items())
        if commit != old and store.history.is_ancestor(commit, old)
    ]
    if not behind:
        return None
    name, nearest = behind[0]
    for other_name, other in behind[1:]:
        if store.history.is_ancestor(nearest, other):
            name, nearest = other_name, other
    return Reference(nearest, f"label {name} ({short(nearest)})")
