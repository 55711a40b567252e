"""One batch of a command evaluator, run in a directory holding the evaluated tree.

Everything a batch needs is data (`CommandJob`: the argv, the names of the variables
it may see, the instances, the limits), never a path on harnessgit's disk: the same
code runs it in a thread beside harnessgit (`batches`) and in a Ray task on another
machine (`ray_executor`), each in a scratch directory of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harnessgit.evaluation.batch import BatchOutput, Running, run_batch
from harnessgit.processes.environment import child_environment
from harnessgit.processes.pipes import Limits

if TYPE_CHECKING:  # not on a Ray worker, which needs neither git nor the configuration
    from harnessgit.config.sections import EvaluatorSection
    from harnessgit.evaluation.context import EvalContext


@dataclass(frozen=True)
class CommandJob:
    argv: list[str]
    # The variables [evaluator] env names, with harnessgit's values: they follow the job
    # to a Ray node, where PATH, HOME and the other defaults are the node's own.
    variables: dict[str, str]
    split: str
    commit: str
    model: str
    repeat: int
    instances: list[str]
    limits: Limits


def command_job(
    section: EvaluatorSection, split: str, context: EvalContext, batch: list[tuple[str, int]]
) -> CommandJob:
    """The job of one batch (one repeat each) of ``context``'s evaluation."""
    assert section.command
    return CommandJob(
        argv=list(section.command),
        variables=passed_variables(section.env),
        split=split,
        commit=context.commit,
        model=context.key.model,
        repeat=batch[0][1],
        instances=[instance for instance, _repeat in batch],
        limits=Limits(
            timeout=section.timeout,
            max_stdout=section.max_output_bytes,
            max_line=section.max_line_bytes,
            max_stderr=section.max_stderr_bytes,
        ),
    )


def passed_variables(names: list[str]) -> dict[str, str]:
    """This process's variables that ``names`` (names or globs) name, besides the
    defaults every evaluator gets (`environment.DEFAULT_NAMES`)."""
    defaults = child_environment()
    return {name: value for name, value in child_environment(names).items() if name not in defaults}


def run_command(
    job: CommandJob,
    tree_dir: Path,
    scratch: Path,
    *,
    running: Running,
    on_stderr: Callable[[str], None] | None,
) -> BatchOutput:
    """Run ``job`` in ``tree_dir`` (a fresh copy of the evaluated tree), its instances
    file in ``scratch``; `EvaluatorError` on any problem (`batch.run_batch`)."""
    instances_file = scratch / "instances.txt"
    instances_file.write_text("".join(f"{instance}\n" for instance in job.instances), encoding="utf-8")
    # An allow-list, not this process's environment: what the evaluator sees can end
    # up in trajectories pushed with the notes (issue 15).
    env = child_environment(
        (),
        {
            **job.variables,
            "HARNESSGIT_HARNESS_DIR": str(tree_dir),
            "HARNESSGIT_SPLIT": job.split,
            "HARNESSGIT_COMMIT": job.commit,
            "HARNESSGIT_INSTANCES_FILE": str(instances_file),
            "HARNESSGIT_REPEAT": str(job.repeat),
            "HARNESSGIT_MODEL": job.model,
        },
    )
    return run_batch(
        job.argv, tree_dir, env, job.instances, limits=job.limits, running=running, on_stderr=on_stderr
    )
