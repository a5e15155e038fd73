"""The ``openai`` judge's answer cache: every answer it paid for, keyed by its request, in a JSON
Lines file that a resumed run reads again (so it does not pay twice).

A line is ``{"key": ..., "model": ..., "content": ...}``: the SHA-256 of the request as sent (the
model, the messages, the token limit, the temperature and the seed; not the URL, nor any key)
and the reply's text. Lines are appended as answers arrive; a damaged line (a process killed
while writing it) is skipped when the file is read, and counted.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from debate_core import DebateError


def request_key(request: Mapping[str, Any]) -> str:
    """The cache key of a request: the SHA-256 of its canonical JSON."""
    canonical = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """Answers by request key, in memory, and in ``path`` when there is one."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.answers: dict[str, str] = {}
        self.damaged_lines = 0
        if path is not None and path.is_file():
            self._read(path)

    def _read(self, path: Path) -> None:
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError as exc:
            raise DebateError(f"judge 'openai': cannot read its cache {path}: {exc.strerror or exc}") from None
        for line in lines:
            try:
                entry = json.loads(line)
                key, content = entry["key"], entry["content"]
            except (ValueError, KeyError, TypeError):
                self.damaged_lines += 1
                continue
            if isinstance(key, str) and isinstance(content, str):
                self.answers[key] = content
            else:
                self.damaged_lines += 1

    def get(self, key: str) -> str | None:
        """The cached answer to the request ``key``, None when there is none."""
        return self.answers.get(key)

    def put(self, key: str, model: str, content: str) -> None:
        """Keep an answer, appending it to the file (made with its folder when missing)."""
        self.answers[key] = content
        if self.path is None:
            return
        line = json.dumps({"key": key, "model": model, "content": content}, ensure_ascii=False) + "\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as file:
                file.write(line)
        except OSError as exc:
            raise DebateError(f"judge 'openai': cannot write its cache {self.path}: {exc.strerror or exc}") from None
