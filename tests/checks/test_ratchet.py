"""The ratchet (issue 14): in change mode a failure the file already had is reported
as existing and does not block; one the change brings or makes worse does."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit.checkconfig.sections import ChecksSection
from harnessgit.checks import FileVersion, check_change, check_files
from harnessgit.checks.ratchet import ratchet
from harnessgit.config import load_config
from harnessgit.evaluation.eval import with_batches
from harnessgit.store import Store
from tests.cli.runner import run
from tests.conftest import git, write

BATCHES = with_batches()  # the runner the gate takes from its caller

FRONT = "---\nname: demo\ndescription: A demo skill.\n---\n"


def long_skill(lines: int, link: str = "http://example.com/old") -> str:
    """A skill whose body is ``lines`` distinct lines (over the 500-line limit)."""
    body = [f"{i}. Step number {i} of the procedure, see the guide." for i in range(lines - 1)]
    return FRONT + "\n".join([f"See [the guide]({link}).", *body]) + "\n"


@pytest.fixture
def messy(make_repo: Callable[..., Path]) -> Path:
    # The shape: a 675-line file that already breaks the length limit.
    return make_repo({"skills/demo/SKILL.md": long_skill(675)})


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_one_line_link_fix_in_a_file_already_too_long_passes(messy: Path) -> None:
    # On main: exit 1 ("body is 675 lines, over the skill limit of 500").
    write(messy, "skills/demo/SKILL.md", long_skill(675, "https://example.com/new"))
    git(messy, "add", "-A")
    staged = run(messy, "check", "--staged")
    assert staged.exit_code == 0, staged.output
    assert "existing" in staged.output and "body is 675 lines" in staged.output
    git(messy, "commit", "-qm", "fix a link")
    assert run(messy, "check", "--rev", "HEAD").exit_code == 0
    assert run(messy, "check", "--against", "HEAD~1").exit_code == 0
    # --all judges every file as it stands: the failure is still there, and blocks.
    assert run(messy, "check", "--all").exit_code == 1


def test_making_an_existing_failure_worse_blocks(messy: Path) -> None:
    # Beyond [checks] over_limit_tolerance (5% of the 500-line limit: 25 lines).
    write(messy, "skills/demo/SKILL.md", long_skill(701))
    git(messy, "add", "-A")
    result = run(messy, "check", "--staged", "--format", "json")
    assert result.exit_code == 1
    assert '"state": "new"' in result.output and '"value": 701' in result.output
    # Within it, a new warning that says why (issue 27).
    write(messy, "skills/demo/SKILL.md", long_skill(680))
    git(messy, "add", "-A")
    result = run(messy, "check", "--staged", "--format", "json")
    assert result.exit_code == 0 and '"level": "warning"' in result.output and '"value": 680' in result.output


def test_the_gate_call_ratchets_too(messy: Path) -> None:
    base = git(messy, "rev-parse", "HEAD").strip()
    write(messy, "skills/demo/SKILL.md", long_skill(675, "https://example.com/new"))
    git(messy, "commit", "-qam", "candidate")
    with Store.discover(messy) as store:
        report = check_change(store, load_config(messy), base, git(messy, "rev-parse", "HEAD").strip())
    assert {(f.rule, f.state) for f in report.findings} == {("length", "existing")}  # lines and tokens
    assert not report.failed


def test_a_renamed_file_keeps_its_history_but_a_new_harness_file_does_not(messy: Path) -> None:
    agents = "\n".join(f"Rule {i}: keep line {i} distinct from the others." for i in range(320)) + "\n"
    write(messy, "docs/AGENTS.md", agents)
    write(messy, "notes/long.md", agents.replace("Rule", "Note"))  # not a harness file
    git(messy, "add", "-A")
    git(messy, "commit", "-qm", "more")
    (messy / "team").mkdir()
    git(messy, "mv", "docs/AGENTS.md", "team/AGENTS.md")  # still an agents file: its failure is old
    git(messy, "mv", "notes/long.md", "AGENTS.md")  # now under the agents limit: brought by the change
    result = run(messy, "check", "--staged", "--format", "json")
    assert result.exit_code == 1, result.output

    states = {f["path"]: f["state"] for f in json.loads(result.output)["findings"]}
    assert states == {"team/AGENTS.md": "existing", "AGENTS.md": "new"}


def test_format_verdicts_pair_by_kind_and_moved_fences_stay_existing() -> None:
    unclosed = "# T\n\n```sh\necho hi\n"
    moved = "# T\n\nA new first paragraph.\n\n```sh\necho hi\n"
    report = check_files([FileVersion.from_text("prompts/a.md", unclosed, moved)], ChecksSection())
    assert [(f.rule, f.state) for f in report.findings] == [("format", "existing")]
    fixed_but_new = "# T\n\n```sh\necho hi\n```\n\n~~~\nnew cut\n"
    report = check_files([FileVersion.from_text("prompts/a.md", unclosed, fixed_but_new)], ChecksSection())
    assert [f.state for f in report.findings] == ["existing"]  # one unclosed fence before, one after
    two = "# T\n\n```sh\necho hi\n~~~\n"
    report = check_files([FileVersion.from_text("prompts/a.md", "# T\n", two)], ChecksSection())
    assert report.failed and {f.state for f in report.findings} == {"new"}


def test_lower_bounds_get_worse_downwards() -> None:
    from harnessgit.check_findings import Finding

    def share(value: float) -> Finding:
        return Finding("a.md", "format", "failure", "share", value, 0.5, "m", "h")

    assert [f.state for f in ratchet([share(0.3)], [share(0.2)])] == ["existing"]
    assert [f.state for f in ratchet([share(0.1)], [share(0.2)])] == ["new"]
    assert [f.state for f in ratchet([share(0.1)], [])] == ["new"]


def test_the_gate_does_not_refuse_a_candidate_for_its_bases_failure(gate_repo: Path) -> None:
    from harnessgit.candidates.propose import propose
    from harnessgit.errors import GateRefused
    from harnessgit.gate.gate import GateRequest, run_gate
    from tests.gating_fixtures import skill

    # On main: refused, "the harness checks fail on the change (1 failure ...): name 'Demo Skill'".
    bad_name = "name: Demo Skill"
    write(gate_repo, "SKILL.md", skill(10).replace("name: demo", bad_name))
    git(gate_repo, "commit", "-qam", "a bad name, committed without the hook")
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        better = propose(store, config, {"SKILL.md": skill(30).replace("name: demo", bad_name)})
        outcome = run_gate(
            store, config, GateRequest(better.candidate), execution=BATCHES, check=check_change
        )
        assert outcome.passed, outcome.record.reasons
        assert [f.state for f in outcome.checks.findings] == ["existing"]
        # A candidate that brings a failure of its own is still refused.
        worse = propose(
            store,
            config,
            {
                "SKILL.md": skill(30)
                .replace("name: demo", bad_name)
                .replace("description: A demo skill for gate tests.\n", "")
            },
        )
        with pytest.raises(GateRefused, match="the harness checks fail on the change"):
            run_gate(store, config, GateRequest(worse.candidate), execution=BATCHES, check=check_change)


def test_evolve_rejects_an_edit_for_what_it_brings_not_for_what_the_text_had() -> None:
    from harnessgit.config import Config
    from harnessgit.evolve.iteration import check_failure
    from harnessgit.evolve.record import Draw
    from harnessgit.proposers.protocol import ProposedEdit

    # On main: "length: body is 675 lines, ..." rejected every edit to this skill.
    current = long_skill(675)
    start = Draw(
        number=1,
        tip="tip",
        parent="parent",
        parent_name="p",
        component="skills/demo/SKILL.md",
        batch=[],
        current=current,
        examples=[],
        parent_score=None,
    )

    def edit(text: str) -> ProposedEdit:
        return ProposedEdit(component="skills/demo/SKILL.md", new_text=text)

    assert check_failure(Config(), start, edit(long_skill(675, "https://example.com/new"))) == ""
    assert check_failure(Config(), start, edit(long_skill(676))) == ""  # within the tolerance: a warning
    assert check_failure(Config(), start, edit(long_skill(701))).startswith("length: body is 701 lines")


# Duplication is one finding per repeat, its value the repeated text: the ratchet pairs
# those by (rule, measure, value), so which repeat is old and which is new stays right.
CITE = "Always cite the source document and the page number for every figure you quote in the answer."
VERIFY = "Run the full test suite before you report a task as done, and paste the failing output verbatim."


def prose(*paragraphs: str) -> str:
    return "# Guide\n\n" + "\n\n".join(paragraphs) + "\n"


def states(old: str, new: str) -> list[tuple[str, str, str]]:
    report = check_files(
        [FileVersion.from_text("prompts/a.md", old, new)], ChecksSection(), rules=["duplication"]
    )
    return [(f.measure, str(f.value)[:12], f.state) for f in report.findings]


def test_a_repeat_the_file_had_is_existing_after_an_edit_elsewhere() -> None:
    old = prose("Intro.", CITE, "Middle.", CITE)
    assert states(old, prose("A new intro, longer.", CITE, "Middle.", CITE)) == [
        ("repeated passage", "Always cite ", "existing")
    ]


def test_repeated_sections_and_headings_pair_by_their_titles() -> None:
    setup = (
        "## Setup\n\nInstall the tool with pip and check the version it prints before going on.\n\n"
        "```sh\npip install tool\ntool --version\n```\n\n"
    )
    old = "# G\n\n" + setup + "## Notes\n\nOne.\n\n## Notes\n\nTwo.\n\n" + setup
    assert states(old, old.replace("One.", "One, reworded.")) == [
        ("repeated heading", "## Notes", "existing"),
        ("repeated section", "## Setup", "existing"),
    ]
    added = old + "## Usage\n\nRun it.\n\n## Usage\n\nRun it again.\n"
    assert [state for *_rest, state in states(old, added)] == ["existing", "existing", "new"]


def test_a_new_repeat_is_new_even_when_an_old_one_went() -> None:
    old = prose("Intro.", CITE, "Middle.", CITE)
    # On the (rule, measure) pairing this new repeat was "existing": the old file had one
    # repeated passage, so one unmatched passage of the new file was excused.
    swapped = prose("Intro.", CITE, VERIFY, "Middle.", VERIFY)
    assert states(old, swapped) == [("repeated passage", "Run the full", "new")]
    both = prose("Intro.", CITE, VERIFY, "Middle.", CITE, VERIFY)
    assert sorted(states(old, prose("Intro.", CITE, VERIFY, "Middle.", CITE, "End.", VERIFY))) == [
        ("repeated passage", "Always cite ", "existing"),
        ("repeated passage", "Run the full", "new"),
    ]
    assert states(both, both.replace("Intro.", "Intro, reworded.")) == [
        ("repeated passage", "Always cite ", "existing")  # one passage of two sentences
    ]


def test_the_same_repeat_once_more_is_one_new_finding() -> None:
    old = prose(CITE, "Middle.", CITE)
    assert states(old, prose(CITE, "Middle.", CITE, "End.", CITE)) == [
        ("repeated passage", "Always cite ", "existing"),
        ("repeated passage", "Always cite ", "new"),
    ]


def test_duplication_as_a_failure_blocks_only_the_repeat_a_change_brings(
    make_repo: Callable[..., Path],
) -> None:
    # Duplication is a warning by default; a team that makes it a failure must still be
    # able to fix a link in a file that already repeats itself.
    from tests.conftest import CONFIG

    repo = make_repo(
        {"prompts/guide.md": prose("Intro.", CITE, "Middle.", CITE)},
        config=CONFIG + '\n[checks.severity]\nduplication = "failure"\n',
    )
    write(
        repo, "prompts/guide.md", prose("Intro, see [the guide](https://example.com).", CITE, "Middle.", CITE)
    )
    git(repo, "add", "-A")
    result = run(repo, "check", "--staged", "--format", "json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)["findings"]
    assert [(f["rule"], f["level"], f["state"]) for f in found] == [("duplication", "failure", "existing")]
    # The old repeat fixed, a new one pasted in: one repeat before and after, but not the same.
    write(repo, "prompts/guide.md", prose("Intro.", CITE, "Middle.", VERIFY, "End.", VERIFY))
    git(repo, "add", "-A")
    result = run(repo, "check", "--staged", "--format", "json")
    assert result.exit_code == 1, result.output
    found = json.loads(result.output)["findings"]
    assert [(f["value"][:12], f["state"], f["line"]) for f in found] == [("Run the full", "new", 13)]
