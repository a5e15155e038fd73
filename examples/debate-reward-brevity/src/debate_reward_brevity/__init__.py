"""A reward plugin in one file: agents with shorter solutions get higher rewards."""

import attrs

from debate_core import DebateRecord, RewardResult, RewardSpec, hookimpl


@attrs.frozen
class BrevityOptions:
    max_words: int = attrs.field(default=200, validator=attrs.validators.gt(0))


class Brevity:
    def __init__(self, options: BrevityOptions) -> None:
        self.max_words = options.max_words

    def __call__(self, debate: DebateRecord) -> RewardResult:
        rewards = []
        for agent in range(debate.num_agents):
            answered = [t for t in debate.turns_of(agent) if not t.failed]  # a parse error is no answer
            words = len(answered[-1].response.solution.split()) if answered else self.max_words
            rewards.append(1.0 - min(words, self.max_words) / self.max_words)
        return RewardResult(agent_rewards=rewards, metrics={"brevity/mean": sum(rewards) / len(rewards)})


@hookimpl
def debate_rewards():
    return [
        RewardSpec(name="brevity", description="shorter final solutions win", build=Brevity, options=BrevityOptions)
    ]
