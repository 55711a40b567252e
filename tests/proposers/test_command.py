"""The command proposer, run for real with small Python scripts as the command."""

from __future__ import annotations

import json
import shlex
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit.config.proposer import CommandProposerSection
from harnessgit.errors import ConfigError, ProposerFailed
from harnessgit.proposers.command import CommandProposer
from harnessgit.proposers.protocol import ProposalRequest, ProposedEdit, ReflectiveExample, RejectedProposal
from tests.conftest import ended, kill

TEMPLATE = Path(__file__).resolve().parents[2] / "templates" / "proposers" / "append_feedback.py"
SKILL = "# Demo\n\n1. Read the task.\n2. Answer it.\n"
REQUEST = ProposalRequest(
    component="SKILL.md",
    current_text=SKILL,
    examples=[
        ReflectiveExample(
            instance="q1", inputs={"q": "2+2"}, outputs="5", feedback="Check arithmetic.", score=0.0
        ),
        ReflectiveExample(instance="q2", inputs={"q": "3+3"}, outputs="6", feedback="Correct.", score=1.0),
    ],
)


def script(tmp_path: Path, body: str, name: str = "proposer.py") -> list[str]:
    path = tmp_path / name
    path.write_text("import json, sys, time\n" + textwrap.dedent(body))
    return [sys.executable, str(path)]


def proposer(argv: list[str], timeout: float = 30.0, cwd: Path | None = None) -> CommandProposer:
    return CommandProposer(CommandProposerSection(command=argv, timeout=timeout), cwd=cwd)


def failure(argv: list[str], timeout: float = 30.0) -> str:
    with pytest.raises(ProposerFailed) as info:
        proposer(argv, timeout).propose(REQUEST)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_full_text_from_the_request_on_stdin(tmp_path: Path) -> None:
    argv = script(
        tmp_path,
        """
        request = json.load(sys.stdin)
        text = request["current_text"] + "3. Check: " + request["examples"][0]["feedback"] + "\\n"
        json.dump({"text": text, "rationale": json.dumps(request),
                   "usage": {"model": "m", "prompt_tokens": 7, "completion_tokens": 3, "cost_usd": 0.01}},
                  sys.stdout)
        """,
    )
    outcome = proposer(argv).propose(REQUEST)
    assert isinstance(outcome, ProposedEdit)
    assert outcome.new_text == SKILL + "3. Check: Check arithmetic.\n"
    assert outcome.operations is None
    # The command received the whole request, as the protocol says.
    assert ProposalRequest.model_validate_json(outcome.rationale) == REQUEST
    assert outcome.usage.model == "m" and outcome.usage.cost_usd == 0.01
    assert (outcome.usage.prompt_tokens, outcome.usage.completion_tokens, outcome.usage.retries) == (7, 3, 0)
    assert outcome.proposer.startswith("command:") and "proposer.py" in outcome.proposer
    assert '"text"' in outcome.raw_output


def test_operations(tmp_path: Path) -> None:
    argv = script(
        tmp_path,
        """
        json.dump({"operations": [
            {"op": "insert_after", "anchor": "2. Answer it.", "text": "3. Re-check the sum."},
            {"op": "replace", "old": "Read", "new": "Read carefully"}]}, sys.stdout)
        """,
    )
    outcome = proposer(argv).propose(REQUEST)
    assert isinstance(outcome, ProposedEdit)
    assert outcome.new_text == "# Demo\n\n1. Read carefully the task.\n2. Answer it.\n3. Re-check the sum.\n"
    assert outcome.operations is not None and [op.op for op in outcome.operations] == [
        "insert_after",
        "replace",
    ]


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        ('{"operations": [{"op": "delete", "old": "not there"}]}', "anchor_not_found"),
        ('{"operations": [{"op": "prepend", "text": "x"}]}', "invalid_operations"),
        ('{"operations": []}', "invalid_operations"),
        ('{"text": ""}', "empty"),
        ('{"text": "# Demo\\n\\n1. Read the task.\\n2. Answer it."}', "unchanged"),
    ],
)
def test_a_bad_proposal_in_a_good_envelope_is_rejected(tmp_path: Path, answer: str, code: str) -> None:
    argv = script(tmp_path, f"sys.stdout.write({answer!r})\n")
    outcome = proposer(argv).propose(REQUEST)
    assert isinstance(outcome, RejectedProposal)
    assert outcome.code == code and outcome.raw_output == answer


def test_the_template_proposer(tmp_path: Path) -> None:
    outcome = proposer([sys.executable, str(TEMPLATE)]).propose(REQUEST)
    assert isinstance(outcome, ProposedEdit)
    # Only the failed example's feedback is copied, once, under the heading.
    assert outcome.new_text == SKILL + "\n## Lessons from failed tasks\n\n- Check arithmetic.\n"
    replaced = proposer([sys.executable, str(TEMPLATE)]).propose(
        REQUEST.model_copy(update={"current_text": outcome.new_text, "form": "replace"})
    )
    assert isinstance(replaced, RejectedProposal) and replaced.code == "invalid_operations"


def test_the_template_proposer_in_replace_form() -> None:
    outcome = proposer([sys.executable, str(TEMPLATE)]).propose(
        REQUEST.model_copy(update={"form": "replace"})
    )
    assert isinstance(outcome, ProposedEdit)
    assert outcome.new_text == SKILL + "\n## Lessons from failed tasks\n\n- Check arithmetic.\n"


def test_bad_json_names_the_command_and_its_stderr(tmp_path: Path) -> None:
    argv = script(tmp_path, 'sys.stderr.write("thinking...\\n"); print("Here is my edit: {")\n')
    message = failure(argv)
    assert "proposer.py" in message and "did not print one JSON object" in message
    assert "(Expecting value at line 1 column 1): 'Here is my edit: {'" in message  # the line, quoted
    assert "stderr: thinking..." in message


def test_bad_json_shows_the_offending_line_of_stdout(tmp_path: Path) -> None:
    long_line = "Loading model weights " + "." * 5000
    argv = script(tmp_path, f'print(\'{{"text": "a"}}\'); print({long_line!r})\n')
    message = failure(argv)
    # Line 2 is where the JSON went wrong; its first 80 characters, control characters escaped.
    assert "(Extra data at line 2 column 1): 'Loading model weights " + "." * 58 + "'..." in message
    assert failure(script(tmp_path, "print('\\x1b[31mno\\tJSON')\n")).endswith(r"'\x1b[31mno\tJSON'")


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("", "printed nothing"),
        ("[1, 2]", "printed JSON list, not an object: '[1, 2]'"),
        ('{"text": "a", "operations": []}', 'either "text" or "operations"'),
        ("{}", 'either "text" or "operations"'),
        ('{"txt": "a"}', "txt: unknown key"),
        ('{"text": 3}', "text: Input should be a valid string"),
    ],
)
def test_a_broken_envelope_is_an_error(tmp_path: Path, answer: str, message: str) -> None:
    assert message in failure(script(tmp_path, f"sys.stdout.write({answer!r})\n"))


def test_non_zero_exit_shows_the_last_stderr_lines(tmp_path: Path) -> None:
    argv = script(
        tmp_path,
        """
        for number in range(1, 9):
            sys.stderr.write(f"line {number}\\n")
        sys.exit(4)
        """,
    )
    message = failure(argv)
    assert "exit status 4" in message and "proposer.py" in message
    assert "line 4 | line 5 | line 6 | line 7 | line 8" in message and "line 3" not in message


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_timeout_kills_the_command_and_what_it_started(tmp_path: Path) -> None:
    # The grandchild inherits stdout and would keep the pipe open for 60 s if
    # only the direct child were killed.
    argv = script(
        tmp_path,
        """
        import subprocess
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        sys.stderr.write("calling the model\\n"); sys.stderr.flush()
        time.sleep(60)
        """,
    )
    message = failure(argv, timeout=1.0)
    assert "gave no answer within 1 s" in message and "stderr: calling the model" in message


def test_missing_executable(tmp_path: Path) -> None:
    assert "cannot run the proposer command" in failure([str(tmp_path / "no-such-proposer")])


def test_runs_in_cwd_without_a_shell(tmp_path: Path) -> None:
    # A relative script path resolves in cwd (the repository root), and shell
    # syntax in an argument is passed through literally.
    script(tmp_path, 'json.dump({"text": sys.argv[1] + "\\n"}, sys.stdout)\n', name="rel.py")
    outcome = proposer([sys.executable, "rel.py", "$HOME; echo hi"], cwd=tmp_path).propose(REQUEST)
    assert isinstance(outcome, ProposedEdit) and outcome.new_text == "$HOME; echo hi\n"


def test_no_command_configured() -> None:
    with pytest.raises(ConfigError, match=r"\[proposer\] command"):
        CommandProposer(CommandProposerSection())


def _in_a_thread(call: Callable[[], object], within: float = 10.0) -> object:
    """``call()``'s result or exception; a test failure when it has not returned
    ``within`` seconds (the old code waited for the daemon: 30 s)."""
    box: list[object] = []

    def run() -> None:
        try:
            box.append(call())
        except BaseException as exc:  # handed to the test
            box.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(within)
    assert not thread.is_alive(), f"still waiting after {within} s"
    return box[0]


def _daemon_lines(tmp_path: Path) -> str:
    """A proposer's first lines: start a daemon in a session of its own that holds the
    command's stdout and stderr for 30 s."""
    pidfile = tmp_path / "daemon.pid"
    return (
        "import subprocess\n"
        "argv = [sys.executable, '-c', 'import time; time.sleep(30)']\n"
        "daemon = subprocess.Popen(argv, start_new_session=True)\n"
        f"open({str(pidfile)!r}, 'w').write(str(daemon.pid))\n"
    )


def _daemon_ended(tmp_path: Path, within: float) -> bool:
    """Whether the daemon ends within ``within`` seconds; it is killed either way, so
    that no test leaves it behind."""
    pid = int((tmp_path / "daemon.pid").read_text())
    try:
        return ended(pid, within)
    finally:
        kill(pid)


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finds escaped processes in /proc")
def test_an_answer_is_not_held_by_a_process_that_left_the_group(tmp_path: Path) -> None:
    # Issue 15, defect 5: communicate() read stdout until the daemon closed it.
    argv = script(tmp_path, _daemon_lines(tmp_path) + 'json.dump({"text": "# New\\n"}, sys.stdout)\n')
    try:
        outcome = _in_a_thread(lambda: proposer(argv, timeout=5.0).propose(REQUEST))
        assert isinstance(outcome, ProposedEdit) and outcome.new_text == "# New\n"
        assert _daemon_ended(tmp_path, within=5.0), "the daemon outlived the proposal"
    finally:
        _daemon_ended(tmp_path, within=0)


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_timeout_is_not_held_by_a_process_that_left_the_group(tmp_path: Path) -> None:
    # After the timeout, the old code killed the group and then waited for EOF again,
    # without a timeout: for as long as the daemon lived.
    argv = script(tmp_path, _daemon_lines(tmp_path) + "time.sleep(60)\n")
    try:
        outcome = _in_a_thread(lambda: proposer(argv, timeout=1.0).propose(REQUEST))
        assert isinstance(outcome, ProposerFailed) and "gave no answer within 1 s" in str(outcome)
    finally:
        _daemon_ended(tmp_path, within=0)


def test_an_answer_past_max_output_bytes_is_an_error(tmp_path: Path) -> None:
    # Issue 15, defect 6: the reply was read whole, however large.
    argv = script(tmp_path, 'json.dump({"text": "x" * (2 * 1024 * 1024)}, sys.stdout)\n')
    section = CommandProposerSection(command=argv, timeout=30.0, max_output_bytes=1024 * 1024)
    with pytest.raises(ProposerFailed) as info:
        CommandProposer(section).propose(REQUEST)
    assert str(info.value) == (
        f"the proposer command {shlex.join(argv)} printed more than 1.0 MiB on standard output "
        "(max_output_bytes)"
    )


def test_the_command_gets_an_allow_listed_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 15, "Secrets": the proposer saw harnessgit's whole environment, and its
    # rationale is recorded.
    monkeypatch.setenv("LEAKY_TOKEN", "tok-live-123")
    monkeypatch.setenv("MODEL_KEY", "sk-model")
    argv = script(
        tmp_path,
        'import os\njson.dump({"text": "# New\\n", "rationale": json.dumps(dict(os.environ))}, sys.stdout)\n',
    )
    section = CommandProposerSection(command=argv, timeout=30.0, env=["MODEL_KEY"])
    outcome = CommandProposer(section).propose(REQUEST)
    assert isinstance(outcome, ProposedEdit)
    env = json.loads(outcome.rationale)
    assert "LEAKY_TOKEN" not in env and env["MODEL_KEY"] == "sk-model" and "PATH" in env
