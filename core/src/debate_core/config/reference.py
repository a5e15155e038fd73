"""The configuration reference, generated from the attrs classes themselves.

Field documentation is the string literal written under each field in the class body;
``docs/config-reference.md`` is this module's output and a test keeps the two equal.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import textwrap
import typing
from typing import Any, cast

import attrs

from debate_core.config.choices import ComponentChoice
from debate_core.config.sections import RunConfig

_NO_DEFAULT = "(required)"
_TYPE_PREFIXES = ("typing.", "debate_core.config.choices.", "debate_core.config.sections.")

# attrs' stubs declare ``Factory(f)`` as returning what ``f`` returns (so that field defaults
# Any: type-check); at run time it is a class with ``factory`` and ``takes_self``.
_FACTORY = cast("type[Any]", attrs.Factory)


def field_docs(cls: type) -> dict[str, str]:
    """``{field name: docstring}`` read from the string literals under each annotated field."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):
            continue
        tree = ast.parse(source)
        body = next((n.body for n in tree.body if isinstance(n, ast.ClassDef)), [])
        for node, following in itertools.pairwise(body):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                docs[node.target.id] = " ".join(following.value.value.split())
    return docs


def _type_name(annotation: object) -> str:
    text = str(annotation) if not isinstance(annotation, type) else annotation.__name__
    for prefix in _TYPE_PREFIXES:
        text = text.replace(prefix, "")
    return text


def _default_text(field: attrs.Attribute[object]) -> str:
    default = field.default
    if default is attrs.NOTHING:
        return _NO_DEFAULT
    if isinstance(default, _FACTORY):
        default = default.factory() if not default.takes_self else None
    if isinstance(default, ComponentChoice):
        return f'"{default.name}"'
    if attrs.has(type(default)):
        return "(section)"
    if isinstance(default, str):
        return f'"{default}"'
    if isinstance(default, bool):
        return str(default).lower()
    if isinstance(default, tuple):
        return "[" + ", ".join(_default_text_value(x) for x in default) + "]"
    return repr(default)


def _default_text_value(value: object) -> str:
    if isinstance(value, ComponentChoice):
        return f'"{value.name}"'
    return f'"{value}"' if isinstance(value, str) else repr(value)


def _table(cls: type) -> list[str]:
    docs = field_docs(cls)
    hints = typing.get_type_hints(cls)
    lines = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for field in attrs.fields(cls):
        annotation = hints.get(field.name, field.type)
        meaning = docs.get(field.name, "")
        lines.append(
            f"| `{field.name}` | `{_type_name(annotation)}` | `{_default_text(field)}` | {meaning.replace('|', '/')} |"
        )
    return lines


def _sections() -> list[tuple[str, type, str]]:
    hints = typing.get_type_hints(RunConfig)
    docs = field_docs(RunConfig)
    result: list[tuple[str, type, str]] = []
    for field in attrs.fields(RunConfig):
        annotation = hints[field.name]
        target = typing.get_args(annotation)[0] if typing.get_origin(annotation) is tuple else annotation
        if attrs.has(target) and target is not ComponentChoice:
            result.append((field.name, target, docs.get(field.name, "")))
    return result


_OVERRIDES_SECTION = (
    "## Lists, tables and strings on the command line",
    "",
    "An override's value is read as a TOML value when it is one and as a plain string otherwise, and",
    "the schema then types it. Overrides may come before or after a command's options, in any order",
    "(`debate eval run.toml --checkpoint runs/a evaluation.num_problems=10`); when a key is given twice,",
    "the last one counts. Quote a value that holds spaces or brackets for the shell.",
    "",
    "| you type | the key holds |",
    "|---|---|",
    '| `debate.coordinator.name=parallel` | the string `"parallel"` (no TOML quotes needed) |',
    '| `training.keep_best_by=direct/correct` | the string `"direct/correct"` (not TOML, so taken as it is) |',
    '| `logging.sinks=wandb` | `["wandb"]`: one value for a list key is a one-element list (the run directory '
    "still writes `metrics.jsonl`: sinks are extra destinations) |",
    '| `evaluation.modes=debate` | `["debate"]` |',
    '| `\'evaluation.modes=["direct", "debate"]\'` | both modes: a TOML list |',
    '| `\'logging.sinks={ name = "wandb", options = { project = "p" } }\'` | one sink with options: a TOML table |',
    "| `training.loss_fn_config.clip_low_threshold=0.8` | one key of a table, the others kept |",
    "| `reward.options.lambda_judge=1.5` | one option of a component |",
    "",
    'The same holds in a run file: a single value where a list is expected (`sinks = "wandb"`) is a',
    "one-element list.",
    "",
)
"""How overrides are read, on the reference page."""

_CONFIG_CHECK_SECTION = (
    "## What config check checks",
    "",
    "`debate config check FILE [overrides]` reads the file as every command does (schema, unknown keys,",
    "each component's options, the model's context), then checks what the run will need, and reports",
    "every problem at once, one line each, starting with its key path:",
    "",
    "- each dataset (`dataset`, `curriculum[i].dataset`) is built, and every split the run will read",
    "  is checked: `train` for the warm-start and each stage's RL iterations, `evaluation.split` when",
    "  the run evaluates. A dataset of local files reads each split as the run will (the file, the",
    "  package a `package:NAME` source names, every record, a test split that exists: the `jsonl`,",
    "  `gsm8k`, `math` and `aime2025` datasets); one on the Hugging Face hub checks that the `datasets`",
    "  library is installed and each split is named, without downloading; a plugin's dataset does what",
    "  its `check(splits)` does, and one without `check` has its problems of each split read;",
    "- each metric sink (`logging.sinks[i]`) is built, so a sink whose package is not installed says so;",
    "- with the `local` backend, `model.base_model` must be an embedded model, a GGUF file or a local",
    "  directory: a hub name such as `Qwen/Qwen3-8B` is refused here, as the backend would refuse it;",
    '  with `debate.renderer = "hf_chat_template"`, its tokenizer must have a chat template (a GGUF file\'s',
    "  `tokenizer.chat_template`, a model directory's `chat_template.jinja` or `tokenizer_config.json`'s",
    "  `chat_template`): a base model's file often has none, and `role_colon` is the renderer for it;",
    "- `model.init_from` must name trained weights (a run directory with an intact checkpoint, a manifest",
    "  or a backend training state);",
    "- `debate.num_agents` must be 2 or more when anything compares agents: RL iterations (the rewards",
    "  come from peer votes), a judge, evaluation debates, the judge benchmark or role-averaged evaluation.",
    "",
    "A run file whose first line starts with `# Needs:` names what it needs besides debate-core (a",
    "package to install, a file to bring); when the check fails, its last line repeats that line",
    "(`FILE: its first line says what it needs: ...`). Every file in `examples/` passes with what its",
    "first line names installed (`tests/meta/test_examples.py`, in the `real-model` tox environment, which",
    "installs them).",
    "",
    "`debate train` finds the same problems, every split it will read included, before it chooses or",
    "announces a run directory, and reads the splits again once its components are built (before the",
    "evaluation at the start, so no refusal waits for a trained step). A new run that fails before its first step (an",
    "error, Ctrl-C or SIGTERM) removes what it wrote in its run directory (`config.toml`,",
    "`plugins.json`, `environment.json`, its empty folders), its lock included, so the same `--run-dir`",
    "can be used again at once. A run that fails after a step checkpoints that step first.",
    "",
)
"""What ``debate config check`` checks beyond the schema, on the reference page."""


def config_reference_markdown() -> str:
    """The whole reference as Markdown."""
    out = [
        "# Configuration reference",
        "",
        "Generated by `debate config reference` from the attrs classes in `debate_core.config.sections`;",
        "`tests/meta/test_config_reference.py` keeps this page in step.",
        "",
        "A run file is TOML. Every key has a default, so an empty file is a valid run. Unknown keys are",
        "errors. Override any key on the command line with `section.key=value`. Every number, in the run",
        "file and in every component's options, must be finite: `inf` and `nan` are refused (an infinite",
        "learning rate passes every bound and then turns every weight into NaN). Run files, agents, rounds",
        "and tokens per turn have documented [limits](limits.md), each raised by an environment variable.",
        "",
        *_OVERRIDES_SECTION,
        *_CONFIG_CHECK_SECTION,
        "## Components",
        "",
        'A component is chosen by name, either `reward = "v2"` or a table with its own options:',
        "",
        "```toml",
        "[reward]",
        'name = "v2"',
        "[reward.options]",
        "lambda_judge = 1.5",
        "```",
        "",
        "The options are validated by the component's own options class (`debate plugins` lists the",
        "installed components; `debate config show FILE` prints every option with its default).",
        "",
    ]
    top_docs = field_docs(RunConfig)
    choices = [f for f in attrs.fields(RunConfig) if f.type in (ComponentChoice, "ComponentChoice")]
    out += ["| key | default | meaning |", "|---|---|---|"]
    for field in choices:
        out.append(f"| `{field.name}` | `{_default_text(field)}` | {top_docs.get(field.name, '')} |")
    out.append("")
    for name, cls, doc in _sections():
        header = f"## `[{name}]`" if name != "curriculum" else "## `[[curriculum]]`"
        out += [header, ""]
        class_doc = doc or (inspect.getdoc(cls) or "").split("\n\n")[0]
        if class_doc:
            out += [" ".join(class_doc.split()), ""]
        out += _table(cls)
        out.append("")
    return "\n".join(out)
