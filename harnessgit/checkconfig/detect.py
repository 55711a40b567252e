"""What `harnessgit init` finds in a repository: where its harness text lives.

A skill is the folder that holds its SKILL.md, with everything in it: the Agent Skills
format loads references, prompts, scripts and assets from that folder on demand, so an
edit to ``skills/review/re-review-prompt.md`` changes what the agent does as much as an
edit to the SKILL.md beside it. Besides skills, init looks for the places harness text
usually lives (agent instruction files, prompt folders, tool JSON, Claude Code's
subagents and commands) and writes globs for what it found, each as general as the
layout allows and no more: ``skills/*/**/*.md`` only when every folder of ``skills/`` is a
skill, so a README or a shared test folder beside them stays outside the harness. Globs
name prose suffixes only: a skill folder's lockfile, build files, scripts and assets are
no harness text (issue 27: a dependency bump showed as a 10,934-token change to uv.lock).

Pure functions of a list of repository paths; nothing here reads git.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from harnessgit import globs
from harnessgit.checkconfig.folders import SKILL_FILE, VENDORED_FOLDERS

# The folders the Agent Skills specification names inside a skill.
SKILL_PARTS = ("references", "scripts", "assets")
# Agent instruction files, wherever they are (a monorepo has one per package).
INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")
# Single files editors read as instructions.
EDITOR_FILES = (".github/copilot-instructions.md", "**/.cursorrules", "**/.windsurfrules")
# The suffixes of harness prose (Cursor's rules are .mdc; prompts are also kept as .txt
# or templates). What init's globs name, folder by folder, never code or data beside it.
PROSE = (".md", ".mdc", ".markdown", ".mdx", ".txt", ".prompt", ".j2", ".jinja", ".tmpl")
# Folders of prose that is not the harness: a repository's own documentation.
DOC_FOLDERS = frozenset({"docs", "doc", ".github", "examples", "evals", "benchmarks"})
# Folders whose Markdown files are agent definitions or commands (Claude Code's
# .claude/agents and .claude/commands, and plugin collections laid out the same way).
DEFINITION_FOLDERS = ("agents", "commands")
# Test inputs are not the harness, even when they are prompts (a skills repository's
# tests/*/prompts/ holds the requests its tests send).
TEST_FOLDERS = frozenset({"tests", "test", "__tests__", "fixtures", "testdata"})
# Folder names that say what a folder holds: a merged glob keeps them as they are
# (``plugins/*/agents/*.md`` and ``plugins/*/commands/*.md``, never ``plugins/*/*/*.md``).
MEANINGFUL = frozenset({"skills", "prompts", "tools", "patterns", *DEFINITION_FOLDERS})
# A file with this name is a system prompt wherever it is (fabric's patterns/<name>/system.md).
SYSTEM_PROMPT = "system.md"


@dataclass(frozen=True)
class Found:
    """One kind of harness text found: what it is, the globs that cover it, and how
    many files they match now."""

    what: str
    globs: list[str]
    files: int


def detect(paths: Iterable[str]) -> list[Found]:
    """The harness text of a repository whose files are ``paths``, by kind, in the
    order `harnessgit init` lists them (an empty list: nothing recognised)."""
    files = sorted(p for p in paths if not VENDORED_FOLDERS.intersection(p.split("/")[:-1]))
    skills = skill_folders(files)
    found = [_skills(files, skills)] if skills else []
    found += [
        item
        for item in (
            _named(files, "agent instruction files", [f"**/{name}" for name in INSTRUCTION_FILES]),
            _named(files, "editor instruction files", list(EDITOR_FILES)),
            _named(files, "Copilot prompt and instruction files", ["**/*.prompt.md", "**/*.instructions.md"]),
            _under(files, skills, "prompt folders", _prompts, "**/*{suffix}"),
            _under(files, skills, "tool definitions (JSON)", _tools, "**/*.json"),
            _under(files, skills, "agent and command definitions", _definitions, "{depth}*.md"),
            _under(files, skills, "system prompts", _system_prompts, SYSTEM_PROMPT),
            _under(files, skills, "Cursor rules", _cursor_rules, "*.mdc"),
            _under(files, skills, "hook configurations", _hooks, "hooks.json"),
        )
        if item is not None
    ]
    return found


def skill_folders(files: Collection[str]) -> list[str]:
    """The folders that hold a SKILL.md and lie inside no other skill (a skill may
    bundle sub-skills: they are part of it). "" is the root: a one-skill repository."""
    folders = sorted({posixpath.dirname(p) for p in files if posixpath.basename(p) == SKILL_FILE})
    top: list[str] = []
    for folder in folders:  # sorted, so a skill comes before the folders inside it
        if not any(_inside(folder, outer) for outer in top):
            top.append(folder)
    return top


def _inside(path: str, folder: str) -> bool:
    return folder == "" or path == folder or path.startswith(folder + "/")


def _skills(files: list[str], skills: list[str]) -> Found:
    if "" in skills:  # the repository is one skill: its SKILL.md and the parts the spec names
        present = {p.split("/")[0] for p in files if "/" in p}
        patterns = [SKILL_FILE] + [f"{part}/**" for part in SKILL_PARTS if part in present]
    else:
        groups = [_skill_glob(files, parent, skills) for parent in _parents(skills)]
        patterns = [glob for group in _generalise(files, groups, skills) for glob in group]
    patterns = [glob for pattern in patterns for glob in _prose_only(files, pattern)]
    # A skill added later in a new folder is harness text from its first commit.
    if SKILL_FILE not in patterns:
        patterns.append(f"**/{SKILL_FILE}")
    return Found(f"skills ({len(skills)} folders holding a {SKILL_FILE})", patterns, _count(files, patterns))


def _prose_only(files: list[str], pattern: str) -> list[str]:
    """``folder/**`` as one ``folder/**/*<suffix>`` glob per prose suffix its files have."""
    if not pattern.endswith("/**"):
        return [pattern]
    suffixes = {_suffix(p) for p in files if globs.matches(p, [pattern])} & set(PROSE)
    return [f"{pattern}/*{suffix}" for suffix in PROSE if suffix in suffixes]


def _suffix(path: str) -> str:
    name = posixpath.basename(path)
    return name[name.rfind(".") :].lower() if "." in name.lstrip(".") else ""


def _parents(folders: list[str]) -> list[str]:
    return sorted({posixpath.dirname(folder) for folder in folders})


def _skill_glob(files: list[str], parent: str, skills: list[str]) -> list[str]:
    """``parent/*/**`` when every folder of ``parent`` is a skill, else one glob per skill."""
    prefix = f"{globs.escape(parent)}/" if parent else ""
    mine = [folder for folder in skills if posixpath.dirname(folder) == parent]
    wide = f"{prefix}*/**"
    if _covers_only(files, wide, skills):
        return [wide]
    return [f"{prefix}{globs.escape(posixpath.basename(folder))}/**" for folder in mine]


def _generalise(files: list[str], groups: list[list[str]], skills: list[str]) -> list[list[str]]:
    """Merge ``a/x/skills/*/**`` and ``a/y/skills/*/**`` into ``a/*/skills/*/**`` when
    the wider glob still matches nothing but skill files (plugin collections keep one
    skills folder per plugin)."""
    merged: list[list[str]] = []
    taken: set[int] = set()
    for index, group in enumerate(groups):
        if index in taken:
            continue
        wide = _wider(group, groups, index)
        if wide is not None and _covers_only(files, wide, skills):
            taken |= {i for i, other in enumerate(groups) if all(globs.matches(g, [wide]) for g in other)}
            merged.append([wide])
        else:
            merged.append(group)
    return merged


def _wider(group: list[str], groups: list[list[str]], index: int) -> str | None:
    """``group``'s one glob with the one component in which it differs from another
    group's replaced by ``*``, if there is such a group."""
    if len(group) != 1:
        return None
    parts = group[0].split("/")
    for other in groups[index + 1 :]:
        if len(other) != 1 or len(theirs := other[0].split("/")) != len(parts):
            continue
        differ = [i for i, (a, b) in enumerate(zip(parts, theirs, strict=True)) if a != b]
        if len(differ) == 1 and not MEANINGFUL & {parts[differ[0]], theirs[differ[0]]}:
            return "/".join("*" if i == differ[0] else part for i, part in enumerate(parts))
    return None


def _covers_only(files: list[str], pattern: str, skills: list[str]) -> bool:
    """``pattern`` matches at least one file, and only files inside a skill."""
    hits = [p for p in files if globs.matches(p, [pattern])]
    return bool(hits) and all(any(_inside(p, folder) for folder in skills) for p in hits)


def _named(files: list[str], what: str, patterns: list[str]) -> Found | None:
    used = [glob for glob in patterns if any(globs.matches(p, [glob]) for p in files)]
    return Found(what, used, _count(files, used)) if used else None


def _prompts(parts: list[str]) -> str | None:
    """The outermost ``prompts`` (or ``system-prompts``, ``agent_prompts``) folder above a
    prose file, at any depth: ``plugins/c-review/prompts/clusters/x.md`` is a prompt."""
    if _suffix(parts[-1]) not in PROSE:
        return None
    for index, part in enumerate(parts[:-1]):
        if part.lower() == "prompts" or part.lower().endswith(("-prompts", "_prompts")):
            return "/".join(parts[: index + 1])
    return None


def _tools(parts: list[str]) -> str | None:
    if not parts[-1].endswith(".json") or "tools" not in parts[:-1]:
        return None
    return "/".join(parts[: parts.index("tools") + 1])


def _definitions(parts: list[str]) -> str | None:
    """The ``agents`` or ``commands`` folder above a Markdown file, at any depth."""
    if not parts[-1].endswith(".md"):
        return None
    for index in range(len(parts) - 2, -1, -1):
        if parts[index] in DEFINITION_FOLDERS:
            return "/".join(parts[: index + 1])
    return None


def _system_prompts(parts: list[str]) -> str | None:
    return "/".join(parts[:-1]) if len(parts) >= 2 and parts[-1] == SYSTEM_PROMPT else None


def _cursor_rules(parts: list[str]) -> str | None:
    """Cursor's rules (``.mdc``), wherever they live: ``.cursor/rules/``, ``rules/``."""
    return "/".join(parts[:-1]) if len(parts) >= 2 and parts[-1].endswith(".mdc") else None


def _hooks(parts: list[str]) -> str | None:
    """A Claude Code plugin's hook configuration, ``hooks/hooks.json``."""
    return "/".join(parts[:-1]) if parts[-2:] == ["hooks", "hooks.json"] else None


def _under(
    files: list[str], skills: list[str], what: str, folder_of: Callable[[list[str]], str | None], tail: str
) -> Found | None:
    """The files outside skills (covered whole already) for which ``folder_of`` names a
    folder, as one glob ``<folder>/<tail>`` per folder, merged across sibling layouts."""
    folders: dict[str, set[str]] = {}
    for path in files:
        folder = folder_of(path.split("/"))
        if folder is None or TEST_FOLDERS.intersection(path.split("/")[:-1]):
            continue
        if not any(_inside(path, skill) for skill in skills):
            # {suffix}: one glob per prose suffix; {depth}: "**/" when files lie deeper.
            deeper = path.count("/") > folder.count("/") + 1
            part = _suffix(path) if "{suffix}" in tail else "**/" * deeper if "{depth}" in tail else ""
            folders.setdefault(folder, set()).add(part)
    if not folders:
        return None
    if "{depth}" in tail:  # a folder with nested files: one ``**/`` glob covers all of them
        folders = {folder: {"**/"} if "**/" in parts else parts for folder, parts in folders.items()}
    patterns = _merged(
        [
            f"{globs.escape(folder)}/{tail.format(suffix=part, depth=part)}"
            for folder, parts in folders.items()
            for part in sorted(parts, key=lambda part: (PROSE.index(part) if part in PROSE else -1, part))
        ]
    )
    return Found(what, patterns, _count(files, patterns))


def _merged(patterns: list[str]) -> list[str]:
    """Globs that differ in one component only become one, with ``*`` there."""
    out = list(patterns)
    changed = True
    while changed:
        changed = False
        for index, pattern in enumerate(out):
            wide = _wider([pattern], [[p] for p in out], index)
            if wide is not None:
                out = [p for p in out if not globs.matches(p, [wide])] + [wide]
                changed = True
                break
    return sorted(out)


def _count(files: list[str], patterns: list[str]) -> int:
    return sum(1 for p in files if globs.matches(p, patterns))


def harness_globs(found: list[Found]) -> list[str]:
    """Every glob of ``found``, once, in order."""
    return list(dict.fromkeys(glob for item in found for glob in item.globs))


# Files whose name says they are about the repository, not instructions to a model.
PROJECT_NOTES = frozenset({"readme", "changelog", "contributing", "license", "code_of_conduct", "security"})


@dataclass(frozen=True)
class LeftOut:
    """A folder of prose files that no harness glob matches: harness text init may have missed."""

    folder: str
    files: int


def left_out(paths: Iterable[str], patterns: list[str], top: int = 5) -> list[LeftOut]:
    """The ``top`` folders (by their first path component, two for ``plugins/NAME``)
    holding the most prose files ``patterns`` leave out, largest first. Documentation,
    tests, vendored copies and a repository's README-like notes are not counted."""
    counts: dict[str, int] = {}
    for path in paths:
        parts = path.split("/")
        folders = parts[:-1]
        if (
            _suffix(path) not in PROSE
            or VENDORED_FOLDERS.intersection(folders)
            or TEST_FOLDERS.intersection(folders)
            or DOC_FOLDERS.intersection(folders)
            or any(folder.lower().startswith(("eval", "test")) for folder in folders)
            or parts[-1].rsplit(".", 1)[0].lower() in PROJECT_NOTES
            or globs.matches(path, patterns)
        ):
            continue
        depth = 2 if len(folders) > 2 and folders[0] in ("plugins", "packages") else 1
        folder = "/".join(folders[:depth]) + "/" if folders else "(the root)"
        counts[folder] = counts.get(folder, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [LeftOut(folder, count) for folder, count in ranked[:top]]


def hidden_prose(found: list[Found], missed: list[LeftOut]) -> LeftOut | None:
    """The largest folder of prose left out when it outweighs what was found: one
    CLAUDE.md found beside 694 unmatched system prompts is a detection that failed."""
    covered = sum(item.files for item in found)
    largest = missed[0] if missed else None
    return largest if largest is not None and largest.files >= max(20, covered) else None
