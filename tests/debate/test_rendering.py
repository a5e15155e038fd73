"""Renderers and stop conditions (docs/protocol.md#renderers-and-stop-conditions)."""

from __future__ import annotations

from typing import Any

import pytest

from debate_core.builtin.renderers import debate_renderers
from debate_core.debate.rendering import (
    ChatTemplateOptions,
    ChatTemplateRenderer,
    RoleColonOptions,
    RoleColonRenderer,
    sampling_stop,
)
from debate_core.debate.xml_parser import XML_CONTRACT
from debate_core.records import Message, StopCondition
from debate_core.testing.scripted_debate import scripted_setup
from debate_core.testing.tokenizer import ByteTokenizer

from .helpers import QWEN_LIKE_TEMPLATE, QwenLikeTokenizer

CONTRACT_STOP = XML_CONTRACT.stop_marker

CHAT = [Message("system", "S"), Message("user", "Q"), Message("assistant", " A1"), Message("user", "U2")]


class BosByteTokenizer(ByteTokenizer):
    bos_token_id = 257


def test_role_colon_layout() -> None:
    tok = ByteTokenizer()
    renderer = RoleColonRenderer(tok)
    text = tok.decode(renderer.build_prompt(CHAT))
    assert text == "System: S\n\nUser: Q\n\nAssistant: A1\n\nUser: U2\n\nAssistant:"


def test_role_colon_bos_only_when_the_tokenizer_has_one() -> None:
    assert RoleColonRenderer(BosByteTokenizer()).build_prompt(CHAT)[0] == 257
    assert RoleColonRenderer(BosByteTokenizer(), RoleColonOptions(add_bos=False)).build_prompt(CHAT)[0] != 257


def test_string_stops_get_the_contract_stop_appended_once() -> None:
    renderer = RoleColonRenderer(ByteTokenizer(), RoleColonOptions(stop_strings=("\nUser:", CONTRACT_STOP, "\nUser:")))
    assert sampling_stop(renderer, XML_CONTRACT) == StopCondition(strings=("\nUser:", CONTRACT_STOP))
    assert sampling_stop(RoleColonRenderer(ByteTokenizer()), XML_CONTRACT).strings == ("\nUser:", CONTRACT_STOP)


def test_stop_condition_never_mixes_kinds() -> None:
    with pytest.raises(ValueError, match="not both"):
        StopCondition(token_ids=(1,), strings=("x",))


def test_chat_template_token_stops_are_reused_unchanged() -> None:
    renderer = ChatTemplateRenderer(QwenLikeTokenizer())
    stop = sampling_stop(renderer, XML_CONTRACT)
    assert stop.token_ids == (301,) and stop.strings == ()
    extra = ChatTemplateRenderer(QwenLikeTokenizer(), ChatTemplateOptions(extra_stop_tokens=("<|im_start|>",)))
    assert sampling_stop(extra, XML_CONTRACT).token_ids == (301, 300)
    with pytest.raises(ValueError, match="not a token"):
        ChatTemplateRenderer(QwenLikeTokenizer(), ChatTemplateOptions(extra_stop_tokens=("<nope>",)))


def test_chat_template_without_eos_falls_back_to_string_stops() -> None:
    tok = QwenLikeTokenizer()
    tok.eos_token_id = None  # type: ignore[assignment]
    assert sampling_stop(ChatTemplateRenderer(tok), XML_CONTRACT) == StopCondition(strings=(CONTRACT_STOP,))


def test_chat_template_keeps_the_sampled_empty_think_block_in_history() -> None:
    tok = QwenLikeTokenizer()
    renderer = ChatTemplateRenderer(tok, ChatTemplateOptions(enable_thinking=False))
    first = renderer.build_prompt(CHAT[:2])
    assert tok.decode(first).endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    action = [*tok.encode(" A1"), tok.eos_token_id]
    assert renderer.decode(action) == " A1"
    second = renderer.build_prompt(CHAT)
    assert second[: len(first) + len(action)] == first + action
    # the template alone would have dropped the think block of the earlier turn
    assert "<think>" not in tok.apply_chat_template(
        [{"role": "assistant", "content": " A1"}], add_generation_prompt=False
    )


def test_chat_template_moves_the_system_prompt_when_asked() -> None:
    tok = QwenLikeTokenizer()
    renderer = ChatTemplateRenderer(tok, ChatTemplateOptions(system_role=False))
    text = tok.decode(renderer.build_prompt(CHAT[:2]))
    assert text == "<|im_start|>user\nS\n\nQ<|im_end|>\n<|im_start|>assistant\n"


def test_chat_template_needs_a_template() -> None:
    with pytest.raises(TypeError, match="apply_chat_template"):
        ChatTemplateRenderer(ByteTokenizer())


def test_plugins_build_factories_of_renderers() -> None:
    specs = {s.name: s for s in debate_renderers()}
    assert set(specs) == {"role_colon", "hf_chat_template"}
    assert isinstance(specs["role_colon"].make()(ByteTokenizer()), RoleColonRenderer)
    built = specs["hf_chat_template"].make(ChatTemplateOptions(enable_thinking=False))(QwenLikeTokenizer())
    assert isinstance(built, ChatTemplateRenderer) and built.options.enable_thinking is False


def _bpe_tokenizer() -> Any:
    pytest.importorskip("transformers")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    corpus = ["<solution>42</solution> <evaluation>Agent 1 is right</evaluation> Round of the debate"] * 20
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    core.train_from_iterator(corpus, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>", chat_template=QWEN_LIKE_TEMPLATE)


@pytest.mark.parametrize("name", ["hf_chat_template", "role_colon"])
def test_real_bpe_tokenizer_debate_is_one_sequence_per_agent(name: str) -> None:
    from debate_core.debate.history_policies import AllRounds
    from debate_core.testing.scripted_debate import run_scripted_debate, run_sync

    from .helpers import count_sequences, response

    tok = _bpe_tokenizer()
    renderer: Any = (
        ChatTemplateRenderer(tok, ChatTemplateOptions(enable_thinking=False))
        if name == "hf_chat_template"
        else RoleColonRenderer(tok)
    )
    setup = scripted_setup(3, 3, history=AllRounds(), renderer=renderer)
    texts = [response(str(40 + k), ["Agent 0 > Agent 1"] if k % 3 == 2 else ()) for k in range(9)]
    episode = run_sync(run_scripted_debate(texts, 3, setup=setup))
    assert len(episode.record.turns) == 9 and not episode.record.aborted
    assert [t.response.solution for t in episode.record.turns] == [str(40 + k) for k in range(9)]
    assert [count_sequences(t.transitions) for t in episode.trajectories] == [1, 1, 1]
    if name == "hf_chat_template":
        prompt = tok.decode(list(episode.trajectories[0].transitions[2].observation))
        assert prompt.count("<think>\n\n</think>") == 3
