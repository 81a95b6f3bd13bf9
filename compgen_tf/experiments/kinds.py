"""The `Experiment` of each kind of experiment that the registry names.

`compgen_tf.registry` is data: each `ModelSpec` names the kind of experiment that trains the
model (`trains_on`), and this module maps that name to the object that configures, trains,
scores and reports its runs.
"""

from __future__ import annotations

from compgen_tf import registry


def experiment_for(model):
    """The `Experiment` of `model`: a registered name or a `registry.ModelSpec`; an unknown
    name is a ValueError listing the known ones.

    Example:
        >>> experiment_for("seq2seq").kind
        'scan'
    """
    spec = registry.spec(model) if isinstance(model, str) else model
    if spec.trains_on == "scan":
        from compgen_tf.experiments.scan import SCAN
        return SCAN
    if spec.trains_on == "episodes":
        from compgen_tf.experiments.episodes import EPISODES
        return EPISODES
    if spec.trains_on == "toy":
        from compgen_tf.experiments.toy import TOY
        return TOY
    raise ValueError(f"model {spec.name!r}: unknown kind of experiment {spec.trains_on!r}")
