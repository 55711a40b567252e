"""`harnessgit init`'s layout detection, on file lists shaped like public repositories.

Each layout is taken from a real repository's tree (file names trimmed): obra/superpowers,
anthropics/skills, wshobson/agents, github/awesome-copilot, danielmiessler/fabric.
"""

from __future__ import annotations

from harnessgit import globs
from harnessgit.config.detect import detect, harness_globs, skill_folders

SUPERPOWERS = [
    "README.md",
    "AGENTS.md",
    "CLAUDE.md",
    "GEMINI.md",
    "skills/brainstorming/SKILL.md",
    "skills/brainstorming/scripts/server.js",
    "skills/brainstorming/scripts/node_modules/express/History.md",
    "skills/subagent-driven-development/SKILL.md",
    "skills/subagent-driven-development/re-review-prompt.md",
    "skills/subagent-driven-development/implementer-prompt.md",
    "skills/using-superpowers/SKILL.md",
    "skills/using-superpowers/references/codex-tools.md",
    "tests/explicit-skill-requests/prompts/use-tdd.txt",
    "docs/plans/2026-01-01-plan.md",
]


def harness(found_globs: list[str], files: list[str]) -> set[str]:
    return {path for path in files if globs.matches(path, found_globs)}


def test_a_skill_is_its_folder_with_everything_in_it() -> None:
    found = detect(SUPERPOWERS)
    patterns = harness_globs(found)
    assert patterns[:2] == ["skills/*/**", "**/SKILL.md"]
    covered = harness(patterns, SUPERPOWERS)
    # The prompt a skill loads is harness text: it was "the evaluator's" before (issue 20).
    assert "skills/subagent-driven-development/re-review-prompt.md" in covered
    assert "skills/using-superpowers/references/codex-tools.md" in covered
    assert {"AGENTS.md", "CLAUDE.md", "GEMINI.md"} <= covered
    # Not harness: the project's docs, README, and the prompts its tests send.
    assert not covered & {
        "README.md",
        "docs/plans/2026-01-01-plan.md",
        "tests/explicit-skill-requests/prompts/use-tdd.txt",
    }
    assert [item.what for item in found] == [
        "skills (3 folders holding a SKILL.md)",
        "agent instruction files",
    ]


def test_a_folder_that_is_not_all_skills_gets_one_glob_per_skill() -> None:
    files = [
        "skills/pdf/SKILL.md",
        "skills/pdf/forms.md",
        "skills/docx/SKILL.md",
        "skills/shared/helpers.py",  # not a skill: skills/*/** would sweep it in
        "skills/README.md",
        "template/SKILL.md",
        "spec/agent-skills-spec.md",
    ]
    patterns = harness_globs(detect(files))
    assert patterns == ["template/**", "skills/docx/**", "skills/pdf/**", "**/SKILL.md"]
    assert harness(patterns, files) == {
        f for f in files if f.startswith(("skills/pdf", "skills/docx", "template"))
    }


def test_a_plugin_collection_is_generalised_only_as_far_as_it_holds() -> None:
    files = [
        f"plugins/{plugin}/{part}"
        for plugin in ("python-development", "ui-design", "llm-finetuning")
        for part in ("skills/a/SKILL.md", "skills/a/references/x.md", "skills/b/SKILL.md", "agents/expert.md")
    ] + ["plugins/ui-design/commands/review.md", "plugins/ui-design/README.md", ".cursor/rules/style.mdc"]
    found = detect(files)
    patterns = harness_globs(found)
    assert patterns == [
        "plugins/*/skills/*/**",
        "**/SKILL.md",
        "plugins/*/agents/*.md",
        "plugins/ui-design/commands/*.md",
        ".cursor/rules/**",
    ]
    assert "plugins/ui-design/README.md" not in harness(patterns, files)
    # Agents and commands stay apart: "plugins/*/*/*.md" would take any folder's notes.
    assert not any("/*/*/" in glob for glob in patterns)


def test_sub_skills_belong_to_their_skill_and_the_root_can_be_one_skill() -> None:
    nested = ["skills/qdrant/SKILL.md", "skills/qdrant/scaling/SKILL.md", "skills/qdrant/scaling/notes.md"]
    assert skill_folders(nested) == ["skills/qdrant"]
    root = ["SKILL.md", "references/api.md", "scripts/run.py", "README.md", "LICENSE"]
    patterns = harness_globs(detect(root))
    assert patterns == ["SKILL.md", "references/**", "scripts/**"]
    assert harness(patterns, root) == {"SKILL.md", "references/api.md", "scripts/run.py"}


def test_prompt_files_tools_and_system_prompts_are_found() -> None:
    files = [
        "data/patterns/summarize/system.md",
        "data/patterns/extract_wisdom/system.md",
        "data/patterns/extract_wisdom/README.md",
        "prompts/triage.md",
        "tools/search.json",
        "tools/schemas/lookup.json",
        ".github/copilot-instructions.md",
        "instructions/python.instructions.md",
        "node_modules/pkg/prompts/x.md",
    ]
    found = {item.what: item.globs for item in detect(files)}
    assert found == {
        "editor instruction files": [".github/copilot-instructions.md"],
        "Copilot prompt and instruction files": ["**/*.instructions.md"],
        "prompt folders": ["prompts/**"],
        "tool definitions (JSON)": ["tools/**/*.json"],
        "system prompts": ["data/patterns/*/system.md"],
    }


def test_nothing_recognised_is_an_empty_list() -> None:
    assert detect(["README.md", "src/app.py", "categories/01-core/api-designer.md"]) == []
