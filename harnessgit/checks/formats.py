"""The format rule: text that the model or the agent runtime would read wrongly.

- Encoding: harness files are UTF-8 text; a binary file or invalid bytes fail.
- Code fences: an unterminated fence is the mark of a truncated LLM output; GEPA
  once adopted one as a candidate (gepa issue #390).
- SKILL.md: YAML frontmatter with ``name`` and ``description`` as the Agent Skills
  specification requires (`harnessgit.checks.skill_format`).
- Tool descriptions: JSON in the shape of a function tool (OpenAI or Anthropic style).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from harnessgit.check_findings import Content, Finding, failure
from harnessgit.checks.markdown import Block, Document, parse
from harnessgit.checks.text import shorten
from harnessgit.render import plural

# OpenAI and Anthropic both restrict function names to these characters, at most 64.
TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_FENCE_WITH_INFO = re.compile(r" {0,3}(?P<fence>`{3,}|~{3,})[ \t]*[^`\s]")
_HEADING_LINE = re.compile(r" {0,3}#{1,6}[ \t]+\S")


def check_encoding(path: str, content: Content) -> list[Finding]:
    if content.binary:
        return [
            failure(
                path,
                "format",
                "encoding",
                "binary",
                "UTF-8 text",
                "is a binary file (it contains a NUL byte)",
                "harness files are text the model reads: keep binaries out of the harness paths",
            )
        ]
    if content.invalid_utf8_at is not None:
        return [
            failure(
                path,
                "format",
                "encoding",
                f"invalid byte at offset {content.invalid_utf8_at}",
                "UTF-8 text",
                f"is not UTF-8 text (invalid byte at offset {content.invalid_utf8_at})",
                "re-save the file as UTF-8",
            )
        ]
    return []


def check_fences(path: str, text: str) -> list[Finding]:
    document = parse(text)
    findings = [_misnested_finding(path, outer, inner) for outer, inner in misnested(document)]
    block = document.unterminated_fence()
    if block is None:
        return findings
    hint = _misnested(document, block)
    # An unclosed fence that a misnested block left over names that block: one finding.
    findings = [f for f in findings if not hint or f"block at line {f.line} " not in hint]
    return [
        *findings,
        replace(
            failure(
                path,
                "format",
                "unterminated code fence",
                f"line {block.line}",
                "closed fences",
                f"code fence {shorten(block.opener, 30)} at line {block.line} is never closed",
                hint
                or "the text looks truncated (a cut-off LLM output was once adopted as a candidate, "
                "gepa #390): restore the end",
            ),
            line=block.line,
            end_line=block.end_line,
        ),
    ]


def _run(opener: str) -> str:
    """The fence run of an opening line as written (list and quote markers dropped)."""
    found = re.match(r"[0-9.)*+> \t-]*?(`{3,}|~{3,})", opener)
    return found[1] if found else ""


def misnested(document: Document) -> list[tuple[Block, int]]:
    """The closed fences that hold another fence's opening line, each with that line.

    CommonMark ends a fence at the first bare fence of its character at least as long:
    a ```` ```bash ```` line inside a ```` ``` ```` block is content, and the bare ```` ``` ````
    meant to close it ends the outer block instead. Fences still pair up by count, so
    neither a count nor an unclosed-fence check sees it; the sections between are read as
    code (an "Example Output" fence left open swallowed sections 6-12 of three SKILL.md
    files in trailofbits/skills, fixed in 7be90d6). An opening with an info string is the
    author's intent to start a block, so it is never plain content of a shorter fence."""
    found = []
    for block in document.fences:
        run = _run(block.opener)
        if not block.closed or not run:
            continue
        for offset, content in enumerate(block.text.splitlines(), start=1):
            inner = _FENCE_WITH_INFO.match(content)
            if inner and inner["fence"][0] == run[0] and len(inner["fence"]) >= len(run):
                found.append((block, block.line + offset))
                break
    return found


def _misnested_finding(path: str, block: Block, inner: int) -> Finding:
    before = block.text.splitlines()[: inner - block.line - 1]
    headings = sum(1 for content in before if _HEADING_LINE.match(content))
    opener = shorten(block.opener, 30)
    if block.info:  # a block that quotes fenced text: ended early, its own close opens a new one
        message = (
            f"code fence {opener} at line {block.line} holds the opening fence of line {inner}, whose close "
            f"ends it early at line {block.end_line}: the fence meant to close it opens a new block"
        )
    else:  # a block never closed where it should be: what follows, up to the next fence, is code
        message = (
            f"code fence {opener} at line {block.line} holds the opening fence of line {inner}, whose close "
            f"ends it at line {block.end_line}: lines {block.line + 1}-{inner - 1} are read as code"
            + (f" ({plural(headings, 'heading')} among them)" if headings else "")
        )
    return replace(
        failure(
            path,
            "format",
            "misnested code fence",
            f"line {block.line}",
            "fences that pair as written",
            message,
            f"close this block before line {inner}, or fence it with a longer run (````) or ~~~ "
            "when it quotes fenced text",
        ),
        line=block.line,
        end_line=block.end_line,
    )


def _misnested(document: Document, block: Block) -> str | None:
    """What an unclosed fence looks like when it is an authoring error, not a cut-off
    text: a bare fence (no info string) that a misnested block left over."""
    if block.info:
        return None  # "```python" and then the end: a code block that was cut off
    # The first block that quotes a fence of its own kind: its inner close ended it
    # early, and every fence after it pairs with the wrong partner.
    for outer in (fence for fence in document.fences if fence.end_line < block.line):
        fence_char = outer.opener.lstrip("0123456789.)-*+> ")[:1]
        for offset, content in enumerate(outer.text.splitlines(), start=1):
            inner = _FENCE_WITH_INFO.match(content)
            if inner and inner["fence"][0] == fence_char:
                return (
                    f"the fences look nested, not truncated: the block at line {outer.line} quotes a fence "
                    f"(line {outer.line + offset}) whose close ended it at line {outer.end_line}, so the "
                    f"fences after it pair up wrongly; fence the outer block with a longer run (````) or ~~~"
                )
    swallowed = block.text.splitlines()
    if any(_HEADING_LINE.match(content) or _FENCE_WITH_INFO.match(content) for content in swallowed):
        return (
            "the fences do not pair up: this bare fence turns the rest of the file (headings and "
            "fenced blocks included) into code; a fence is missing or one too many above it"
        )
    return None


def check_tool_json(path: str, text: str) -> list[Finding]:
    hint = (
        'expected {"name", "description", "parameters"} (OpenAI, optionally under "function") '
        'or {"name", "description", "input_schema"} (Anthropic), or a list of them'
    )
    try:
        data = json.loads(text.removeprefix("\ufeff"))
    except json.JSONDecodeError as exc:
        return [
            replace(
                failure(
                    path,
                    "format",
                    "JSON",
                    f"line {exc.lineno}",
                    "valid JSON",
                    f"is not valid JSON: {exc.msg} at line {exc.lineno}",
                    hint,
                ),
                line=exc.lineno,
            )
        ]
    tools = data if isinstance(data, list) else [data]
    if not tools:
        return [
            failure(path, "format", "tool shape", "empty list", "one or more tools", "lists no tools", hint)
        ]
    findings = []
    for index, tool in enumerate(tools):
        where = f"tool {index + 1}: " if isinstance(data, list) else ""
        problem = _tool_problem(tool)
        if problem:
            findings.append(
                failure(path, "format", "tool shape", problem, "a function tool", f"{where}{problem}", hint)
            )
    return findings


def _tool_problem(tool: Any) -> str | None:
    if not isinstance(tool, dict):
        return f"a {type(tool).__name__}, not an object"
    if tool.get("type") == "function" and isinstance(tool.get("function"), dict):
        tool = tool["function"]  # OpenAI Chat Completions: {"type": "function", "function": {...}}
    name = tool.get("name")
    if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
        return (
            "no name" if name is None else f"name {shorten(str(name), 40)!r} is not 1-64 of a-z A-Z 0-9 _ -"
        )
    description = tool.get("description")
    if not isinstance(description, str) or not description.strip():
        return f"{name}: no description"
    keys = [key for key in ("parameters", "input_schema", "inputSchema") if key in tool]
    if not keys:
        return f"{name}: no parameters or input_schema"
    schema = tool[keys[0]]
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return f'{name}: {keys[0]} is not a JSON schema with "type": "object"'
    return None
