"""One evolve iteration, step by step (the steps are listed in `harnessgit.evolve.evolve`).

`_steps` runs the steps as one flat sequence, each returning what it measured or made:
`pick` draws the parent and the minibatch, the parent is scored there, `choose` reads
its reflective dataset and chooses the component; `ask` calls the proposer;
`commit_proposal` and `check_failure` make the answer a candidate and check it;
`minibatch_test` keeps it only if it beats its parent there; `select` scores it on
the selection split, updates the frontier and asks the policy whether to gate (not
when an earlier edit of its chain passed the gate against this base); `carry` and
`gate` (`harnessgit.evolve.gating`) carry it onto the base and run the gate (or
merge). After each step the sequence yields what the iteration holds so far (an
`Ending`); the last says how it ended, and `write_record` (harnessgit.evolve.record)
puts it on the record with the run's spending since the iteration began (a `Mark`).
There is no meter the steps write to: every iteration that started writes exactly
one record, and one a budget or Ctrl-C stops half-way is built from the last
`Ending` its steps returned.
"""

from __future__ import annotations

import random
import time
from collections.abc import Generator
from dataclasses import replace

from harnessgit import globs
from harnessgit.candidates.propose import Proposal, propose
from harnessgit.checks import FileVersion, check_files, kind_of
from harnessgit.config import Config
from harnessgit.errors import ProposalError
from harnessgit.evolve.gating import (
    carry,
    gate,
    gated_before,
    judge_carried,
    not_carried,
    onto_base,
    screen,
    verdict_on,
)
from harnessgit.evolve.heartbeat import heartbeat
from harnessgit.evolve.merge import merge_draw, plan_merge, propose_merge
from harnessgit.evolve.minibatch import minibatch
from harnessgit.evolve.policy import choose_component
from harnessgit.evolve.record import Answer, Draw, Ending, scrubber_of, stopped, write_record
from harnessgit.evolve.reflect import reflective_dataset
from harnessgit.evolve.session import Charge, Session
from harnessgit.evolve.state import BudgetReached, MergePlan
from harnessgit.gate.frontier import update_frontier
from harnessgit.proposers import Limits, ProposalRequest, ProposedEdit, RejectedProposal
from harnessgit.proposers.protocol import capped, kept_output
from harnessgit.records import IterationRecord
from harnessgit.render import EMPTY
from harnessgit.stats.frontier import sample_parent

# Seconds an iteration's writes wait to land with its record (one ref transaction, not
# five or six: issue 13); older ones land as they are made, so a kill loses at most
# about this much evaluator work. Every wiring of tests/bench/bench_overhead.py fits.
STAGE_FOR = 5.0

# An iteration's steps: after each, what the iteration holds so far (`_steps`).
Steps = Generator[Ending, None, None]


def iterate(session: Session) -> IterationRecord:
    """One iteration and its record. A budget reached half-way ends it with outcome
    ``budget`` (the run stops after it), Ctrl-C or SIGTERM with ``interrupted`` (then
    re-raised): what it spent and made is on the record either way (built from what
    its steps returned so far), and a candidate not yet scored on the selection split
    is archived. An iteration a budget stops before it spent or made anything writes
    nothing, gives its number back and raises `BudgetReached`."""
    number, mark = session.begin()
    held: Ending | None = None  # what the steps have returned so far
    # The proposal, its scores, the frontier's moves and the record land together: a
    # kill leaves all of the iteration or none of it (`STAGE_FOR`).
    with session.store.refs.staging(f"evolve iteration {number}", max_age=STAGE_FOR):
        steps = _steps(session, number)
        try:
            for step in steps:
                held = step
            assert held is not None and held.outcome, "an iteration's last step says how it ended"
            return write_record(session, held, mark)
        except BudgetReached as exc:
            steps.close()
            record = stopped(session, mark, held, "budget", str(exc))
            if record is None:
                raise
            return record
        except KeyboardInterrupt:
            steps.close()
            stopped(session, mark, held, "interrupted", "interrupted (Ctrl-C or SIGTERM)")
            raise


def _steps(session: Session, number: int) -> Steps:
    """The iteration's steps in order, each returning what it measured or made; after
    each, what the iteration holds so far as an `Ending` (a stopped iteration's record
    is built from the last one, with its own outcome); the last one says how it ended."""
    plan = plan_merge(session, number) if session.options.merge and session.schedule.ready() else None
    if plan:
        yield from _merge_steps(session, number, plan)
        return
    held = Ending(draw=pick(session, number), outcome="", reason="")
    yield held
    scored = replace(held.draw, parent_score=session.evaluate(held.draw.parent, "train", held.draw.batch))
    yield (held := replace(held, draw=scored))
    start = choose(session, scored)
    yield (held := replace(held, draw=start))
    if start.parent_score is not None and start.parent_score >= 1.0:
        # GEPA's skip_perfect_score: a solved minibatch has no failure to reflect on.
        session.solved_streak += 1
        reason = "the parent solves every instance of this minibatch"
        yield Ending(draw=start, outcome="skipped-perfect", reason=reason)
        return
    session.solved_streak = 0
    answers: list[Answer] = []
    for component, text in start.parts:
        answers.append(ask(session, start, component, text))
        yield (held := replace(held, answer=answers[-1]))
    # Several components make one proposal: refused as a whole if any part is.
    for answer in answers:
        if isinstance(answer, RejectedProposal):
            reason = f"{answer.code}: {answer.reason}"
            yield Ending(draw=start, outcome="rejected-proposal", reason=reason, answer=answer)
            return
    edits = [answer for answer in answers if isinstance(answer, ProposedEdit)]
    candidate = commit_proposal(session, start, edits)
    yield (held := replace(held, candidate=candidate))
    failure = next(filter(None, (check_failure(session.config, start, edit) for edit in edits)), "")
    if failure:
        session.reject(candidate, "checks: " + failure)
        yield Ending(
            draw=start, outcome="rejected-checks", reason=failure, answer=edits[0], candidate=candidate
        )
        return
    yield from minibatch_test(session, start, edits[0], candidate)


def _merge_steps(session: Session, number: int, plan: MergePlan) -> Steps:
    """A merge proposal as a candidate on its first parent, with the second as its
    other parent; kept if on gepa's selection subsample it scores at least as well as
    the better parent there, then scored, put on the frontier and gated like any."""
    start = merge_draw(session, number, plan)
    yield (held := Ending(draw=start, outcome="", reason=""))
    candidate = propose_merge(session, plan)
    yield (held := replace(held, candidate=candidate))
    after = session.evaluate(candidate.commit, "selection", start.batch)
    tested = Ending(draw=start, outcome="not-better", reason="", candidate=candidate, candidate_score=after)
    yield tested
    before = start.parent_score
    if (
        after is None or before is None or after < before
    ):  # gepa: the merge's sum at least the better parent's
        detail = f"selection subsample {_mean(before)} (the better parent) -> {_mean(after)}: worse"
        session.reject(candidate, detail)
        yield replace(tested, reason=detail)
        return
    yield from select(session, start, tested)


def pick(session: Session, number: int) -> Draw:
    """A parent from the frontier (seeded) and the minibatch (a function of the seed
    and ``number``); not yet scored, and no component chosen (`choose`)."""
    tip = session.base_commit()
    view = session.frontier()
    parent_name = sample_parent(view.frontier, random.Random(f"{session.seed}:{number}").getrandbits(32))
    batch = minibatch(session.train, session.seed, number, session.config.evolve.minibatch)
    return Draw(
        number=number,
        tip=tip,
        parent=view.members[parent_name].commit,
        parent_name=parent_name,
        component="",
        batch=batch,
        current="",
        examples=[],
        parent_score=None,
    )


def choose(session: Session, scored: Draw) -> Draw:
    """The drawn parent's reflective dataset on its minibatch, which the
    ``most-failures`` rule reads to choose the component, and the component(s)."""
    store, config, parent = session.store, session.config, scored.parent
    examples = reflective_dataset(
        store.objects,
        session.book,
        session.context(parent).key,
        scored.batch,
        excerpt_chars=config.evolve.trajectory_chars,
        max_examples=config.evolve.max_examples,
    )
    components = sorted(
        path for path in store.objects.files_at(parent) if globs.matches(path, config.harness.paths)
    )
    component = choose_component(components, scored.number, config.evolve.component, examples)
    # [evolve] components = N: the N components from the chosen one on, in round-robin order.
    first = components.index(component)
    chosen = [
        components[(first + k) % len(components)]
        for k in range(min(config.evolve.components, len(components)))
    ]
    tree = store.objects.commit_info(parent).tree
    texts = {path: (store.objects.file_at(tree, path) or b"").decode("utf-8") for path in chosen}
    also = {path: texts[path] for path in chosen[1:]}
    return replace(scored, component=component, current=texts[component], examples=examples, also=also)


def ask(session: Session, start: Draw, component: str, current: str) -> Answer:
    """One proposer call for ``component``: counted before it is made, timed, its cost added."""
    request = ProposalRequest(
        component=component,
        current_text=current,
        examples=start.examples,
        limits=_limits(session.config, component),
        form=session.config.evolve.form,
    )
    session.spend = session.spend.add(proposals=1)
    asked = time.monotonic()
    with (
        scrubber_of(session).errors(),  # a failure quotes the proposer's stderr or an HTTP body
        heartbeat(f"the proposer's edit to {component}"),
    ):
        answer = session.options.proposer.propose(request)
    session.charges.append(Charge("proposer", time.monotonic() - asked, answer.usage.cost_usd))
    session.spend = session.spend.add(cost_usd=answer.usage.cost_usd or 0.0)
    return answer


def _limits(config: Config, component: str) -> Limits:
    """The checks' size limits on the component's kind, for the proposer to respect."""
    kind = config.checks.kinds.get(kind_of(component, config.checks))
    if kind is None:
        return Limits()
    return Limits(max_chars=kind.max_chars, max_lines=kind.max_lines, max_tokens=kind.max_tokens)


def commit_proposal(session: Session, start: Draw, edits: list[ProposedEdit]) -> Proposal:
    """The edits (one per component) as one candidate on the parent, with the reflective
    dataset and each proposer output (bounded, `kept_output`) as its evidence. The new
    texts are cleared of the configured secrets' values (only those: a pattern could
    match an example in the harness text); the rationale, evidence and message are
    scrubbed by `propose`."""
    name = session.options.proposer.name
    scrubber = scrubber_of(session)
    evidence = [
        {
            "kind": "reflective-dataset",
            "component": start.label,
            "examples": [example.model_dump(mode="json") for example in start.examples],
        },
        *(
            {
                "kind": "proposer-output",
                "proposer": name,
                **kept_output(edit.raw_output, scrubber),
                "usage": edit.usage.model_dump(mode="json"),
                "operations": [op.model_dump(mode="json") for op in edit.operations or []],
            }
            for edit in edits
        ),
    ]
    rationales = [capped(edit.rationale) or f"Edit {edit.component}" for edit in edits]
    candidate = propose(
        session.store,
        session.config,
        {edit.component: scrubber.literal_only().text(edit.new_text) for edit in edits},
        parent=start.parent,
        rationale="\n\n".join(rationales),
        evidence=evidence,
        proposer=name,
        source="evolve",
    )
    session.remember(candidate)
    return candidate


def check_failure(config: Config, start: Draw, answer: ProposedEdit) -> str:
    """The first failing harness check on the edited component ("" when none fails)."""
    current = dict(start.parts)[answer.component]
    checks = check_files([FileVersion.from_text(answer.component, current, answer.new_text)], config.checks)
    # As the gate: a failure the current text already has (the ratchet) does not stop an edit.
    failures = [f"{f.rule}: {f.message}" for f in checks.findings if f.blocks]
    return failures[0] if failures else ""


def minibatch_test(session: Session, start: Draw, answer: ProposedEdit, candidate: Proposal) -> Steps:
    """GEPA's acceptance test: the candidate must be strictly better than its parent on
    the same minibatch; otherwise it is archived as rejected."""
    after = session.evaluate(candidate.commit, "train", start.batch)
    before = start.parent_score
    tested = Ending(
        draw=start, outcome="not-better", reason="", answer=answer, candidate=candidate, candidate_score=after
    )
    yield tested
    if after is None or before is None or after <= before:
        detail = f"minibatch {_mean(before)} -> {_mean(after)}: not better"
        session.reject(candidate, detail)
        yield replace(tested, reason=detail)
        return
    yield from select(session, start, tested)


def _mean(value: float | None) -> str:
    return EMPTY if value is None else f"{value:.3f}"


def select(session: Session, start: Draw, tested: Ending) -> Steps:
    """A minibatch winner (``tested``): scored on the whole selection split, made a
    frontier member, and gated when the policy's test of this look passes (`judge`),
    unless it builds on a candidate that passed the gate against this base (at most one
    of a chain is gated)."""
    assert tested.candidate is not None
    candidate = onto_base(session, tested.candidate)
    yield (tested := replace(tested, candidate=candidate))
    stopped = screen(session, session.base_commit(), candidate.commit)
    yield (tested := replace(tested, judged=True))
    if stopped:
        session.reject(candidate, stopped)
        yield replace(tested, reason=stopped)
        return
    selection = session.evaluate(candidate.commit, "selection", session.selection)
    session.view = None  # the pool has a new member
    view = update_frontier(session.store, session.config, session.frontier())
    for cid in view.retired:
        session.moved(cid, "archived", view.members[cid].commit)
    kept = replace(tested, outcome="not-gated", selection_mean=selection)
    blocked = gated_before(session, candidate.commit)
    if blocked:
        yield replace(kept, reason=blocked)
        return
    verdict = verdict_on(session, start.tip, candidate.commit)
    if not verdict.gate:
        yield replace(kept, reason=verdict.reason)
        return
    yield from _gate_steps(session, kept, verdict.reason)


def _gate_steps(session: Session, kept: Ending, note: str) -> Steps:
    """Carry the kept candidate onto the base's tip if it does not descend from it
    (then score the copy on the selection split), and gate it (or merge it)."""
    candidate = kept.candidate
    assert candidate is not None
    try:
        gated = carry(session, candidate)
        if gated is not candidate:
            yield replace(kept, candidate=gated, judged=False)
            judge_carried(session, gated)
            yield replace(kept, candidate=gated)
        outcome, reason = gate(session, candidate, gated, note=note)
    except ProposalError as exc:  # the edit cannot be carried onto the moved base
        yield replace(kept, **not_carried(session, exc))
        return
    if outcome == "gate-passed":  # its descendants are not gated (`passed_before`)
        session.passed.update({candidate.commit: candidate.candidate, gated.commit: gated.candidate})
    yield replace(kept, outcome=outcome, reason="; ".join(filter(None, [note, reason])), candidate=gated)
