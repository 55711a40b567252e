from __future__ import annotations

import json
import logging
import math
from datetime import datetime, timezone

import pytest
from pydantic import ValidationError

from harnessgit.records import EvalRecord, ProposalRecord, TestPeekRecord
from harnessgit.records.lines import Skipped, dump_record, parse_note, parse_record

TS = datetime(2026, 1, 1, tzinfo=timezone.utc)


def proposal(**extra: object) -> ProposalRecord:
    fields: dict[str, object] = dict(
        ts=TS,
        candidate="abc",
        parent="0" * 40,
        components=["SKILL.md"],
        rationale="why\nbecause",
        source="api",
    )
    fields.update(extra)
    return ProposalRecord(**fields)  # type: ignore[arg-type]


def test_dump_is_canonical_one_line() -> None:
    line = dump_record(proposal())
    assert b"\n" not in line
    data = json.loads(line)
    assert list(data) == sorted(data)
    assert data["v"] == 1 and data["kind"] == "proposal" and len(data["id"]) == 32
    assert data["ts"] == "2026-01-01T00:00:00.000000Z"
    assert line == json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


def test_round_trip() -> None:
    record = proposal()
    assert parse_record(dump_record(record)) == record


def test_records_are_frozen_and_strict() -> None:
    record = proposal()
    with pytest.raises(ValidationError, match="frozen"):
        record.rationale = "x"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="unknown_field"):
        proposal(unknown_field=1)


def test_reader_skips_what_it_cannot_read(caplog: pytest.LogCaptureFixture) -> None:
    good = dump_record(proposal())
    newer = json.dumps({"v": 99, "kind": "proposal", "id": "x"}).encode()
    unknown = json.dumps({"v": 1, "kind": "martian", "id": "y", "ts": "2026-01-01T00:00:00Z"}).encode()
    note = b"\n".join([good, b"", b"not json", newer, unknown, b"[1,2]", good])
    with caplog.at_level(logging.WARNING, logger="harnessgit"):
        records = parse_note(note)
    assert len(records) == 2
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "invalid JSON" in messages and "version 99" in messages and "martian" in messages


def test_reader_tolerates_newer_optional_fields() -> None:
    data = json.loads(dump_record(proposal()))
    data["added_in_a_later_minor_version"] = True
    record = parse_record(json.dumps(data).encode())
    assert isinstance(record, ProposalRecord) and record.rationale == "why\nbecause"


def test_every_optional_field_has_a_default() -> None:
    # Records are written without their None fields (dump_record: exclude_none). An
    # optional field with no default then reads back as missing, and the whole record
    # is skipped: an override on a direct commit (candidate None) was lost that way.
    import typing

    from harnessgit.records import _KINDS

    for cls in _KINDS.values():
        for name, field in cls.model_fields.items():
            if type(None) in typing.get_args(field.annotation):
                assert not field.is_required(), f"{cls.__name__}.{name} may be None but has no default"


def test_a_record_with_none_fields_reads_back() -> None:
    from datetime import datetime, timezone

    from harnessgit.records import OverrideRecord
    from harnessgit.records.lines import dump_record, parse_record

    record = OverrideRecord(
        ts=datetime(2026, 1, 1, tzinfo=timezone.utc),
        commit="a" * 40,
        action="settings",
        reason="r",
        author="me",
    )
    assert record.candidate is None and parse_record(dump_record(record)) == record


# -- issue 15, defect 11: the reader trusted malformed records ----------------------


def eval_line(**changes: object) -> bytes:
    """An evaluation record as stored, with fields changed as a hand-edited note would
    have them (json.dumps writes NaN and Infinity bare, as Python's json does)."""
    record = EvalRecord(
        ts=TS,
        commit="c" * 40,
        harness="h" * 40,
        fingerprint="f" * 64,
        model="sim-1",
        split="selection",
        split_hash="s" * 64,
        manifest="m" * 64,
        instances=["s-1", "s-2"],
        repeats=[0, 0],
        scores=[1.0, 0.0],
        failure_classes=[None, "missing-rule"],
        wall_time=0.5,
        worker="host:1",
    )
    data = json.loads(dump_record(record))
    data.update(changes)
    return json.dumps(data, sort_keys=True).encode()


def test_a_newer_version_is_skipped_even_when_its_fields_fit(caplog: pytest.LogCaptureFixture) -> None:
    # Measured: a `v: 99` copy of an evaluation record with every score 1.0 was read,
    # and moved a mean from 0.250 to 0.500 (the audit: 0.342 -> 0.400).
    assert parse_record(eval_line()) is not None
    with caplog.at_level(logging.WARNING, logger="harnessgit"):
        assert parse_note(eval_line(v=99, scores=[1.0, 1.0]), "refs/notes/harnessgit/evals on c1") == []
    (message,) = [r.getMessage() for r in caplog.records]
    assert "skipped 1 record of schema version 99 on refs/notes/harnessgit/evals on c1" in message
    assert "reads versions up to 1" in message


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"scores": [math.nan, 0.0]}, "eval scores: Input should be a finite number"),
        ({"scores": [math.inf, 0.0]}, "eval scores: Input should be a finite number"),
        ({"scores": [1.5, 0.0]}, "eval scores: Input should be less than or equal to 1"),
        ({"scores": [-0.1, 0.0]}, "eval scores: Input should be greater than or equal to 0"),
        ({"scores": ["0.5", 0.0]}, "eval scores: Input should be a valid number"),
        ({"repeats": [-1, 0]}, "eval repeats: Input should be greater than or equal to 0"),
        ({"scores": [1.0]}, "eval scores must have one entry per instance"),
        ({"failure_classes": [None]}, "eval failure_classes must have one entry per instance"),
        ({"objective_scores": [{"a": 1.0}]}, "eval objective_scores must have one entry per instance"),
        (
            {"objective_scores": [{"a": math.nan}, None]},
            "eval objective_scores.a: Input should be a finite",
        ),
        ({"wall_time": -1.0}, "eval wall_time: Input should be greater than or equal to 0"),
        ({"cost": {"usd": math.inf}}, "eval cost.usd: Input should be a finite number"),
        ({"v": 0}, "eval v: Input should be greater than or equal to 1"),
    ],
)
def test_impossible_values_are_rejected_when_read(
    changes: dict[str, object], why: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Before: every one of these was read, and a NaN score reached the gate and crashed it.
    with caplog.at_level(logging.WARNING, logger="harnessgit"):
        assert parse_note(eval_line(**changes), "refs/notes/harnessgit/evals on c1") == []
    (message,) = [r.getMessage() for r in caplog.records]
    assert "record with an impossible value on refs/notes/harnessgit/evals on c1" in message
    assert why in message


def test_impossible_values_in_peeks_and_gate_records(caplog: pytest.LogCaptureFixture) -> None:
    peek = TestPeekRecord(
        ts=TS, commit="c" * 40, harness="h" * 40, fingerprint="f", model="m", n=10, mean=0.5
    )
    data = json.loads(dump_record(peek))
    with caplog.at_level(logging.WARNING, logger="harnessgit"):
        assert parse_record(json.dumps({**data, "mean": math.nan}).encode()) is None
        assert parse_record(json.dumps({**data, "n": -3}).encode()) is None
        assert parse_record(json.dumps(data).encode()) == peek
    assert len(caplog.records) == 2


def test_records_with_impossible_values_cannot_be_written() -> None:
    with pytest.raises(ValidationError, match="finite number"):
        EvalRecord.model_validate({**json.loads(eval_line()), "scores": [math.nan, 0.0]})
    with pytest.raises(ValidationError, match="one entry per instance"):
        EvalRecord.model_validate({**json.loads(eval_line()), "repeats": [0]})


def test_one_warning_per_kind_of_problem(caplog: pytest.LogCaptureFixture) -> None:
    # 50 bad lines on two notes: two warnings (one per kind), each naming both notes.
    skipped = Skipped("refs/notes/harnessgit/evals")
    bad = [eval_line(scores=[math.nan, 0.0], id=f"{i:032x}") for i in range(30)]
    newer = [eval_line(v=2, id=f"{i:032x}") for i in range(20)]
    good = eval_line()
    first = parse_note(b"\n".join([*bad[:15], *newer[:10], good]), "c1", skipped)
    second = parse_note(b"\n".join([*bad[15:], *newer[10:]]), "c2", skipped)
    assert len(first) == 1 and second == []
    assert skipped.warnings() == [
        "skipped 30 records with an impossible value in refs/notes/harnessgit/evals on c1, c2 "
        "(eval scores: Input should be a finite number)",
        "skipped 20 records of schema version 2 in refs/notes/harnessgit/evals on c1, c2 "
        "(a newer harnessgit wrote them; this one reads versions up to 1)",
    ]
    assert caplog.records == []  # collected, not logged: the store says it once per read


# -- issue 17: a read builds only the models of the kinds it reads ---------------------


def test_reading_one_kind_builds_only_its_model() -> None:
    """Models are built on first use (defer_build): built at import, the thirteen of
    them cost every command about 60 ms of CPU before it read anything."""
    import subprocess
    import sys

    program = f"""
from harnessgit import records
from harnessgit.records import lines as record_lines
models = [records.ModelCheck, *records._KINDS.values()]
assert not any(m.__pydantic_complete__ for m in models), "built at import"
record_lines.parse_note({dump_record(proposal())!r} + b"\\n")
print(sorted(m.__name__ for m in models if m.__pydantic_complete__))
"""
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["['ProposalRecord']"]


def test_a_line_reads_as_the_union_of_every_kind_reads_it(caplog: pytest.LogCaptureFixture) -> None:
    """`parse_record` picks the model by the "kind" key it finds in the line; whatever
    the line, it must answer what validating against every kind at once answers."""
    from harnessgit.records.lines import _any_record, _parse_tolerant

    good = dump_record(proposal())
    data = json.loads(good)
    lines = [
        good,
        good.replace(b'"kind":"proposal"', b'"kind" : "proposal"'),
        good.replace(b'"kind":"proposal"', b'"kind":"\\u0070roposal"'),  # escaped: the union decides
        good.replace(b'"kind":"proposal"', b'"kind":"eval"'),  # another kind's name
        good.replace(b'"kind":"proposal",', b""),  # no kind at all
        good.replace(b'"kind":"proposal"', b'"kind":"eval","kind":"proposal"'),  # twice
        dump_record(proposal(rationale='a line "kind":"eval" in text')),
        json.dumps({**data, "rationale": {"kind": "eval"}}).encode(),
        json.dumps(
            {**data, "kind": "evidence", "blob": "b", "items": 1, "bytes": 2, "item_kinds": {"kind": "x"}}
        ).encode(),
        eval_line(),
        eval_line(scores=[1.0, 2.0]),
    ]
    for line in lines:
        try:
            expected = _any_record().validate_json(line, strict=True)
        except ValidationError:
            expected = _parse_tolerant(line)[0]
        assert parse_record(line, skipped=Skipped()) == expected, line


def test_models_first_used_by_many_threads_at_once_read_correctly() -> None:
    """The first use builds a model (defer_build), and the GEPA recorder's writer thread
    or a library caller's threads may be first together; pydantic >= 2.14 builds under a
    lock (before it, a thread could validate with the base class's validator)."""
    import subprocess
    import sys

    program = f"""
import threading
from harnessgit.records import lines as record_lines
line, proposal = {eval_line()!r}, {dump_record(proposal())!r}
start = threading.Barrier(8)
results = []
def read():
    start.wait()
    results.append((record_lines.parse_record(line), record_lines.parse_record(proposal)))
threads = [threading.Thread(target=read) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
kinds = {{(type(a).__name__, type(b).__name__) for a, b in results}}
assert len(results) == 8 and kinds == {{("EvalRecord", "ProposalRecord")}}, results
"""
    subprocess.run([sys.executable, "-c", program], check=True, timeout=60)


# -- what records were written with: a line written before must still read ----------

# The fields of each kind (and of a gate record's per-model check) at schema version 1,
# as harnessgit wrote them up to d969d88 (2 December 2026), space-separated.
FIELDS_WRITTEN = {
    "calibration": (
        "agreement alpha alpha_1 clusters commit draws effect false_pass_rate false_passes "
        "fingerprint flip_rate harness id instances kind manifest method min_effect model "
        "needed_instances policies policy repeats resamples scores seed split split_hash supersedes "
        "ts v wall_time within_variance worker"
    ),
    "eval": (
        "clusters commit cost evidence failure_classes fingerprint fresh grader harness id "
        "instances kind manifest model objective_scores repeats scores split split_hash supersedes "
        "ts v wall_time worker"
    ),
    "evidence": "blob bytes id item_kinds items kind label supersedes ts v",
    "evolve-iteration": (
        "ancestor candidate candidate_score commit component cost_usd evaluator_cost_usd "
        "evaluator_seconds files id iteration kind minibatch move optimizer other_parent "
        "other_parent_name outcome parent parent_name parent_score proposals proposer "
        "proposer_seconds reason rollouts run seconds seed selection_mean supersedes ts v"
    ),
    "export": "author commit commits conversations digest forced id kind model pairs split supersedes ts v",
    "gate": (
        "allow_small alpha alpha_k alpha_spent attempt base base_branch base_harness base_mean "
        "batch candidate candidate_mean chance_better checks ci_high ci_low commit corrected "
        "difference e_fail e_value evals expected_loss fingerprint harness id instances kind level "
        "losses lower_bound mde merge method min_effect min_instances model models n needed p_value "
        "passed passed_before policy pool_batch pool_e_fail pool_e_value pool_level prior_gains "
        "prior_looks prior_mean prior_sd q reasons regressed regressed_count resamples sample "
        "sample_verdict se seed selection_size settings split split_hash supersedes ties tree ts "
        "upper_bound v verdict wins worker"
    ),
    "label": "author commit forced gate id kind name previous reason supersedes ts v",
    "model": "author commit id kind name note parent supersedes ts v",
    "override": "action author candidate commit id kind reason supersedes ts v",
    "proposal": (
        "candidate components id kind other_parent parent proposer rationale source supersedes ts v"
    ),
    "retire": "candidate commit detail id kind reason supersedes ts v",
    "run": (
        "base best budget candidates fingerprint id iterations kind metric_calls model optimizer "
        "run seconds seed stop_reason supersedes ts v"
    ),
    "test-peek": "commit fingerprint forced harness id kind mean model n supersedes ts v",
    "model-check": "base_mean candidate_mean ci_high ci_low difference level loss model n p_value",
}


def test_a_line_written_before_still_reads() -> None:
    """A record is strict (extra="forbid"): a field dropped or renamed in a model, or a
    new one it requires, makes every line written before it unreadable, and readers
    skip them. Moving a model between modules dropped CalibrationRecord.worker once."""
    from harnessgit.records import _KINDS, ModelCheck

    models = {**_KINDS, "model-check": ModelCheck}
    assert set(models) == set(FIELDS_WRITTEN)
    for kind, written in FIELDS_WRITTEN.items():
        fields = models[kind].model_fields
        assert set(written.split()) <= set(fields), (
            f"{kind}: fields gone: {set(written.split()) - set(fields)}"
        )
        required = {name for name, field in fields.items() if field.is_required()}
        assert required <= set(written.split()), f"{kind}: newly required: {required - set(written.split())}"
