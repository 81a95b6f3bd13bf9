"""A TFDS builder for the English–French set of Lake & Baroni (2018), from the shipped files."""

from __future__ import annotations

import tensorflow_datasets as tfds

from tfds_scan import mt
from tfds_scan.local_code_path import LocalCodePath
from tfds_scan.offline_scan import LAKE_BARONI_2018_CITATION

_CITATION = LAKE_BARONI_2018_CITATION + """\
@inproceedings{russin2020factorizing,
  title={Compositional generalization by factorizing alignment and translation},
  author={Russin, Jacob and Jo, Jason and O'Reilly, Randall C and Bengio, Yoshua},
  booktitle={Proceedings of the 58th Annual Meeting of the ACL: Student Research Workshop},
  year={2020}
}
"""


class OfflineMT(LocalCodePath, tfds.core.GeneratorBasedBuilder):
    """Short English–French sentence pairs, with and without the daxy copies, both directions.

    Features: `source` and `target` (space-separated, lower-cased tokens). Configs:
    `mt_eng_fra`, `mt_eng_fra_daxy`, `mt_fra_eng`, `mt_fra_eng_daxy` (see `tfds_scan.mt`).
    Splits: `train`, `test` and `daxy`, in file order; example keys are line indices.

    Example:
        >>> builder = OfflineMT(config="mt_eng_fra", data_dir="/tmp/tfds")
        >>> builder.download_and_prepare()
        >>> builder.info.splits["train"].num_examples
        9999
    """

    VERSION = tfds.core.Version("1.0.0")
    RELEASE_NOTES = {"1.0.0": "Initial release, from the files shipped in tfds_scan/data/mt."}
    BUILDER_CONFIGS = [tfds.core.BuilderConfig(name=name, description=text)
                       for name, text in mt.CONFIG_DESCRIPTIONS.items()]

    def _info(self) -> tfds.core.DatasetInfo:
        return tfds.core.DatasetInfo(
            builder=self,
            description=("English-French pairs of Lake & Baroni (2018, Sec. 5), the "
                         "translation set of Russin et al. (2020)."),
            features=tfds.features.FeaturesDict(
                {"source": tfds.features.Text(), "target": tfds.features.Text()}),
            supervised_keys=("source", "target"),
            citation=_CITATION,
            disable_shuffling=True,  # file order is part of the contract
        )

    def _split_generators(self, dl_manager):
        del dl_manager  # the files ship with the package
        examples = mt.mt_examples(self.builder_config.name)
        return {split: self._generate_examples(pairs) for split, pairs in examples.items()}

    def _generate_examples(self, pairs):
        for line, (source, target) in enumerate(pairs):
            yield line, {"source": source, "target": target}
