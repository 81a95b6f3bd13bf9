"""A finished translation run's kept model and one part of its split, for the analyses of
issue 73 (`eos_decisions`, `source_dependence`)."""

from __future__ import annotations


def attention_model_and_part(run_dir, part: str):
    """`(config, model, split)`: a finished translation run's config, its kept model and the
    `part` of its split encoded for it (a word training never saw as `<unk>`, the row kept,
    as the run's scoring does).

    Raises:
        AnalysisError: the run is not on a translation split, or its model has no attention
            (`attention_weights`).
    """
    from compgen_tf.analysis.errors import AnalysisError
    from compgen_tf.experiments.experiment import load_run_model, run_config
    from compgen_tf.experiments.scan import is_translation, split_examples
    from compgen_tf.training.data import encode_split

    config = run_config(run_dir)
    if not is_translation(config["split"]):
        raise AnalysisError(f"{run_dir}: a run on {config['split']!r}, not a translation split")
    model = load_run_model(run_dir)
    if not hasattr(model, "attention_weights"):
        raise AnalysisError(f"{run_dir}: its model ({type(model).__name__}) has no attention")
    split = encode_split(model, split_examples(config["split"], part, config.get("data"),
                                               config.get("seed", 0)), unknown_words="unk")
    return config, model, split
