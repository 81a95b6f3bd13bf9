"""Experiments: configurations, run directories, seeds, results files and searches.

- `config`: configuration files (`configs/<model>/<task>.json`, inheriting through "base").
- `run_config`: `RunConfig`, a run's configuration typed and resolved once (`DataConfig`,
  and `compgen_tf.training.settings.TrainingConfig`).
- `experiment`: `Experiment`, the one run of every kind (`train`, `evaluate`) and what the
  commands ask of a kind.
- `scan`, `episodes`, `toy`: how a run of each kind of task trains and is scored
  (a SCAN split, meta-learning episodes, a toy task of "Symmetry and systematicity");
  `kinds.experiment_for(model)`: the one of a registered model.
- `reproduce`: several seeds of any registered model, summarised in `results/`.
- `results`: the results files (every seed, mean ± std, median, min-max, n).
- `search_space`, `tune`: keras-tuner searches for any registered model (the search space
  file and its checks; the tuner, its trials and its report).
"""
