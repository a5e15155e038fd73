"""What the trainer offers a model judge: sampling policies of models the run's backend serves
(docs/rewards.md#a-stronger-judge-phased-out)."""

from __future__ import annotations

from pathlib import Path

import attrs

from debate_core.debate.sampling_policy import SamplingClientPolicy
from debate_core.errors import ComponentFailure
from debate_core.records import AgentPolicy, Renderer
from debate_core.runtime.session import BackendSession
from debate_core.training.run_components import RunComponents


@attrs.define
class BackendJudgeHost:
    """A ``JudgeHost`` over the run's backend session, with the run's renderer."""

    session: BackendSession
    components: RunComponents
    judge_dir: Path | None = None
    """The run directory's ``judges/`` folder."""

    async def sampling_policy(self, base_model: str, weights: str | None) -> tuple[AgentPolicy, Renderer]:
        """A sampling policy of ``base_model`` (or of the saved ``weights``), and its renderer."""
        service = self.session.service_client
        client = await self.session.call(
            f"create_sampling_client for the judge ({weights or base_model})",
            lambda: service.create_sampling_client(model_path=weights, base_model=base_model),
        )
        if self.components.renderer_for is None:
            raise ComponentFailure("the model judge needs the run's renderer, which was not built")
        renderer = self.components.renderer_for(client.get_tokenizer())
        return SamplingClientPolicy(client, renderer), renderer
