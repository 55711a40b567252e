"""How `harnessgit import gepa` reads on a terminal (``--json`` is the result itself)."""

from __future__ import annotations

from harnessgit.integrations.gepa.importer import GepaImport
from harnessgit.render import plural, short, table


def render_import(result: GepaImport) -> str:
    """What was imported, program by program, and what the run directory did not keep."""
    new = sum(1 for p in result.programs if p.new)
    read = "gepa_state.bin" if result.source == "pickle" else "candidates.json and run_log.json"
    lines = [
        f"imported GEPA run {result.run_dir} ({read}): "
        f"{plural(len(result.programs), 'program')}, {plural(new, 'new candidate')}, "
        f"{plural(result.scores_written, 'new score')}"
    ]
    rows = []
    for program in result.programs:
        came = "seed" if not program.parents else " + ".join(str(p) for p in program.parents)
        where = program.candidate or f"{short(program.commit)} (a commit of the base)"
        mean = "-" if program.mean is None else f"{program.mean:.3f}"
        rows.append([program.program, came, where, mean, "new" if program.new else "on record"])
    lines.append(table(rows, ["program", "from", "candidate", "valset mean", "import"]))
    if result.front:
        lines.append(
            "programs best on at least one valset example (GEPA's per-example fronts, not its "
            f"Pareto front; `harnessgit frontier` gives that): {', '.join(str(p) for p in result.front)}"
        )
    if result.fingerprint is not None:
        if result.scores_as == "evaluator":
            lines.append(
                f"scores recorded as [evaluator]'s ({short(result.fingerprint)}, model {result.model})"
            )
        else:
            lines.append(
                f"scores recorded under the import's own fingerprint {short(result.fingerprint)} "
                f"(model {result.model}): they compare with this run's only; --same-evaluator when "
                "GEPA ran the adapter [evaluator] names"
            )
    lines += [f"note: {note}" for note in result.notes]
    lines.append(
        f"not kept by the run directory, so not imported ({plural(result.rejected, 'rejected proposal')}): "
        + "; ".join(result.not_kept)
    )
    return "\n".join(lines)
