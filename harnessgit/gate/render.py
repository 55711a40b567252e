"""How gate decisions, merges, the frontier and verify reports look as text (their
``--json`` is `harnessgit.render.to_json` of the result)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harnessgit.records import GateRecord
from harnessgit.render import chance_text, listing, plural, points, short, table

# Named for type checking only: `gate` printing its outcome should not import merge,
# verify and the frontier (and through them the candidates' history) (issue 17).
if TYPE_CHECKING:
    from harnessgit.gate.frontier import FrontierView
    from harnessgit.gate.merge import MergeResult
    from harnessgit.gate.outcome import GateOutcome
    from harnessgit.gate.verify import VerifyReport


def verdict_lines(r: GateRecord, base: str | None = None) -> list[str]:
    """What a verdict states in plain words (records from before three verdicts
    carry none of it: nothing is said for them)."""
    base = base or r.base_branch
    lines = []
    if r.chance_better is not None and r.expected_loss is not None:
        lines.append(
            f"  chance the edit is better than {base}: {chance_text(r.chance_better)}; "
            f"expected loss if merged anyway: {r.expected_loss * 100:.1f} points"
        )
    if r.corrected is not None and r.difference is not None:
        lines.append(
            f"  gain corrected for selection: {points(r.corrected)} points (observed {points(r.difference)}; "
            f"prior from {_prior_from(r)})"
        )
    if r.shown_verdict == "inconclusive" and r.difference is not None:
        lines.append("  what would decide: " + decide_sentence(r))
    return lines


def _prior_from(r: GateRecord) -> str:
    if r.prior_gains is not None:  # evolve's: every look it screened (issue 25)
        return plural(r.prior_looks or 0, "look") + " screened by evolve"
    return plural(r.prior_looks or 0, "earlier gate record")


def decide_sentence(r: GateRecord) -> str:
    """For an inconclusive verdict: how many selection instances would decide."""
    if r.needed is None:
        return "nothing the selection split can give: the observed gain sits on min_effect or nothing varied"
    towards = "pass" if (r.difference or 0.0) > r.min_effect else "fail"
    level = (
        f"q = {r.q:g}"
        if r.policy == "bayes"
        else (f"alpha_{r.attempt} = {r.alpha_k:.2g}" if towards == "pass" else f"alpha = {r.alpha:g}")
    )
    more = "" if r.needed > r.n else " (about as many as now: fresh instances or repeats would settle it)"
    return (
        f"about {r.needed} selection instances (now {r.n}) to {towards} with 80% power if the true gain "
        f"is the observed {points(r.difference)} points, at {level}{more}"
    )


def _online(r: GateRecord) -> str:
    if r.e_value is None or r.level is None:
        return ""
    return (
        f"; e-value {r.e_value:.3g} (passes at {1 / r.level:.3g}: {plural(r.passed_before or 0, 'pass')} "
        f"before on this set), e-value against a gain {r.e_fail:.3g}"
    )


def pool_line(r: GateRecord) -> str:
    """With a selection pool: the sample, whether the gate read the pool on, and where it stopped."""
    if r.sample is None or r.selection_size is None:
        return ""
    if r.pool_batch is None:
        left = "no pool left to read" if r.sample >= r.selection_size else "not extended"
        return (
            f"  sample: the first {r.sample} of {r.selection_size} selection instances, "
            f"{r.sample_verdict} there ({left})"
        )
    if r.shown_verdict == "inconclusive":
        stop = "the pool spent without settling"
    else:
        which, value, at = (
            ("gain", r.pool_e_value, 1 / (r.pool_level or 1))
            if r.shown_verdict == "pass"
            else ("no-gain", r.pool_e_fail, 1 / r.alpha)
        )
        stop = f"settled by the {which} e-value {value or 0:.3g} (threshold {at:.3g})"
    return (
        f"  extended: inconclusive on the sample of {r.sample}, the gate read the pool on {r.pool_batch} "
        f"at a time: {r.n} of {r.selection_size} selection instances read, stopped with {stop}"
    )


def gate_text(outcome: GateOutcome) -> str:
    r = outcome.record
    label = r.candidate or short(r.commit)
    verdict = r.shown_verdict.upper()
    lines = [f"gate: {verdict}  {label} against {r.base_branch} ({short(r.base)}) on the selection split"]
    lines += verdict_lines(r)
    if r.difference is not None:
        lines += [
            f"  n = {r.n} instances, model {r.model}, method {r.method}",
            pool_line(r),
            f"  base {points(r.base_mean, False)}  candidate {points(r.candidate_mean, False)}  "
            f"difference {points(r.difference)} points, 95% CI [{points(r.ci_low)}, {points(r.ci_high)}]",
            f"  one-sided lower bound {points(r.lower_bound)} at alpha_{r.attempt} = {r.alpha_k:.3g} "
            f"(must clear {points(r.min_effect)}), p = {r.p_value:.3g}"
            if r.p_value is not None
            else "",
            f"  wins/losses/ties {r.wins}/{r.losses}/{r.ties}",
            f"  attempt {r.attempt} on this selection set; alpha spent {r.alpha_spent:.4f} of {r.alpha}"
            if r.policy == "strict"
            else f"  attempt {r.attempt}; policy {r.policy}, q = {r.q:g}" + _online(r),
        ]
        if outcome.decision is not None:
            lines.append(f"  {outcome.decision.detectable}")
        if r.regressed:
            more = (
                f" and {r.regressed_count - len(r.regressed)} more"
                if r.regressed_count > len(r.regressed)
                else ""
            )
            lines.append(f"  regressed: {', '.join(r.regressed)}{more}")
    for m in r.models or []:
        if m.difference is None:
            lines.append(f"  model {m.model}: not evaluated on both sides")
            continue
        verdict = "significant loss" if m.loss else "no significant loss"
        lines.append(
            f"  model {m.model}: base {points(m.base_mean, False)}  "
            f"candidate {points(m.candidate_mean, False)}  "
            f"difference {points(m.difference)}, 95% CI [{points(m.ci_low)}, {points(m.ci_high)}], "
            f"p(loss) = {m.p_value:.3g}, Holm level {m.level:.3g}: {verdict}"
        )
    lines.append(
        f"  checks: {outcome.checks.count('failure')} failures, {outcome.checks.count('warning')} warnings"
    )
    if r.reasons:
        lines.append("  not passed because:")
        lines += [f"  - {reason}" for reason in r.reasons]
    return "\n".join(line for line in lines if line)


def merge_text(result: MergeResult) -> str:
    if result.finished is not None:  # a rerun after a kill: nothing gated, only the checkout
        from harnessgit.gate.checkout import finished_line

        return finished_line(result.finished)
    parts = []
    if result.outcome is not None:
        parts.append(gate_text(result.outcome))
    if result.merge:
        where = " (working tree updated)" if result.worktree_updated else ""
        parts.append(f"merged into {result.branch} as {short(result.merge)}{where}")
    else:
        parts.append(f"not merged: {result.branch} is unchanged")
    return "\n".join(parts)


def frontier_text(view: FrontierView) -> str:
    rows = sorted(view.frontier.rows, key=lambda row: (-row.mean, row.candidate))
    body = [
        [row.candidate, row.parent or "-", f"{row.mean:.3f}", row.instances_led, row.weight] for row in rows
    ]
    fronts = len(view.frontier.fronts)
    kind = view.frontier_type
    what = f"{fronts} instances" if kind == "instance" else f"{fronts} fronts, frontier type {kind}"
    lines = [
        f"frontier on the selection split ({what}, base {view.base})",
        table(body, ["candidate", "parent", "mean", f"{'instances' if kind == 'instance' else 'fronts'} led",
                     "sampling weight"]),
    ]  # fmt: skip
    on = set(view.frontier.members)
    # The base branch is in the pool as the reference, never a candidate to retire:
    # `--update` leaves it alone, so it is not listed with the candidates it would retire.
    # Only live branches: the archived ones and earlier base tips count in the pool but
    # are nothing `--update` could retire.
    off = [
        cid
        for cid, member in view.members.items()
        if cid not in on and cid != view.base and member.state == "live"
    ]
    if off:
        lines.append(f"not on the frontier: {', '.join(off)}")
    if view.base not in on:
        lines.append(f"{view.base} (the base) ties or trails a frontier candidate on every instance")
    if view.waiting:
        lines.append(f"not evaluated on the whole selection split yet: {', '.join(view.waiting)}")
    if view.incomparable:
        lines.append(
            f"not comparable (their evaluator files or model differ from {view.base}'s; propose the edit "
            f"again on {view.base} to compare): {', '.join(view.incomparable)}"
        )
    if view.retired:
        lines.append(f"retired to the archive: {', '.join(view.retired)}")
    return "\n".join(lines)


def verify_text(report: VerifyReport) -> str:
    lines = [
        f"{report.branch}: {len(report.checked)} commits after {short(report.start)} (which added "
        f"harnessgit.toml): {plural(report.gated, 'gated merge')}, "
        f"{plural(len(report.overrides), 'recorded override')}, "
        f"{plural(len(report.infrastructure), 'infrastructure commit')}"
    ]
    for entry in report.infrastructure:
        lines.append(f"  infrastructure {short(entry.commit)}: {listing(entry.files) or 'no files'}")
    beside = [path for entry in report.infrastructure for path in entry.beside]
    if beside:
        lines.append(
            f"  note: {listing(beside)} changed beside a harness file, outside [harness] paths: "
            "if the agent reads them, add them there, so that their edits go through the gate"
        )
    for override in report.overrides:
        lines.append(
            f"  override {short(override.commit)} ({override.action}) by {override.author}: {override.reason}"
        )
    for peek in report.test_peeks:
        forced = " (forced)" if peek.forced else ""
        lines.append(f"  test-split peek at {short(peek.commit)}: mean {peek.mean:.3f} on {peek.n}{forced}")
    for shared in report.shared_attempts:
        lines.append(f"  shared attempt {shared.attempt}: {shared.explanation}")
    for finding in report.findings:
        lines.append(f"  problem at {short(finding.commit)}: {finding.problem}")
    verdict = "verify: OK" if report.ok else f"verify: {plural(len(report.findings), 'problem')}"
    if report.shared_attempts:
        shared_count = plural(len(report.shared_attempts), "shared attempt")
        verdict += f" ({shared_count}: the gate's guarantee is weaker)"
    lines.append(verdict)
    return "\n".join(lines)
