"""The ``kind = "python"`` proposer: a function called in harnessgit's own process.

It receives the command proposer's request as a dict (the JSON object a command reads
on stdin) and returns the command proposer's reply as a dict; the reply is checked by
the same code (`command.read_answer`, `command.settle_answer`), so the two kinds accept
exactly the same answers and reject the same proposals. No process start per
proposal (86 ms per iteration in issue 13's measurement).

An exception or a reply that is not such a dict means the function is broken:
`ProposerFailed`, one line naming the function. A well-formed reply whose edit does
not apply is a `RejectedProposal`, as for a command.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harnessgit.config.proposer import PythonProposerSection
from harnessgit.errors import HarnessgitError, ProposerFailed
from harnessgit.processes.functions import describe, load_function
from harnessgit.proposers.command import read_answer, settle_answer
from harnessgit.proposers.protocol import ProposalRequest, ProposedEdit, RejectedProposal


class PythonProposer:
    def __init__(
        self, section: PythonProposerSection, *, root: Path, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.spec = section.function
        self.name = f"python:{self.spec}"
        self._root = root
        self._clock = clock
        self._function: Callable[[dict[str, Any]], Any] | None = None

    def propose(self, request: ProposalRequest) -> ProposedEdit | RejectedProposal:
        function = self._load()
        started = self._clock()
        try:
            reply = function(request.model_dump(mode="json"))
        except Exception as exc:  # the user's code: any failure means it cannot answer
            raise ProposerFailed(f"the proposer function {self.spec} raised {describe(exc)}") from None
        latency = max(0.0, self._clock() - started)

        def broken(problem: str) -> ProposerFailed:
            return ProposerFailed(f"the proposer function {self.spec} {problem}")

        if not isinstance(reply, dict):
            raise broken(f"returned {type(reply).__name__}, not a dict")
        try:
            # Kept as the proposal's evidence, as a command's stdout is.
            raw = json.dumps(reply, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise broken(f"returned a reply that cannot be written as JSON ({describe(exc)})") from None
        answer = read_answer(json.loads(raw), broken, "returned")
        return settle_answer(request, answer, self.name, raw, latency)

    def _load(self) -> Callable[[dict[str, Any]], Any]:
        if self._function is None:
            try:
                self._function = load_function(self._root, self.spec, "proposer")
            except HarnessgitError as exc:
                raise ProposerFailed(str(exc)) from None
        return self._function
