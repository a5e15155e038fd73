"""The contract suite of answer rules (docs/answer-rules.md): every rule answers every debate the
coordinators can produce (``CONTRACT_DEBATES``), the same every time, with one of the debate's own
answers, and never reads the ground truth."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from debate_core.records import AnswerRule, DebateAnswer, DebateRecord
from debate_core.testing.other_kind_contracts import ComponentContract
from debate_core.testing.reward_parser_contracts import CONTRACT_DEBATES, build_installed

__all__ = ["AnswerRuleContract", "InstalledAnswerRuleContract"]


def _boxed_reader(solution: str) -> str | None:
    from debate_core.tasks.answers import extract_last_boxed

    return extract_last_boxed(solution)


class AnswerRuleContract(ComponentContract):
    """An answer rule gives a well-formed ``DebateAnswer`` for every debate the coordinators can
    produce (``CONTRACT_DEBATES``: no turns, no votes, every turn failed, cycles, ties, ...), the
    same every time, one of the answers the debate's valid solutions give (or none when no turn
    followed the contract), and never reads the ground truth."""

    kind = "answer_rule"

    @staticmethod
    def _answer(rule: AnswerRule, record: DebateRecord, read: Callable[[str], str | None]) -> DebateAnswer:
        from debate_core.plugin import PluginCall, checked_debate_answer

        call = PluginCall("answer rule", "under test", "__call__", f"debate '{record.debate_id}'")
        return checked_debate_answer(call, lambda: rule(record, read))

    @pytest.mark.parametrize("reader", ["boxed", "none"])
    def test_answers_every_contract_debate(self, contract_component: AnswerRule, reader: str) -> None:
        from debate_core.records import answer_of

        read: Callable[[str], str | None] = _boxed_reader if reader == "boxed" else (lambda _s: None)
        for name, build in CONTRACT_DEBATES.items():
            record = build()
            answer = self._answer(contract_component, record, read)
            given = {answer_of(t.response.solution, read)[0] for t in record.turns if not t.failed}
            if not given:
                assert answer.answer is None, f"{name}: an answer {answer.answer!r} from a debate with no valid turn"
            else:
                assert answer.answer in given, f"{name}: {answer.answer!r} is no answer of the debate ({given})"
            assert self._answer(contract_component, record, read) == answer, f"{name}: not deterministic"

    def test_does_not_read_the_ground_truth(self, contract_component: AnswerRule) -> None:
        import attrs

        record = CONTRACT_DEBATES["graded"]()
        blind = attrs.evolve(record, answer=None, turns=tuple(attrs.evolve(t, grade=None) for t in record.turns))
        other = attrs.evolve(record, answer="-1")
        first = self._answer(contract_component, record, _boxed_reader)
        assert self._answer(contract_component, blind, _boxed_reader).answer == first.answer
        assert self._answer(contract_component, other, _boxed_reader).answer == first.answer


class InstalledAnswerRuleContract(AnswerRuleContract):
    """``AnswerRuleContract`` over every installed answer rule."""

    @pytest.fixture
    def contract_component(self, installed_answer_rule: str) -> AnswerRule:
        rule: AnswerRule = build_installed("answer_rule", installed_answer_rule)
        return rule
