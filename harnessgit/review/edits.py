"""The edits of a review: each commit (or proposal a merge landed) of BASE..HEAD with
its rationale, its evidence quoted and, when scores allow, its own effect."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from harnessgit.candidates.chain import Effect, Measure, own_effects
from harnessgit.errors import HarnessgitError
from harnessgit.records import EvidenceRecord, view_of
from harnessgit.review.scores import compact, cut
from harnessgit.store import Objects, Store
from harnessgit.targets import Provenance, proposal_chain, recorded, without_trailer

EVIDENCE_ITEMS = 3  # items of each evidence file quoted
TEXT_CHARS = 600  # a feedback, rationale line or evidence item longer than this is cut


@dataclass(frozen=True, kw_only=True)
class EvidenceItem:
    label: str
    items: int
    bytes: int
    blob: str
    item_kinds: dict[str, int]
    quoted: list[str]  # the first few items, cut


@dataclass(frozen=True, kw_only=True)
class Edit:
    """One edit of BASE..HEAD and why it was made: a commit of HEAD's first-parent
    chain, or one of the proposals a merge on that chain landed."""

    commit: str
    subject: str
    candidate: str | None
    rationale: str | None  # the proposal's rationale, else the commit message's body
    source: str | None  # how it was proposed (worktree, file, patch, api, evolve)
    proposer: str | None
    evidence: list[EvidenceItem]
    merge: str | None = None  # the merge on HEAD's first-parent chain that landed it, if any
    # Its own effect: its selection scores against those of the commit it was made on,
    # under the gate's evaluator and model (None: not evaluated on both).
    effect: Effect | None = None


def edits_between(store: Store, head: str, base: str) -> list[tuple[Provenance, str | None]]:
    """Every edit of BASE..HEAD, newest first, with the merge that landed it: the
    commits of HEAD's first-parent chain, a merge standing for the proposals it landed
    (the candidate and each candidate it was proposed on), newest first too."""
    found: list[tuple[Provenance, str | None]] = []
    for sha in store.history.first_parent_chain(head, stop=base):
        parents = store.objects.commit_info(sha).parents
        if len(parents) > 1:
            found += [(origin, sha) for origin in reversed(proposal_chain(store, parents[1], parents[0]))]
        else:
            found.append((recorded(store, sha), None))
    return found


def described(
    store: Store, edits: list[tuple[Provenance, str | None]], measure: Measure | None
) -> list[Edit]:
    """Each edit with its rationale and evidence, and its own effect where ``measure``
    says where to read it (None: no evaluation, so no effects)."""
    origins = [origin for origin, _merge in edits]
    effects = own_effects(measure, origins) if measure is not None else [None] * len(origins)
    return [
        _edit(store, origin, merge, effect) for (origin, merge), effect in zip(edits, effects, strict=True)
    ]


def _edit(store: Store, origin: Provenance, merge: str | None, effect: Effect | None) -> Edit:
    info = store.objects.commit_info(origin.commit)
    proposal = origin.proposal
    return Edit(
        commit=origin.commit,
        subject=info.subject,
        candidate=origin.candidate,
        rationale=proposal.rationale if proposal else (without_trailer(info.body) or None),
        source=proposal.source if proposal else None,
        proposer=proposal.proposer if proposal else None,
        evidence=[_evidence_item(store.objects, r) for r in origin.evidence],
        merge=merge,
        effect=effect,
    )


def _evidence_item(objects: Objects, record: EvidenceRecord) -> EvidenceItem:
    quoted = []
    try:
        lines = objects.read_blob(record.blob).decode("utf-8", "replace").splitlines()
    except HarnessgitError:  # a blob lost to gc on a remote: say so rather than fail the review
        lines = []
        quoted.append("(the evidence blob is missing from this clone: fetch refs/harnessgit/*)")
    for line in lines[:EVIDENCE_ITEMS]:
        try:
            item = json.loads(line)
        except ValueError:
            item = line
        quoted.append(cut_text(item if isinstance(item, str) else _evidence_text(item)) or "")
    return view_of(EvidenceItem, record, quoted=quoted)


def _evidence_text(item: Any) -> str:
    """A critique's text when it has one, else the item as compact JSON."""
    if isinstance(item, dict):
        for key in ("text", "critique", "feedback", "message", "content"):
            if isinstance(item.get(key), str):
                kind = item.get("kind") or item.get("type")
                return f"{kind}: {item[key]}" if isinstance(kind, str) else str(item[key])
    return compact(item)


def cut_text(text: Any) -> str | None:
    return None if text is None else cut(str(text), TEXT_CHARS)
