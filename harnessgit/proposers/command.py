"""The ``kind = "command"`` proposer: any program that speaks JSON on stdin/stdout.

harnessgit writes the `ProposalRequest` as one JSON object to the command's
stdin and reads one JSON object from its stdout (docs/proposers.md):

    {"text": "<the complete new text>"}                     a replacement, or
    {"operations": [{"op": "append", "text": "..."}, ...]}  delta operations,
    optionally "rationale": "..." and "usage": {"model", "prompt_tokens",
    "completion_tokens", "cost_usd"} for the evidence and cost budgets.

Where the line falls: an envelope that breaks the protocol (exit status not 0,
a timeout, stdout that is not one JSON object of this shape) means the command
is broken and every further call would fail the same way, so it raises
`ProposerFailed` naming the command and the end of its stderr (and quoting the
start of the line where stdout stops being JSON). What is inside a
well-formed envelope is the proposal: operations that do not parse or do not
apply, an empty or unchanged text, are a `RejectedProposal` and the loop goes on.

The command runs without a shell, in its own process group, with an allow-listed
environment (`harnessgit.processes.environment`), and is read with a deadline and a
cap on its answer (`harnessgit.processes.pipes`): a timeout kills whatever it started
too, and a descendant that left the group holding stdout open keeps harnessgit waiting
half a second after the command exits, not until it ends (issue 15).
"""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harnessgit.config.proposer import CommandProposerSection
from harnessgit.errors import ConfigError, ProposerFailed
from harnessgit.processes.environment import child_environment
from harnessgit.processes.pipes import Child, Limits, communicate
from harnessgit.proposers.edits import EditRejected, rejected, settle
from harnessgit.proposers.protocol import ProposalRequest, ProposedEdit, RejectedProposal, Usage
from harnessgit.proposers.reply import validate_operations
from harnessgit.render import quoted_start

STDERR_LINES = 5
_LINE_CHARS = 200


class _ReportedUsage(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str | None = None
    prompt_tokens: int | None = Field(default=None, ge=0)
    completion_tokens: int | None = Field(default=None, ge=0)
    cost_usd: float | None = Field(default=None, ge=0)


class _Answer(BaseModel):
    """The envelope. ``operations`` stays raw JSON here: its content is the proposal."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str | None = None
    operations: list[Any] | None = None
    rationale: str = ""
    usage: _ReportedUsage = Field(default_factory=_ReportedUsage)


class CommandProposer:
    def __init__(
        self,
        section: CommandProposerSection,
        *,
        cwd: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if section.command is None:
            raise ConfigError(
                "no proposer configured: set [proposer] command = [...] (argv) or "
                'kind = "openai" in harnessgit.toml (see docs/proposers.md)'
            )
        self.argv = list(section.command)
        self.timeout = section.timeout
        self.max_output = section.max_output_bytes
        self.env = list(section.env)
        self.cwd = cwd
        self.name = f"command:{shlex.join(self.argv)}"
        self._clock = clock

    def propose(self, request: ProposalRequest) -> ProposedEdit | RejectedProposal:
        started = self._clock()
        stdout, stderr = self._run(request.model_dump_json().encode("utf-8"))
        answer = self._answer(stdout, stderr)
        return settle_answer(
            request, answer, self.name, stdout.decode("utf-8"), max(0.0, self._clock() - started)
        )

    def _run(self, payload: bytes) -> tuple[bytes, list[str]]:
        """Its standard output and last lines of standard error."""
        env = child_environment(self.env)
        try:
            child = Child(self.argv, self.cwd, env)
        except OSError as exc:
            raise ProposerFailed(f"cannot run the proposer command {self._shown()}: {exc.strerror}") from None
        outcome = communicate(child, payload, Limits(timeout=self.timeout, max_stdout=self.max_output))
        stderr = outcome.stderr_tail
        if outcome.end == "timeout":
            raise ProposerFailed(
                f"the proposer command {self._shown()} gave no answer within {self.timeout:g} s"
                f"{_tail(stderr)}"
            )
        if outcome.end == "overflow":
            raise ProposerFailed(
                f"the proposer command {self._shown()} {outcome.problem} (max_output_bytes){_tail(stderr)}"
            )
        if outcome.returncode != 0:
            raise ProposerFailed(
                f"the proposer command {self._shown()} failed with exit status {outcome.returncode}"
                f"{_tail(stderr)}"
            )
        return outcome.stdout, stderr

    def _answer(self, stdout: bytes, stderr: list[str]) -> _Answer:
        def broken(problem: str) -> ProposerFailed:
            return ProposerFailed(f"the proposer command {self._shown()} {problem}{_tail(stderr)}")

        try:
            text = stdout.decode("utf-8")
        except UnicodeDecodeError:
            raise broken("printed bytes that are not UTF-8") from None
        if not text.strip():
            raise broken("printed nothing")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            line = text.split("\n")[exc.lineno - 1]  # where it went wrong: that line, quoted
            where = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
            raise broken(f"did not print one JSON object ({where}): {quoted_start(line)}") from None
        if not isinstance(data, dict):
            raise broken(f"printed JSON {type(data).__name__}, not an object: {quoted_start(text.strip())}")
        return read_answer(data, broken, "printed")

    def _shown(self) -> str:
        return shlex.join(self.argv)


def read_answer(data: dict[str, Any], broken: Callable[[str], ProposerFailed], verb: str) -> _Answer:
    """The envelope in a reply's JSON object; ``broken`` makes the error for a bad one
    from what is wrong with it, said with ``verb`` ("printed", "returned"): the python
    proposer's replies go through here too."""
    try:
        answer = _Answer.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(part) for part in first["loc"])
        message = "unknown key" if first["type"] == "extra_forbidden" else first["msg"]
        raise broken(f"{verb} an answer with {key}: {message}") from None
    if (answer.text is None) == (answer.operations is None):
        raise broken(f'must {verb.removesuffix("ed")} either "text" or "operations" (exactly one of them)')
    return answer


def settle_answer(
    request: ProposalRequest, answer: _Answer, name: str, raw: str, latency: float
) -> ProposedEdit | RejectedProposal:
    """The proposal in a well-formed envelope, applied and checked (`edits.settle`)."""
    reported = answer.usage
    usage = Usage(
        model=reported.model,
        prompt_tokens=reported.prompt_tokens,
        completion_tokens=reported.completion_tokens,
        cost_usd=reported.cost_usd,
        latency_seconds=latency,
    )
    common: dict[str, Any] = {
        "proposer": name,
        "rationale": answer.rationale,
        "raw_output": raw,
        "usage": usage,
    }
    if answer.operations is None:
        return settle(request, text=answer.text, **common)
    try:
        operations = validate_operations(answer.operations)
    except EditRejected as problem:
        return rejected(request, problem, **common)
    return settle(request, operations=operations, **common)


def _tail(stderr: list[str]) -> str:
    """The last lines of stderr, on one line: where a failing command says why."""
    lines = [line.strip() for line in stderr if line.strip()]
    if not lines:
        return ""
    shown = [line if len(line) <= _LINE_CHARS else line[: _LINE_CHARS - 3] + "..." for line in lines]
    return "; stderr: " + " | ".join(shown[-STDERR_LINES:])
