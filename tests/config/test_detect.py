"""`harnessgit init`'s layout detection, on file lists shaped like public repositories.

Each layout is taken from a real repository's tree (file names trimmed): obra/superpowers,
anthropics/skills, wshobson/agents, github/awesome-copilot, danielmiessler/fabric.
"""

from __future__ import annotations

from harnessgit import globs
from harnessgit.checkconfig.detect import (
    LeftOut,
    detect,
    harness_globs,
    hidden_prose,
    left_out,
    skill_folders,
)

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
    assert patterns[:2] == ["skills/*/**/*.md", "**/SKILL.md"]
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
    assert patterns == ["template/**/*.md", "skills/docx/**/*.md", "skills/pdf/**/*.md", "**/SKILL.md"]
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
        "plugins/*/skills/*/**/*.md",
        "**/SKILL.md",
        "plugins/*/agents/*.md",
        "plugins/ui-design/commands/*.md",
        ".cursor/rules/*.mdc",
    ]
    assert "plugins/ui-design/README.md" not in harness(patterns, files)
    # Agents and commands stay apart: "plugins/*/*/*.md" would take any folder's notes.
    assert not any("/*/*/" in glob for glob in patterns)


def test_sub_skills_belong_to_their_skill_and_the_root_can_be_one_skill() -> None:
    nested = ["skills/qdrant/SKILL.md", "skills/qdrant/scaling/SKILL.md", "skills/qdrant/scaling/notes.md"]
    assert skill_folders(nested) == ["skills/qdrant"]
    root = ["SKILL.md", "references/api.md", "scripts/run.py", "README.md", "LICENSE"]
    patterns = harness_globs(detect(root))
    assert patterns == ["SKILL.md", "references/**/*.md"]
    assert harness(patterns, root) == {"SKILL.md", "references/api.md"}  # code is no harness text


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
        "prompt folders": ["prompts/**/*.md"],
        "tool definitions (JSON)": ["tools/**/*.json"],
        "system prompts": ["data/patterns/*/system.md"],
    }


def test_nothing_recognised_is_an_empty_list() -> None:
    assert detect(["README.md", "src/app.py", "categories/01-core/api-designer.md"]) == []


# Issue 27's three shapes, trimmed from trailofbits/skills, Piebald-AI/claude-code-system-prompts
# and sanjeed5/awesome-cursor-rules-mdc (docs/benchmarks.md names the commits).
SECURITY_PLUGINS = [
    "CLAUDE.md",
    "README.md",
    "plugins/c-review/README.md",
    "plugins/c-review/prompts/clusters/concurrency.md",
    "plugins/c-review/prompts/clusters/manifest.json",
    "plugins/c-review/prompts/general/buffer-overflow.md",
    "plugins/c-review/skills/c-review/SKILL.md",
    "plugins/rust-review/prompts/clusters/unsafe.md",
    "plugins/rust-review/skills/rust-review/SKILL.md",
    "plugins/rust-review/skills/rust-review/references/patterns.md",
    "plugins/rust-review/skills/rust-review/uv.lock",
    "plugins/rust-review/skills/rust-review/pyproject.toml",
    "plugins/rust-review/skills/rust-review/scripts/scan.py",
    "plugins/rust-review/skills/rust-review/assets/diagram.svg",
    "plugins/rust-review/skills/rust-review/Dockerfile",
    "plugins/rust-review/agents/triager.md",
    "plugins/rust-review/commands/review/deep.md",
    "plugins/rust-review/hooks/hooks.json",
    "plugins/c-review/hooks/hooks.json",
    "plugins/c-review/evals/01-overflow/graders/grader.md",
]
SYSTEM_PROMPTS = ["CLAUDE.md", "README.md", "CHANGELOG.md", "tools/updatePrompts.js"] + [
    f"system-prompts/agent-prompt-{n}.md" for n in range(40)
]
CURSOR_RULES = ["README.md", "src/generate.py", "uv.lock", "rules.json", ".cursor/rules/own.mdc"] + [
    f"rules-mdc/{name}.mdc" for name in ("python", "react", "go", "rust")
]


def test_a_security_plugin_collection_covers_prompts_hooks_and_no_code() -> None:
    patterns = harness_globs(detect(SECURITY_PLUGINS))
    covered = harness(patterns, SECURITY_PLUGINS)
    assert {
        "plugins/c-review/prompts/clusters/concurrency.md",
        "plugins/c-review/prompts/general/buffer-overflow.md",
        "plugins/rust-review/prompts/clusters/unsafe.md",
        "plugins/rust-review/commands/review/deep.md",
        "plugins/rust-review/hooks/hooks.json",
        "plugins/c-review/hooks/hooks.json",
        "plugins/rust-review/skills/rust-review/references/patterns.md",
    } <= covered
    # Never lockfiles, build files, code or binaries; never evaluation data or READMEs.
    assert not {
        p for p in covered if p.endswith((".lock", ".toml", ".py", ".svg", "Dockerfile", ".json"))
    } - {
        "plugins/rust-review/hooks/hooks.json",
        "plugins/c-review/hooks/hooks.json",
    }
    assert not covered & {
        "README.md",
        "plugins/c-review/README.md",
        "plugins/c-review/evals/01-overflow/graders/grader.md",
    }


def test_a_flat_system_prompt_collection_is_found_not_only_its_claude_md() -> None:
    found = {item.what: item.globs for item in detect(SYSTEM_PROMPTS)}
    assert found["prompt folders"] == ["system-prompts/**/*.md"]
    assert len(harness(harness_globs(detect(SYSTEM_PROMPTS)), SYSTEM_PROMPTS)) == 41


def test_cursor_rules_are_found_wherever_they_live() -> None:
    found = {item.what: item.globs for item in detect([*CURSOR_RULES, "pkg/.cursorrules"])}
    assert found["Cursor rules"] == [".cursor/rules/*.mdc", "rules-mdc/*.mdc"]
    assert found["editor instruction files"] == ["**/.cursorrules"]


def test_one_small_match_beside_a_large_body_of_prose_is_said() -> None:
    files = ["CLAUDE.md", "docs/guide.md"] + [f"leaked/vendor-{n}.md" for n in range(30)]
    found = detect(files)
    missed = left_out(files, harness_globs(found))
    assert missed == [LeftOut("leaked/", 30)]  # docs/ is the project's own documentation
    assert hidden_prose(found, missed) == LeftOut("leaked/", 30)
    assert (
        hidden_prose(detect(SYSTEM_PROMPTS), left_out(SYSTEM_PROMPTS, harness_globs(detect(SYSTEM_PROMPTS))))
        is None
    )
