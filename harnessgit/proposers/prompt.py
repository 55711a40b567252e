"""The prompt the openai proposer sends: a system message and one user message.

The wording is fixed here (and shown in docs/proposers.md) so that a change to it
is a reviewed change to harnessgit, like any other harness text. What it asks
for, and why:

- the SMALLEST edit that fixes the shared cause of the failures: the accepted
  edits that held up were few (SkillOpt: 1-4 per benchmark, arXiv 2605.23904),
  and TextGrad's gains came from general discipline, not from the samples
  (arXiv 2512.13598);
- explicit length limits: prompts past ~5,000 characters generalised worse at
  Decagon, and ~1,000 lost almost nothing; ESPO's 3x longer prompts were not
  more accurate (arXiv 2609.04197);
- keep the rest unchanged: ACE saw a whole context collapse in one rewrite
  (arXiv 2510.04618);
- the answer in one fenced block, so that an answer cut short is detectable
  (an unclosed fence) instead of adopted (gepa #390).

The reflective dataset is scrubbed of secrets before it leaves the machine
(`harnessgit.scrub`); the component text is sent as it is, since the proposer
must quote it exactly.
"""

from __future__ import annotations

import json

from harnessgit.fences import fence_for
from harnessgit.proposers.edits import estimate_tokens
from harnessgit.proposers.protocol import Limits, ProposalRequest, ReflectiveExample
from harnessgit.scrub import Scrubber

# Each input, output, trajectory or feedback is cut to this many characters
# (head and tail kept): a minibatch of three must fit any context window.
MAX_FIELD_CHARS = 3000

SYSTEM_PROMPT = """\
You improve one file of an LLM application's harness: a system prompt, a SKILL.md \
skill document, or a tool description that the application's model reads as \
instructions. You are shown the file, tasks on which the application scored \
poorly with the evaluator's feedback, and length limits. You propose the \
smallest edit to the file that fixes the cause of those failures on future \
tasks that you have not seen."""

USER_TEMPLATE = """\
## The file: {component}

The current text has {stats}. It is shown between the fence lines below.

{fence}text
{current_text}
{fence}

## What happened on {count} evaluated task(s)

Scores run from 0 (failed) to 1 (passed). Long values are excerpts.

{examples}

## Limits

{limits}

## Your task

1. Find the cause that the failures share. Look at where each trajectory went \
wrong, not only at its final answer.
2. Fix that cause with the smallest edit you can: usually one to four short, \
general instructions. Improvements that held up in published experiments came \
from a few small edits, not from rewrites.
3. Keep everything unrelated to the failures exactly as it is. Do not restate \
what the file already says. Do not name the tasks above or copy their answers \
into the file: the edit must help on tasks you have not seen.

{answer_format}"""

REPLACE_FORMAT = """\
## Answer format

First explain the edit in one to three sentences. Then give the COMPLETE new \
text of the file, not only the changed part, in one block that opens with the \
line {fence}text and closes with the line {fence}. Write nothing after the \
closing fence. An answer without that block, or whose block is not closed, is \
discarded."""

DELTA_FORMAT = """\
## Answer format

First explain the edit in one to three sentences. Then give the edit as a list \
of operations in one block that opens with the line ```json and closes with the \
line ```, for example:

```json
{{"operations": [{{"op": "insert_after", "anchor": "a line copied from the file", \
"text": "the new instruction"}}]}}
```

The operations, applied in order:
- {{"op": "append", "text": T}} adds T at the end of the file.
- {{"op": "insert_after", "anchor": A, "text": T}} adds T right after A; when A \
ends a line, T goes on new lines below that line.
- {{"op": "replace", "old": O, "new": N}} replaces O with N.
- {{"op": "delete", "old": O}} removes O.

Copy every anchor and old text character for character from the current file; \
each must occur exactly once in it (quote more of the line to make it unique). \
Write nothing after the closing fence. An answer without that block, with \
invalid JSON, or whose block is not closed, is discarded."""

BLOAT_NOTE = (
    "Longer is not better: prompts past about 5,000 characters generalised worse, "
    "and cutting them to about 1,000 characters lost almost nothing."
)


def render_messages(request: ProposalRequest, scrubber: Scrubber | None = None) -> list[tuple[str, str]]:
    """(role, content) pairs: the system message, then the user message."""
    scrubber = scrubber or Scrubber()
    fence = fence_for(request.current_text)
    answer_format = (DELTA_FORMAT if request.form == "delta" else REPLACE_FORMAT).format(fence=fence)
    if request.instructions:
        answer_format += "\n\n## Further instructions\n\n" + request.instructions.strip()
    examples = "\n\n".join(
        scrubber.text(_example(number, example)) for number, example in enumerate(request.examples, 1)
    )
    user = USER_TEMPLATE.format(
        component=request.component,
        stats=_stats(request.current_text),
        fence=fence,
        current_text=request.current_text.removesuffix("\n"),
        count=len(request.examples),
        examples=examples or "(no examples were given)",
        limits=_limits(request.limits, request.current_text),
        answer_format=answer_format,
    )
    return [("system", SYSTEM_PROMPT), ("user", user)]


def excerpt(text: str, limit: int = MAX_FIELD_CHARS) -> str:
    """Head and tail of ``text``: a trajectory's failure is usually near its end."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 5
    tail = limit - head
    return f"{text[:head]}\n[... {len(text) - limit} characters omitted ...]\n{text[-tail:]}"


def _example(number: int, example: ReflectiveExample) -> str:
    score = "not scored" if example.score is None else f"score {example.score:g}"
    parts = [f"### Task {number}: {example.instance} ({score})"]
    for title, value in (
        ("Inputs", example.inputs),
        ("Output", example.outputs),
        ("Trajectory excerpt", example.trajectory),
        ("Feedback from the evaluator", example.feedback or None),
    ):
        if value is not None:
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1)
            parts.append(f"{title}:\n{excerpt(text)}")
    return "\n\n".join(parts)


def _stats(text: str) -> str:
    lines = len(text.splitlines())
    return f"{len(text)} characters, {lines} lines, about {estimate_tokens(text)} tokens"


def _limits(limits: Limits, current: str) -> str:
    bounds = [
        f"at most {value} {unit}"
        for value, unit in (
            (limits.max_chars, "characters"),
            (limits.max_lines, "lines"),
            (limits.max_tokens, "tokens (about 4 characters each)"),
        )
        if value is not None
    ]
    if not bounds:
        return f"No hard limit is set. {BLOAT_NOTE}"
    return f"The new text must have {', '.join(bounds)}; now it has {_stats(current)}. {BLOAT_NOTE}"
