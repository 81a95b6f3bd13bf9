"""The names the command line offers, as plain data that needs neither TensorFlow nor Keras.

`--help` and a mistyped `--model` or `--split` are answered from here at once, where the
registry (`compgen_tf.registry`, which imports every model) and TFDS (`tfds_scan`) would
first import TensorFlow, 4 to 7 seconds. tests/test_cli.py checks every table against its
source: `MODELS` (each registered model, with its `trains_on`) and `TASKS` (the tasks of
the models that do not train on a SCAN split) against `compgen_tf.registry.MODELS`;
`SCAN_SPLITS`, `MT_SPLITS` and `COGS_SPLITS` against `tfds_scan.CONFIG_NAMES`,
`tfds_scan.MT_CONFIG_NAMES` and `tfds_scan.COGS_CONFIG_NAMES`, `VALIDATION_CARVES`
(`data.validation_carve`) against `tfds_scan.VALIDATION_CARVES`: a configuration is read
without importing `tfds_scan`, whose builders import TensorFlow. `TOY_PAIR_SPLITS` (the toy
task that the SCAN models train on as on a split), `STRATEGIES` (`--strategy`) and the
tuners of `tune` with their default budgets (`TUNERS`, `DEFAULT_MAX_TRIALS`,
`DEFAULT_MAX_EPOCHS`) are defined here and used by the registry,
`compgen_tf.training.distribute` and `compgen_tf.experiments.tune`.
"""

from __future__ import annotations

MODELS = {
    "seq2seq": "scan",
    "equivariant_seq2seq": "scan",
    "syntactic_attention": "scan",
    "counting_seq2seq": "scan",
    "transformer": "scan",
    "meta_seq2seq": "episodes",
    "symbol_convolution": "toy",
    "mlp_baseline": "toy",
    "recurrent_baseline": "toy",
    "stack_lstm": "toy",
    "lstm_baseline": "toy",
}
TASKS = {
    "meta_seq2seq": ("mutual_exclusivity", "add_jump_permutation", "add_jump_augmentation",
                     "around_right", "length", "add_jump_standard", "length_dev"),
    "symbol_convolution": ("rule_learning", "composition"),
    "mlp_baseline": ("rule_learning", "composition"),
    "recurrent_baseline": ("rule_learning", "composition"),
    "stack_lstm": ("palindromes", "palindromes_depth"),
    "lstm_baseline": ("palindromes", "palindromes_depth"),
}
SCAN_SPLITS = (
    "simple", "addprim_jump", "addprim_turn_left", "filler_num0", "filler_num1", "filler_num2",
    "filler_num3", "length", "template_around_right", "template_jump_around_right",
    "template_opposite_right", "template_right", "simple_p1", "simple_p2", "simple_p4",
    "simple_p8", "simple_p16", "simple_p32", "simple_p64",
    *(f"addprim_jump_num{n}_rep{r}" for n in (1, 2, 4, 8, 16, 32) for r in range(1, 6)),
    "addjump_dev_run", "addjump_dev_walk", "addjump_dev_look", "addjump_dev_turn_right",
    "length_dev", "length_dev_unseen_clause", "length_dev_opposite_thrice",
    "length_dev_opposite_thrice_longer", "around_right_dev_opposite_left",
    "scan_mcd1", "scan_mcd2", "scan_mcd3",
)
MT_SPLITS = ("mt_eng_fra", "mt_eng_fra_daxy", "mt_fra_eng", "mt_fra_eng_daxy")
TOY_PAIR_SPLITS = ("composition",)
COGS_SPLITS = ("cogs",)
SPLITS = SCAN_SPLITS + MT_SPLITS + TOY_PAIR_SPLITS + COGS_SPLITS
VALIDATION_CARVES = ("random", "tail")
STRATEGIES = ("default", "mirrored", "multi_worker")
# `--backend` of train, tune and reproduce: the Keras backends a run trains on (data and
# serving stay TensorFlow's on both).
BACKENDS = ("tensorflow", "jax")
TUNERS = ("hyperband", "random", "bayesian")
DEFAULT_MAX_TRIALS = 10
DEFAULT_MAX_EPOCHS = 27
