"""A TFDS builder for SCAN that needs no download.

Registered as ``offline_scan`` so that it never shadows the upstream ``scan`` builder, which
downloads the official files.
"""

from __future__ import annotations

import tensorflow_datasets as tfds

from tfds_scan import splits
from tfds_scan.local_code_path import LocalCodePath

# Also the source of the English-French set (offline_mt).
LAKE_BARONI_2018_CITATION = """\
@inproceedings{lake2018generalization,
  title={Generalization without Systematicity: On the Compositional Skills of
         Sequence-to-Sequence Recurrent Networks},
  author={Lake, Brenden and Baroni, Marco},
  booktitle={International Conference on Machine Learning},
  pages={2873--2882},
  year={2018}
}
"""

_DESCRIPTION = """\
SCAN (Lake & Baroni, 2018): translate navigation commands such as "jump twice after walk left"
into action sequences. Same splits, features and supervised keys as TFDS `scan`, plus the
official `simple_pX` size variations and `addprim_jump_numN_repR` splits, all regenerated
offline from the grammar and the official random choices, in official order and multiplicity.
Also development splits built from one official training file alone:
`addjump_dev_{run,walk,look,turn_right}` hold out another phrase the way add-jump holds out
`jump`; `length_dev` fits on outputs of at most 16 actions and tests on 18-22, and
`length_dev_unseen_clause` on at most 15 and 17-22; `length_dev_opposite_thrice` holds out
the clause `V opposite D thrice` as the length split holds out `V around D thrice`, and
`length_dev_opposite_thrice_longer` also cuts at 16 actions (test: the held-out ones above);
`around_right_dev_opposite_left` holds out `V opposite left` from the around-right training
file as around-right holds out `V around right`.
And the maximum-compound-divergence splits `scan_mcd1..3` of Keysers et al. (2020), as TFDS
`scan/mcd1..3` has them, in the published files' order.
Example keys are line indices within each split.
"""


class OfflineScan(LocalCodePath, tfds.core.GeneratorBasedBuilder):
    """SCAN splits generated offline, in official order and multiplicity.

    Example:
        >>> builder = OfflineScan(config="addprim_jump", data_dir="/tmp/tfds")
        >>> builder.download_and_prepare()
        >>> builder.info.splits["train"].num_examples
        14670
    """

    VERSION = tfds.core.Version("1.6.0")
    RELEASE_NOTES = {
        "1.0.0": (
            "Initial release: the 12 configs of TFDS `scan` (no mcd), simple_p{1..64} and "
            "addprim_jump_num{1..32}_rep{1..5}, built offline from the SCAN grammar."
        ),
        "1.1.0": (
            "Development splits addjump_dev_{run,walk,look,turn_right} and length_dev, "
            "built from one official training file alone; the official configs are unchanged."
        ),
        "1.2.0": (
            "Development split length_dev_unseen_clause (train: at most 15 actions, test: "
            "17-22); every other config is unchanged."
        ),
        "1.3.0": (
            "Development split length_dev_opposite_thrice (test: the length training commands "
            "with a clause `V opposite D thrice`); every other config is unchanged."
        ),
        "1.4.0": (
            "Development split length_dev_opposite_thrice_longer (length_dev_opposite_thrice "
            "with a cut: train at most 16 actions, test above); every other config is "
            "unchanged."
        ),
        "1.5.0": (
            "The maximum-compound-divergence splits scan_mcd1..3 (Keysers et al. 2020, TFDS "
            "scan/mcd1..3), from shipped command indices; every other config is unchanged."
        ),
        "1.6.0": (
            "Development split around_right_dev_opposite_left (from the template_around_right "
            "train file: test on its `V opposite left` commands); every other config is "
            "unchanged."
        ),
    }
    BUILDER_CONFIGS = [
        tfds.core.BuilderConfig(name=name, description=splits.CONFIG_DESCRIPTIONS[name])
        for name in splits.CONFIG_NAMES
    ]

    def _info(self) -> tfds.core.DatasetInfo:
        return tfds.core.DatasetInfo(
            builder=self,
            description=_DESCRIPTION,
            features=tfds.features.FeaturesDict(
                {"commands": tfds.features.Text(), "actions": tfds.features.Text()}
            ),
            supervised_keys=("commands", "actions"),
            homepage="https://github.com/brendenlake/SCAN",
            citation=LAKE_BARONI_2018_CITATION,
            # Without this TFDS reorders examples by hashed key when writing.
            disable_shuffling=True,
        )

    def _split_generators(self, dl_manager):
        del dl_manager  # everything is generated locally
        examples = splits.split_examples(self.builder_config.name)
        return {
            split: self._generate_examples(pairs) for split, pairs in examples.items()
        }

    def _generate_examples(self, pairs):
        for line, (command, actions) in enumerate(pairs):
            yield line, {"commands": command, "actions": actions}
