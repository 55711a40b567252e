"""How a calibration looks: the report of `harnessgit calibrate`, and the one line
`gate` and `review` print about the calibration on record (or its absence)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harnessgit.records import CalibrationRecord
from harnessgit.render import EMPTY, rough_points, share, short, table

if TYPE_CHECKING:  # a renderer names its result type only: `gate` prints calibration_line
    from harnessgit.calibrate.calibrate import Calibration


def calibration_text(result: Calibration) -> str:
    noise, passes = result.noise, result.false_passes
    lines = [
        f"calibrated {short(result.commit)} on {result.instances} selection instances"
        f" x {result.repeats} fresh repeats ({result.wall_time:.1f} s)",
        "",
        "evaluator noise on identical inputs:",
        f"  flip rate            {share(noise.flip_rate)}  (two runs of one instance score differently)",
        f"  repeat agreement     {share(noise.agreement)}  (instances on which every repeat agreed)",
        f"  per-instance sd      {rough_points(noise.within_variance**0.5)} points"
        f"  (across instances: {rough_points(noise.between_variance**0.5)})",
        f"  mean per repeat      {', '.join(f'{m * 100:.1f}' for m in noise.repeat_means)}"
        f"  (spread {rough_points(noise.mean_spread)} points)",
        "",
        f"gate on A/A pairs (one repeat against another, {passes.draws} draws, at a first attempt's level;"
        " every pass is false):",
        table(
            [
                [
                    check.policy + (" (configured)" if check.policy == result.policy else ""),
                    f"{share(check.false_passes.rate)} ({check.false_passes.passes})",
                    f"{share(check.false_passes.lower)} - {share(check.false_passes.upper)}",
                    f"{'alpha' if check.policy == 'strict' else 'q'} {check.limit:g}",
                    "holds" if check.holds else "DOES NOT HOLD",
                ]
                for check in result.policies
            ],
            ["policy", "false-pass rate", "95% bounds", "must be <=", ""],
        ),
        "",
        f"to see a true gain of {rough_points(result.effect)} points at 80% power"
        " (from the noise alone: a lower bound):",
        table(
            [
                [
                    row.repeats,
                    EMPTY if row.instances is None else row.instances,
                    EMPTY if row.detectable is None else rough_points(row.detectable),
                ]
                for row in result.needed
            ],
            ["repeats per side", "instances needed", f"smallest gain seen on {result.instances}"],
        ),
    ]
    return "\n".join(lines)


def calibration_line(record: CalibrationRecord | None) -> str:
    """What `gate` and `review` say about the evaluator's calibration."""
    if record is None:
        return (
            "calibration: none on record for this evaluator and selection set"
            " (`harnessgit calibrate` measures its noise and the gate's false-pass rate)"
        )
    needed = (
        ""
        if record.needed_instances is None
        else f", {record.needed_instances} instances for" + (f" +{rough_points(record.effect)} points")
    )
    return (
        f"calibration ({record.ts:%Y-%m-%d}, {short(record.commit)}, {record.repeats} repeats):"
        f" flip rate {share(record.flip_rate)}, false-pass rate {share(record.false_pass_rate)}"
        f" (alpha {record.alpha:g}){needed}"
    )
